"""``tf.saved_model.builder``: ``SavedModelBuilder``."""

from dtf_notebook.saved_model.builder import SavedModelBuilder

__all__ = ["SavedModelBuilder"]
