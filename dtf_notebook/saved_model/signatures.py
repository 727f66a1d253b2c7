"""``SignatureDef``s: a served graph's named inputs and outputs (TF1's ``signature_def_utils`` and ``utils``).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default() as g:
    ...     x = tf.placeholder(tf.float32, [None, 3], name="x")
    ...     y = tf.identity(x * 2.0, name="y")
    ...     signature = predict_signature_def({"x": x}, {"y": y})
    ...     get_tensor_from_tensor_info(signature.outputs["y"]) is y
    True
    >>> signature.method_name, signature.inputs["x"].name, is_valid_signature(signature)
    ('tensorflow/serving/predict', 'x:0', True)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.graph import get_default_graph
from dtf_notebook.framework.sparse_tensor import SparseTensor
from dtf_notebook.framework.tensor_proto import shape_proto
from dtf_notebook.framework.tensor_tools import make_tensor_proto
from dtf_notebook.protos.graph_pb import SignatureDef, TensorInfo
from dtf_notebook.saved_model import constants

__all__ = [
    "build_signature_def",
    "build_tensor_info",
    "classification_signature_def",
    "get_tensor_from_tensor_info",
    "is_valid_signature",
    "predict_signature_def",
    "regression_signature_def",
]


def build_tensor_info(tensor: Any) -> Any:
    """The ``TensorInfo`` of a tensor (its name, dtype and static shape) or of a ``SparseTensor`` (its three
    tensors' names).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     info = build_tensor_info(tf.placeholder(tf.int64, [None, 2], name="ids"))
        >>> info.name, info.dtype, [d.size for d in info.tensor_shape.dim]
        ('ids:0', 9, [-1, 2])
    """
    shape = tensor.get_shape() if hasattr(tensor, "get_shape") else tensor.shape
    info = TensorInfo(dtype=dtypes.as_dtype(tensor.dtype).as_datatype_enum)
    info.tensor_shape.CopyFrom(shape_proto(shape.as_list() if shape.ndims is not None else None))
    if isinstance(tensor, SparseTensor):
        info.coo_sparse.values_tensor_name = tensor.values.name
        info.coo_sparse.indices_tensor_name = tensor.indices.name
        info.coo_sparse.dense_shape_tensor_name = tensor.dense_shape.name
    else:
        info.name = tensor.name
    return info


def get_tensor_from_tensor_info(tensor_info: Any, graph: Any = None, import_scope: str | None = None) -> Any:
    """The tensor (or ``SparseTensor``) a ``TensorInfo`` names in ``graph`` (default: the default graph).

    Raises:
        KeyError: the graph has no such tensor.
        ValueError: the ``TensorInfo`` names no tensor.
    """
    graph = graph if graph is not None else get_default_graph()
    scope = import_scope.rstrip("/") + "/" if import_scope else ""

    def tensor(name: str) -> Any:
        return graph.get_tensor_by_name(scope + name)

    kind = tensor_info.WhichOneof("encoding")
    if kind == "name":
        return tensor(tensor_info.name)
    if kind == "coo_sparse":
        sparse = tensor_info.coo_sparse
        return SparseTensor(
            tensor(sparse.indices_tensor_name),
            tensor(sparse.values_tensor_name),
            tensor(sparse.dense_shape_tensor_name),
        )
    raise ValueError(f"Invalid TensorInfo.encoding: {kind}")


def build_signature_def(
    inputs: Mapping[str, Any] | None = None,
    outputs: Mapping[str, Any] | None = None,
    method_name: str | None = None,
    defaults: Mapping[str, Any] | None = None,
) -> Any:
    """A ``SignatureDef`` of ``TensorInfo`` maps (name -> ``TensorInfo``), a method name, and default values of
    inputs (name -> value, stored as ``TensorProto``s)."""
    signature = SignatureDef()
    for key, value in (defaults or {}).items():
        signature.defaults[key].CopyFrom(make_tensor_proto(value))
    for key, info in (inputs or {}).items():
        signature.inputs[key].CopyFrom(info)
    for key, info in (outputs or {}).items():
        signature.outputs[key].CopyFrom(info)
    if method_name is not None:
        signature.method_name = method_name
    return signature


def predict_signature_def(inputs: Mapping[str, Any], outputs: Mapping[str, Any]) -> Any:
    """A Predict ``SignatureDef`` of named input and output tensors.

    Raises:
        ValueError: ``inputs`` or ``outputs`` is empty or not a dict.
    """
    if not inputs or not isinstance(inputs, Mapping):
        raise ValueError("Prediction inputs cannot be None or empty.")
    if not outputs or not isinstance(outputs, Mapping):
        raise ValueError("Prediction outputs cannot be None or empty.")
    return build_signature_def(
        {k: build_tensor_info(t) for k, t in inputs.items()},
        {k: build_tensor_info(t) for k, t in outputs.items()},
        constants.PREDICT_METHOD_NAME,
    )


def classification_signature_def(examples: Any, classes: Any, scores: Any) -> Any:
    """A Classify ``SignatureDef``: serialized ``tf.Example`` strings in, class names and/or scores out.

    Raises:
        ValueError: ``examples`` is not a string tensor, neither output is given, or one has the wrong dtype.
    """
    if examples is None or examples.dtype != dtypes.string:
        raise ValueError("Classification examples must be a string Tensor.")
    if classes is None and scores is None:
        raise ValueError("Classification classes and scores cannot both be None.")
    outputs = {}
    if classes is not None:
        if classes.dtype != dtypes.string:
            raise ValueError("Classification classes must be a string Tensor.")
        outputs[constants.CLASSIFY_OUTPUT_CLASSES] = build_tensor_info(classes)
    if scores is not None:
        if not scores.dtype.is_floating:
            raise ValueError("Classification scores must be a float Tensor.")
        outputs[constants.CLASSIFY_OUTPUT_SCORES] = build_tensor_info(scores)
    inputs = {constants.CLASSIFY_INPUTS: build_tensor_info(examples)}
    return build_signature_def(inputs, outputs, constants.CLASSIFY_METHOD_NAME)


def regression_signature_def(examples: Any, predictions: Any) -> Any:
    """A Regress ``SignatureDef``: serialized ``tf.Example`` strings in, float predictions out.

    Raises:
        ValueError: ``examples`` is not a string tensor or ``predictions`` not a float one.
    """
    if examples is None or examples.dtype != dtypes.string:
        raise ValueError("Regression examples must be a string Tensor.")
    if predictions is None or not predictions.dtype.is_floating:
        raise ValueError("Regression output must be a float Tensor.")
    return build_signature_def(
        {constants.REGRESS_INPUTS: build_tensor_info(examples)},
        {constants.REGRESS_OUTPUTS: build_tensor_info(predictions)},
        constants.REGRESS_METHOD_NAME,
    )


def is_valid_signature(signature_def: Any) -> bool:
    """Whether ``signature_def`` is a well-formed Predict, Classify or Regress signature (TF's checks; any other
    method is not valid)."""
    if signature_def is None or not signature_def.method_name:
        return False
    method = signature_def.method_name
    if method == constants.PREDICT_METHOD_NAME:
        return bool(signature_def.inputs) and bool(signature_def.outputs)
    string = dtypes.string.as_datatype_enum
    if method == constants.CLASSIFY_METHOD_NAME:
        inputs, outputs = signature_def.inputs, signature_def.outputs
        if set(inputs) != {constants.CLASSIFY_INPUTS} or inputs[constants.CLASSIFY_INPUTS].dtype != string:
            return False
        allowed = {constants.CLASSIFY_OUTPUT_CLASSES, constants.CLASSIFY_OUTPUT_SCORES}
        if not outputs or not set(outputs) <= allowed:
            return False
        classes = outputs.get(constants.CLASSIFY_OUTPUT_CLASSES)
        scores = outputs.get(constants.CLASSIFY_OUTPUT_SCORES)
        if classes is not None and classes.dtype != string:
            return False
        return scores is None or dtypes.as_dtype(scores.dtype).is_floating
    if method == constants.REGRESS_METHOD_NAME:
        inputs, outputs = signature_def.inputs, signature_def.outputs
        if set(inputs) != {constants.REGRESS_INPUTS} or inputs[constants.REGRESS_INPUTS].dtype != string:
            return False
        if set(outputs) != {constants.REGRESS_OUTPUTS}:
            return False
        return dtypes.as_dtype(outputs[constants.REGRESS_OUTPUTS].dtype).is_floating
    return False
