"""``tf.saved_model.tag_constants``: the tags of a meta graph."""

from dtf_notebook.saved_model.constants import EVAL, GPU, SERVING, TPU, TRAINING

__all__ = ["EVAL", "GPU", "SERVING", "TPU", "TRAINING"]
