"""``tf.saved_model.main_op``: the op a loader runs after restoring."""

from dtf_notebook.saved_model.builder import main_op, main_op_with_restore

__all__ = ["main_op", "main_op_with_restore"]
