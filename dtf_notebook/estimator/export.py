"""``tf.estimator.export``: what an Estimator's exported SavedModel takes in (serving input receivers) and gives out
(export outputs, one ``SignatureDef`` each).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     fn = build_raw_serving_input_receiver_fn({"x": tf.placeholder(tf.float32, [None, 3])})
    ...     receiver = fn()
    ...     signature = PredictOutput({"y": receiver.features["x"] * 2.0}).as_signature_def(receiver.receiver_tensors)
    >>> sorted(signature.inputs), sorted(signature.outputs), signature.method_name
    (['x'], ['y'], 'tensorflow/serving/predict')
"""

from __future__ import annotations

import abc
import collections
from collections.abc import Mapping
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import placeholder_ops
from dtf_notebook.ops.io.parsing_ops import parse_example
from dtf_notebook.saved_model import constants
from dtf_notebook.saved_model.signatures import (
    build_signature_def,
    build_tensor_info,
    classification_signature_def,
    regression_signature_def,
)

__all__ = [
    "ClassificationOutput",
    "ExportOutput",
    "PredictOutput",
    "RegressionOutput",
    "ServingInputReceiver",
    "TensorServingInputReceiver",
    "build_parsing_serving_input_receiver_fn",
    "build_raw_serving_input_receiver_fn",
]


def _named(value: Any, default: str, what: str) -> dict[str, Any]:
    mapping = dict(value) if isinstance(value, Mapping) else {default: value}
    for key, tensor in mapping.items():
        if not isinstance(key, str):
            raise ValueError(f"{what} keys must be strings: {key!r}")
        if not isinstance(tensor, Tensor) and not hasattr(tensor, "indices"):
            raise ValueError(f"{what} must be Tensors or SparseTensors: {what}[{key!r}] is {tensor!r}")
    return mapping


# ---- serving inputs ---------------------------------------------------------------------------------
_Receiver = collections.namedtuple("_Receiver", ["features", "receiver_tensors", "receiver_tensors_alternatives"])


class ServingInputReceiver(_Receiver):
    """The features a served model's ``model_fn`` gets and the tensors a request feeds (``receiver_tensors``);
    a lone tensor becomes ``{"feature": t}`` and ``{"input": t}``."""

    def __new__(cls, features: Any, receiver_tensors: Any, receiver_tensors_alternatives: Any = None):
        if features is None:
            raise ValueError("features must be defined.")
        features = _named(features, "feature", "features")
        receiver_tensors = _named(receiver_tensors, "input", "receiver_tensors")
        alternatives = {
            name: _named(tensors, "input", f"receiver_tensors_alternatives[{name!r}]")
            for name, tensors in (receiver_tensors_alternatives or {}).items()
        }
        return super().__new__(cls, features, receiver_tensors, alternatives or None)


class TensorServingInputReceiver(_Receiver):
    """A receiver whose ``features`` is one tensor, passed to ``model_fn`` as it is (not in a dict)."""

    def __new__(cls, features: Any, receiver_tensors: Any, receiver_tensors_alternatives: Any = None):
        if not isinstance(features, Tensor):
            raise ValueError(f"features must be a Tensor, given: {features!r}")
        receiver = ServingInputReceiver({"feature": features}, receiver_tensors, receiver_tensors_alternatives)
        return super().__new__(cls, features, receiver.receiver_tensors, receiver.receiver_tensors_alternatives)


def build_parsing_serving_input_receiver_fn(feature_spec: Mapping[str, Any], default_batch_size: int | None = None):
    """A receiver fn for serialized ``tf.Example``s (``examples``, a string vector) parsed with ``feature_spec``."""

    def serving_input_receiver_fn() -> ServingInputReceiver:
        serialized = placeholder_ops.placeholder(dtypes.string, [default_batch_size], name="input_example_tensor")
        features = parse_example(serialized, feature_spec)
        return ServingInputReceiver(features, {"examples": serialized})

    return serving_input_receiver_fn


def build_raw_serving_input_receiver_fn(features: Any, default_batch_size: int | None = None):
    """A receiver fn feeding each feature directly: one placeholder per feature, its dtype and its shape after the
    batch dimension (``default_batch_size`` or unknown)."""

    def serving_input_receiver_fn() -> ServingInputReceiver:
        named = _named(features, "feature", "features")
        receivers = {}
        for name, tensor in named.items():
            shape = [default_batch_size] + tensor.shape.as_list()[1:] if tensor.shape.ndims else None
            receivers[name] = placeholder_ops.placeholder(tensor.dtype, shape, name=name)
        if isinstance(features, Tensor):
            return TensorServingInputReceiver(receivers["feature"], receivers)
        return ServingInputReceiver(receivers, receivers)

    return serving_input_receiver_fn


# ---- outputs ------------------------------------------------------------------------------------------
class ExportOutput(abc.ABC):
    """An output of an exported model, as one ``SignatureDef`` (see the subclasses)."""

    @abc.abstractmethod
    def as_signature_def(self, receiver_tensors: Mapping[str, Any]) -> Any:
        """The ``SignatureDef`` serving this output from ``receiver_tensors``."""


class PredictOutput(ExportOutput):
    """Any named tensors (a lone tensor is ``{"output": t}``), served by the Predict API."""

    def __init__(self, outputs: Any) -> None:
        self.outputs = _named(outputs, "output", "outputs")

    def as_signature_def(self, receiver_tensors: Mapping[str, Any]) -> Any:
        return build_signature_def(
            {k: build_tensor_info(t) for k, t in receiver_tensors.items()},
            {k: build_tensor_info(t) for k, t in self.outputs.items()},
            constants.PREDICT_METHOD_NAME,
        )


def _one_string_input(receiver_tensors: Mapping[str, Any], api: str) -> Any:
    if len(receiver_tensors) != 1:
        raise ValueError(
            f"{api} signatures take exactly one input, serialized Examples; got {sorted(receiver_tensors)}"
        )
    (examples,) = receiver_tensors.values()
    if examples.dtype != dtypes.string:
        raise ValueError(f"{api} signatures take serialized Examples (a string Tensor), got {examples.dtype.name}")
    return examples


class ClassificationOutput(ExportOutput):
    """Class ``scores`` (float) and/or ``classes`` (string), served by the Classify API."""

    def __init__(self, scores: Any = None, classes: Any = None) -> None:
        if scores is None and classes is None:
            raise ValueError("At least one of scores and classes must be set.")
        self.scores, self.classes = scores, classes

    def as_signature_def(self, receiver_tensors: Mapping[str, Any]) -> Any:
        examples = _one_string_input(receiver_tensors, "Classification")
        return classification_signature_def(examples, self.classes, self.scores)


class RegressionOutput(ExportOutput):
    """One float ``value`` per example, served by the Regress API."""

    def __init__(self, value: Any) -> None:
        if not isinstance(value, Tensor) or not value.dtype.is_floating:
            raise ValueError(f"Regression output value must be a float32 Tensor; got {value!r}")
        self.value = value

    def as_signature_def(self, receiver_tensors: Mapping[str, Any]) -> Any:
        return regression_signature_def(_one_string_input(receiver_tensors, "Regression"), self.value)
