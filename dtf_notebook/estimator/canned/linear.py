"""``LinearClassifier`` and ``LinearRegressor``: ``linear_model`` over feature columns (TF1's ``canned/linear.py``).

Variables live under ``linear/linear_model/<column>/weights`` (and ``bias_weights``), partitioned over the ps
tasks; the default optimizer is FTRL at ``min(0.2, 1/sqrt(number of columns))``.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> LinearRegressor([tf.feature_column.numeric_column("x")]).model_dir is not None
    True
"""

from __future__ import annotations

import math
from typing import Any

from dtf_notebook.estimator.canned.head import RegressionHead, binary_or_multi_class_head
from dtf_notebook.estimator.canned.optimizers import get_optimizer_instance
from dtf_notebook.estimator.estimator import Estimator
from dtf_notebook.feature_column.layers import linear_model
from dtf_notebook.ops.losses.losses_impl import Reduction
from dtf_notebook.ops.math.reductions import zero_fraction
from dtf_notebook.ops.partitioners import min_max_variable_partitioner
from dtf_notebook.ops.variable_scope import variable_scope
from dtf_notebook.summary import summary_ops
from dtf_notebook.train.ftrl import FtrlOptimizer

__all__ = ["LinearClassifier", "LinearRegressor", "linear_logit_fn_builder", "linear_learning_rate"]

_LEARNING_RATE = 0.2


def linear_learning_rate(num_columns: int) -> float:
    """TF's default learning rate of a linear model: ``min(0.2, 1/sqrt(num_columns))``.

    Example:
        >>> linear_learning_rate(100)
        0.1
    """
    return min(_LEARNING_RATE, 1.0 / math.sqrt(num_columns))


def linear_logit_fn_builder(units: int, feature_columns: Any, sparse_combiner: str = "sum") -> Any:
    """``logit_fn(features)``: ``linear_model``'s logits, with the bias and zero-weight summaries.

    Example:
        >>> callable(linear_logit_fn_builder(1, []))
        True
    """

    def linear_logit_fn(features: dict[str, Any]) -> Any:
        cols_to_vars: dict[Any, Any] = {}
        logits = linear_model(
            features, feature_columns, units=units, sparse_combiner=sparse_combiner, cols_to_vars=cols_to_vars
        )
        bias = cols_to_vars.pop("bias")
        if units > 1:
            summary_ops.histogram("bias", bias[0])
        else:
            summary_ops.scalar("bias", bias[0][0])
        weights = [v for variables in cols_to_vars.values() for v in variables]
        if weights:
            from dtf_notebook.ops.array.pack import stack
            from dtf_notebook.ops.math.reduce import reduce_mean

            summary_ops.scalar("fraction_of_zero_weights", reduce_mean(stack([zero_fraction(w) for w in weights])))
        return logits

    return linear_logit_fn


def _linear_model_fn(features, labels, mode, head, feature_columns, optimizer, partitioner, config,
                     sparse_combiner="sum"):  # fmt: skip
    if not isinstance(features, dict):
        raise ValueError(f"features should be a dictionary of `Tensor`s. Given type: {type(features)}")
    optimizer = get_optimizer_instance(
        optimizer or FtrlOptimizer(learning_rate=linear_learning_rate(len(feature_columns))),
        learning_rate=_LEARNING_RATE,
    )
    num_ps = config.num_ps_replicas if config else 0
    partitioner = partitioner or min_max_variable_partitioner(max_partitions=num_ps, min_slice_size=64 << 20)
    with variable_scope("linear", values=list(features.values()), partitioner=partitioner):
        logits = linear_logit_fn_builder(head.logits_dimension, feature_columns, sparse_combiner)(features)
        return head.create_estimator_spec(
            features=features, mode=mode, labels=labels, optimizer=optimizer, logits=logits
        )


class LinearClassifier(Estimator):
    """A linear classifier (``tf.estimator.LinearClassifier``).

    Example:
        >>> LinearClassifier([])
        Traceback (most recent call last):
        ValueError: feature_columns must not be empty.
    """

    def __init__(
        self,
        feature_columns: Any,
        model_dir: str | None = None,
        n_classes: int = 2,
        weight_column: Any = None,
        label_vocabulary: Any = None,
        optimizer: Any = "Ftrl",
        config: Any = None,
        partitioner: Any = None,
        warm_start_from: Any = None,
        loss_reduction: str = Reduction.SUM,
        sparse_combiner: str = "sum",
    ) -> None:
        columns = tuple(feature_columns or ())
        if not columns:
            raise ValueError("feature_columns must not be empty.")
        head = binary_or_multi_class_head(n_classes, weight_column, label_vocabulary, loss_reduction)
        opt = None if optimizer == "Ftrl" else optimizer

        def _model_fn(features: Any, labels: Any, mode: str, config: Any) -> Any:
            return _linear_model_fn(features, labels, mode, head, columns, opt, partitioner, config, sparse_combiner)

        super().__init__(model_fn=_model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class LinearRegressor(Estimator):
    """A linear regressor (``tf.estimator.LinearRegressor``).

    Example:
        >>> LinearRegressor([])
        Traceback (most recent call last):
        ValueError: feature_columns must not be empty.
    """

    def __init__(
        self,
        feature_columns: Any,
        model_dir: str | None = None,
        label_dimension: int = 1,
        weight_column: Any = None,
        optimizer: Any = "Ftrl",
        config: Any = None,
        partitioner: Any = None,
        warm_start_from: Any = None,
        loss_reduction: str = Reduction.SUM,
        sparse_combiner: str = "sum",
    ) -> None:
        columns = tuple(feature_columns or ())
        if not columns:
            raise ValueError("feature_columns must not be empty.")
        head = RegressionHead(label_dimension, weight_column, loss_reduction)
        opt = None if optimizer == "Ftrl" else optimizer

        def _model_fn(features: Any, labels: Any, mode: str, config: Any) -> Any:
            return _linear_model_fn(features, labels, mode, head, columns, opt, partitioner, config, sparse_combiner)

        super().__init__(model_fn=_model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)
