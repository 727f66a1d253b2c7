"""The canned estimators' heads: from logits and labels to the loss, predictions, metrics and train op of an
``EstimatorSpec`` (TF1's ``head.py``: softmax cross-entropy for several classes, sigmoid for two, squared error for
regression), with TF1's keys and its default loss reduction (the weighted SUM over the batch).

Example:
    >>> head = binary_or_multi_class_head(3)
    >>> head.logits_dimension, type(head).__name__
    (3, 'MultiClassHead')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook.estimator.export import ClassificationOutput, PredictOutput, RegressionOutput
from dtf_notebook.estimator.model_fn import EstimatorSpec, ModeKeys
from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.sparse_tensor import SparseTensor
from dtf_notebook.ops.array.concat_split import concat
from dtf_notebook.ops.array.fill import ones_like, zeros_like
from dtf_notebook.ops.array.pack import stack
from dtf_notebook.ops.array.pad_tile import tile
from dtf_notebook.ops.array.reshape import expand_dims, reshape
from dtf_notebook.ops.array.shape_ops import shape
from dtf_notebook.ops.lookup.index_tables import index_table_from_tensor
from dtf_notebook.ops.losses.losses_impl import Reduction, compute_weighted_loss
from dtf_notebook.ops.math.arg_reduce import argmax
from dtf_notebook.ops.math.cast import cast
from dtf_notebook.ops.math.range import range as math_range
from dtf_notebook.ops.math.reduce import reduce_max, reduce_sum
from dtf_notebook.ops.math.unary import sigmoid
from dtf_notebook.ops.metrics import accuracy, auc, mean, precision, recall
from dtf_notebook.ops.nn.losses import sigmoid_cross_entropy_with_logits
from dtf_notebook.ops.nn.softmax import softmax
from dtf_notebook.ops.nn.softmax_cross_entropy import sparse_softmax_cross_entropy_with_logits
from dtf_notebook.ops.strings.conversion import as_string
from dtf_notebook.summary import summary_ops
from dtf_notebook.train.training_util import get_global_step

__all__ = ["MultiClassHead", "BinaryClassHead", "RegressionHead", "binary_or_multi_class_head"]

# TF1's keys of a head's export outputs (``SERVING_DEFAULT`` is the signature a server uses when none is named).
SERVING_DEFAULT, CLASSIFY, REGRESS, PREDICT = "serving_default", "classification", "regression", "predict"


def _summary_key(head_name: str | None, key: str) -> str:
    return f"{key}/{head_name}" if head_name else key


def _labels_2d(labels: Any, logits: Any, dimension: int) -> Any:
    """Dense labels ``[batch, dimension]`` (a ``[batch]`` vector gains its last axis)."""
    if labels is None:
        raise ValueError(
            "You must provide a labels Tensor. Given: None. Suggested troubleshooting steps: Check that your data "
            "contain your label feature. Check that your input_fn properly parses and returns labels."
        )
    if isinstance(labels, SparseTensor):
        raise ValueError(f"SparseTensor labels are not supported. labels: {labels}")
    labels = convert_to_tensor(labels)
    if labels.shape.ndims == 1:
        labels = expand_dims(labels, -1)
    static = labels.shape.dims[-1].value if labels.shape.ndims else None
    if static is not None and static != dimension:
        raise ValueError(
            f"Mismatched label shape. Expected labels dimension={dimension}.  Received {static}. "
            f"Suggested Fix: check your n_classes argument to the estimator and/or the shape of your label."
        )
    return labels


def _weights(features: dict[str, Any], weight_column: Any, logits: Any) -> Any:
    if weight_column is None:
        return 1.0
    key = weight_column if isinstance(weight_column, str) else weight_column.key
    if key not in features:
        raise ValueError(f"Weight column {key} is not in features.")
    weights = cast(convert_to_tensor(features[key]), dtypes.float32)
    return expand_dims(weights, -1) if weights.shape.ndims == 1 else weights


def _all_class_ids_and_classes(logits: Any, n_classes: int, label_vocabulary: Any) -> tuple[Any, Any]:
    """TF1's ``all_class_ids`` (int32) and ``all_classes`` (their names: vocabulary entries, or the ids as strings):
    every class, once per example (``all_classes`` is also what a Classify signature serves as its classes)."""
    batch = shape(logits)[0]
    ids = tile(expand_dims(math_range(n_classes), 0), stack([batch, 1]))
    if label_vocabulary:
        return ids, tile(expand_dims(convert_to_tensor(list(label_vocabulary)), 0), stack([batch, 1]))
    return ids, as_string(ids)


def _served(default: Any, api_key: str, predictions: dict[str, Any]) -> dict[str, Any]:
    return {SERVING_DEFAULT: default, api_key: default, PREDICT: PredictOutput(predictions)}


class _Head:
    """What the three heads share: the spec of each mode from the unreduced loss and the predictions."""

    def __init__(self, weight_column: Any = None, loss_reduction: str = Reduction.SUM, name: str | None = None) -> None:
        if loss_reduction not in (
            Reduction.SUM,
            Reduction.SUM_OVER_BATCH_SIZE,
            Reduction.MEAN,
            Reduction.SUM_BY_NONZERO_WEIGHTS,
        ):
            raise ValueError(f"Invalid loss_reduction: {loss_reduction}")
        self._weight_column = weight_column
        self._loss_reduction = loss_reduction
        self._name = name

    name = property(lambda self: self._name, doc="The head's name (suffix of its summaries).")

    def _unreduced_loss(self, labels: Any, logits: Any) -> tuple[Any, Any]:
        raise NotImplementedError

    def _predictions(self, logits: Any) -> dict[str, Any]:
        raise NotImplementedError

    def _metrics(self, labels: Any, predictions: dict[str, Any], unreduced: Any, weights: Any) -> dict[str, Any]:
        raise NotImplementedError

    def _export_outputs(self, predictions: dict[str, Any]) -> dict[str, Any]:
        """TF1's signatures of a served head: its API's output as ``serving_default`` and under the API's own key
        (``classification``, ``regression``), and every prediction as ``predict``."""
        raise NotImplementedError

    def create_estimator_spec(
        self,
        features: dict[str, Any],
        mode: str,
        logits: Any,
        labels: Any = None,
        optimizer: Any = None,
        train_op_fn: Callable[[Any], Any] | None = None,
        regularization_losses: Any = None,
    ) -> EstimatorSpec:
        """The EstimatorSpec of ``mode`` for ``logits``; TRAIN needs ``optimizer`` or ``train_op_fn``."""
        with name_scope(self._name or "head"):
            predictions = self._predictions(logits)
            if mode == ModeKeys.PREDICT:
                return EstimatorSpec(mode, predictions=predictions, export_outputs=self._export_outputs(predictions))
            label_ids, unreduced = self._unreduced_loss(labels, logits)
            weights = _weights(features, self._weight_column, logits)
            training_loss = compute_weighted_loss(unreduced, weights=weights, reduction=self._loss_reduction)
            regularized = training_loss
            if regularization_losses:
                from dtf_notebook.ops.math.sums import add_n

                regularized = add_n([training_loss, *regularization_losses])
            if mode == ModeKeys.EVAL:
                return EstimatorSpec(
                    mode,
                    predictions=predictions,
                    loss=regularized,
                    eval_metric_ops=self._metrics(label_ids, predictions, unreduced, weights),
                )
            if optimizer is not None:
                if train_op_fn is not None:
                    raise ValueError("train_op_fn and optimizer cannot both be set.")
                train_op = optimizer.minimize(regularized, global_step=get_global_step())
            elif train_op_fn is not None:
                train_op = train_op_fn(regularized)
            else:
                raise ValueError("train_op_fn and optimizer cannot both be None.")
        summary_ops.scalar(_summary_key(self._name, "loss"), regularized)
        weight_sum = reduce_sum(weights * ones_like(unreduced))
        summary_ops.scalar(_summary_key(self._name, "average_loss"), training_loss / weight_sum)
        return EstimatorSpec(mode, predictions=predictions, loss=regularized, train_op=train_op)


class MultiClassHead(_Head):
    """Softmax cross-entropy over ``n_classes`` logits; labels are ids (or strings of ``label_vocabulary``)."""

    def __init__(
        self,
        n_classes: int,
        weight_column: Any = None,
        label_vocabulary: Any = None,
        loss_reduction: str = Reduction.SUM,
        name: str | None = None,
    ) -> None:
        if n_classes is None or n_classes <= 2:
            raise ValueError(f"n_classes must be > 2: {n_classes}.")
        if label_vocabulary is not None and not isinstance(label_vocabulary, list | tuple):
            raise ValueError(f"label_vocabulary should be a list or a tuple. Given type: {type(label_vocabulary)}")
        super().__init__(weight_column, loss_reduction, name)
        self._n_classes = n_classes
        self._label_vocabulary = label_vocabulary

    logits_dimension = property(lambda self: self._n_classes, doc="Logits per example.")

    def _label_ids(self, labels: Any, logits: Any) -> Any:
        labels = _labels_2d(labels, logits, 1)
        if self._label_vocabulary is None:
            if not labels.dtype.is_integer:
                raise ValueError(f"Labels dtype should be integer. Instead got {labels.dtype}.")
            return cast(labels, dtypes.int64)
        if labels.dtype.base_dtype != dtypes.string:
            raise ValueError("Labels must be a string when label_vocabulary is given.")
        table = index_table_from_tensor(list(self._label_vocabulary), name="class_id_lookup")
        return table.lookup(labels)

    def _unreduced_loss(self, labels: Any, logits: Any) -> tuple[Any, Any]:
        ids = self._label_ids(labels, logits)
        loss = sparse_softmax_cross_entropy_with_logits(labels=reshape(ids, [-1]), logits=logits)
        return ids, expand_dims(loss, -1)

    def _predictions(self, logits: Any) -> dict[str, Any]:
        class_ids = expand_dims(argmax(logits, axis=1, name="class_ids"), -1)
        if self._label_vocabulary is None:
            classes = as_string(class_ids, name="str_classes")
        else:
            from dtf_notebook.ops.array.gather import gather

            classes = gather(convert_to_tensor(list(self._label_vocabulary)), class_ids, name="classes")
        all_ids, all_classes = _all_class_ids_and_classes(logits, self._n_classes, self._label_vocabulary)
        return {
            "logits": logits,
            "probabilities": softmax(logits, name="probabilities"),
            "class_ids": class_ids,
            "classes": classes,
            "all_class_ids": all_ids,
            "all_classes": all_classes,
        }

    def _metrics(self, labels: Any, predictions: dict[str, Any], unreduced: Any, weights: Any) -> dict[str, Any]:
        with name_scope(None, "metrics"):
            return {
                "average_loss": mean(unreduced, weights=weights, name="average_loss"),
                "accuracy": accuracy(labels, predictions["class_ids"], weights=weights, name="accuracy"),
            }

    def _export_outputs(self, predictions: dict[str, Any]) -> dict[str, Any]:
        output = ClassificationOutput(scores=predictions["probabilities"], classes=predictions["all_classes"])
        return _served(output, CLASSIFY, predictions)


class BinaryClassHead(_Head):
    """Sigmoid cross-entropy on one logit; labels are 0/1 (or strings of a two-entry ``label_vocabulary``)."""

    def __init__(
        self,
        weight_column: Any = None,
        thresholds: Any = None,
        label_vocabulary: Any = None,
        loss_reduction: str = Reduction.SUM,
        name: str | None = None,
    ) -> None:
        super().__init__(weight_column, loss_reduction, name)
        self._thresholds = tuple(thresholds or ())
        self._label_vocabulary = label_vocabulary

    logits_dimension = property(lambda self: 1, doc="Logits per example.")

    def _unreduced_loss(self, labels: Any, logits: Any) -> tuple[Any, Any]:
        labels = _labels_2d(labels, logits, 1)
        if self._label_vocabulary is not None:
            labels = index_table_from_tensor(list(self._label_vocabulary), name="class_id_lookup").lookup(labels)
        labels = cast(labels, dtypes.float32)
        return labels, sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)

    def _predictions(self, logits: Any) -> dict[str, Any]:
        two_class = concat((zeros_like(logits), logits), axis=-1, name="two_class_logits")
        class_ids = expand_dims(argmax(two_class, axis=1, name="class_ids"), -1)
        if self._label_vocabulary is None:
            classes = as_string(class_ids, name="str_classes")
        else:
            from dtf_notebook.ops.array.gather import gather

            classes = gather(convert_to_tensor(list(self._label_vocabulary)), class_ids, name="classes")
        all_ids, all_classes = _all_class_ids_and_classes(logits, 2, self._label_vocabulary)
        return {
            "logits": logits,
            "logistic": sigmoid(logits, name="logistic"),
            "probabilities": softmax(two_class, name="probabilities"),
            "class_ids": class_ids,
            "classes": classes,
            "all_class_ids": all_ids,
            "all_classes": all_classes,
        }

    def _metrics(self, labels: Any, predictions: dict[str, Any], unreduced: Any, weights: Any) -> dict[str, Any]:
        logistic = predictions["logistic"]
        with name_scope(None, "metrics"):
            metrics = {
                "average_loss": mean(unreduced, weights=weights, name="average_loss"),
                "accuracy": accuracy(labels, predictions["class_ids"], weights=weights, name="accuracy"),
                "prediction/mean": mean(logistic, weights=weights, name="prediction/mean"),
                "label/mean": mean(labels, weights=weights, name="label/mean"),
                "auc": auc(labels, logistic, weights=weights, name="auc"),
                "auc_precision_recall": auc(labels, logistic, weights=weights, curve="PR", name="auc_precision_recall"),
            }
            value, update = metrics["label/mean"]
            metrics["accuracy_baseline"] = (reduce_max([value, 1.0 - value], name="accuracy_baseline"), update)
            for threshold in self._thresholds:
                hits = cast(logistic > threshold, dtypes.float32)
                metrics[f"precision/positive_threshold_{threshold:g}"] = precision(labels, hits, weights=weights)
                metrics[f"recall/positive_threshold_{threshold:g}"] = recall(labels, hits, weights=weights)
            return metrics

    def _export_outputs(self, predictions: dict[str, Any]) -> dict[str, Any]:
        output = ClassificationOutput(scores=predictions["probabilities"], classes=predictions["all_classes"])
        served = _served(output, CLASSIFY, predictions)
        served[REGRESS] = RegressionOutput(value=predictions["logistic"])
        return served


class RegressionHead(_Head):
    """Squared error on ``label_dimension`` logits; predictions are the logits."""

    def __init__(
        self,
        label_dimension: int = 1,
        weight_column: Any = None,
        loss_reduction: str = Reduction.SUM,
        name: str | None = None,
    ) -> None:
        if label_dimension < 1:
            raise ValueError(f"Invalid label_dimension {label_dimension}.")
        super().__init__(weight_column, loss_reduction, name)
        self._label_dimension = label_dimension

    logits_dimension = property(lambda self: self._label_dimension, doc="Logits per example.")

    def _unreduced_loss(self, labels: Any, logits: Any) -> tuple[Any, Any]:
        labels = cast(_labels_2d(labels, logits, self._label_dimension), dtypes.float32)
        diff = logits - labels
        return labels, diff * diff

    def _predictions(self, logits: Any) -> dict[str, Any]:
        return {"predictions": logits}

    def _metrics(self, labels: Any, predictions: dict[str, Any], unreduced: Any, weights: Any) -> dict[str, Any]:
        with name_scope(None, "metrics"):
            return {
                "average_loss": mean(unreduced, weights=weights, name="average_loss"),
                "label/mean": mean(labels, weights=weights, name="label/mean"),
                "prediction/mean": mean(predictions["predictions"], weights=weights, name="prediction/mean"),
            }

    def _export_outputs(self, predictions: dict[str, Any]) -> dict[str, Any]:
        return _served(RegressionOutput(value=predictions["predictions"]), REGRESS, predictions)


def binary_or_multi_class_head(
    n_classes: int, weight_column: Any = None, label_vocabulary: Any = None, loss_reduction: str = Reduction.SUM
) -> _Head:
    """The head of a canned classifier: binary (sigmoid) for 2 classes, softmax for more.

    Raises:
        ValueError: fewer than 2 classes.

    Example:
        >>> binary_or_multi_class_head(1)
        Traceback (most recent call last):
        ValueError: n_classes must be > 1: 1
    """
    if n_classes is None or n_classes < 2:
        raise ValueError(f"n_classes must be > 1: {n_classes}")
    if n_classes == 2:
        return BinaryClassHead(weight_column, label_vocabulary=label_vocabulary, loss_reduction=loss_reduction)
    return MultiClassHead(n_classes, weight_column, label_vocabulary, loss_reduction)
