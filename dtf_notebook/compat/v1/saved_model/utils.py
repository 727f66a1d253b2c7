"""``tf.saved_model.utils``: ``TensorInfo`` of a tensor and back."""

from dtf_notebook.saved_model.signatures import build_tensor_info, get_tensor_from_tensor_info

__all__ = ["build_tensor_info", "get_tensor_from_tensor_info"]
