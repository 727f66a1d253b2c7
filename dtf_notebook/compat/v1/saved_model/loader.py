"""``tf.saved_model.loader``: ``load`` and ``maybe_saved_model_directory``."""

from dtf_notebook.saved_model.loader import load, maybe_saved_model_directory

__all__ = ["load", "maybe_saved_model_directory"]
