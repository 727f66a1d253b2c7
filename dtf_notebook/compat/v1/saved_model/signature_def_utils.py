"""``tf.saved_model.signature_def_utils``: building and checking ``SignatureDef``s."""

from dtf_notebook.saved_model.signatures import (
    build_signature_def,
    classification_signature_def,
    is_valid_signature,
    predict_signature_def,
    regression_signature_def,
)

__all__ = [
    "build_signature_def",
    "classification_signature_def",
    "is_valid_signature",
    "predict_signature_def",
    "regression_signature_def",
]
