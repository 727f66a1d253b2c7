"""``DNNClassifier`` and ``DNNRegressor``: feed-forward networks over feature columns (TF1's ``canned/dnn.py``).

The graph is TF1's: ``dnn/input_from_feature_columns/input_layer``, then ``dnn/hiddenlayer_<i>`` dense layers
(Glorot-uniform kernels, optional dropout in training) and ``dnn/logits``, every variable partitioned over the
ps tasks by ``min_max_variable_partitioner`` (one part without ps), so checkpoints carry TF's names.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> est = DNNClassifier([4], [tf.feature_column.numeric_column("x")], n_classes=3)
    >>> est.params, est.config.num_ps_replicas
    ({}, 0)
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.estimator.canned.head import RegressionHead, binary_or_multi_class_head
from dtf_notebook.estimator.canned.optimizers import get_optimizer_instance
from dtf_notebook.estimator.estimator import Estimator
from dtf_notebook.estimator.model_fn import ModeKeys
from dtf_notebook.feature_column.layers import input_layer
from dtf_notebook.layers.core import dense
from dtf_notebook.layers.core import dropout as dropout_layer
from dtf_notebook.ops.init_ops import glorot_uniform_initializer
from dtf_notebook.ops.losses.losses_impl import Reduction
from dtf_notebook.ops.math.reductions import zero_fraction
from dtf_notebook.ops.nn.activations import relu
from dtf_notebook.ops.partitioners import min_max_variable_partitioner
from dtf_notebook.ops.variable_scope import variable_scope
from dtf_notebook.summary import summary_ops

__all__ = ["DNNClassifier", "DNNRegressor", "dnn_logit_fn_builder"]

_LEARNING_RATE = 0.05


def add_layer_summary(value: Any, tag: str) -> None:
    """The fraction of zeros and a histogram of a layer's output, as TF's canned models write them."""
    summary_ops.scalar(f"{tag}/fraction_of_zero_values", zero_fraction(value))
    summary_ops.histogram(f"{tag}/activation", value)


def dnn_logit_fn_builder(
    units: int,
    hidden_units: Any,
    feature_columns: Any,
    activation_fn: Any,
    dropout: float | None,
    input_layer_partitioner: Any,
) -> Any:
    """``logit_fn(features, mode)``: the DNN's logits ``[batch, units]`` (built in the caller's scope).

    Example:
        >>> callable(dnn_logit_fn_builder(1, [2], [], None, None, None))
        True
    """

    def dnn_logit_fn(features: dict[str, Any], mode: str) -> Any:
        with variable_scope(
            "input_from_feature_columns", values=list(features.values()), partitioner=input_layer_partitioner
        ):
            net = input_layer(features, feature_columns)
        for layer_id, num_hidden_units in enumerate(hidden_units):
            with variable_scope(f"hiddenlayer_{layer_id}", values=(net,)) as scope:
                net = dense(
                    net,
                    units=num_hidden_units,
                    activation=activation_fn,
                    kernel_initializer=glorot_uniform_initializer(),
                    name=scope,
                )
                if dropout is not None and mode == ModeKeys.TRAIN:
                    net = dropout_layer(net, rate=dropout, training=True)
            add_layer_summary(net, scope.name)
        with variable_scope("logits", values=(net,)) as scope:
            logits = dense(
                net, units=units, activation=None, kernel_initializer=glorot_uniform_initializer(), name=scope
            )
        add_layer_summary(logits, scope.name)
        return logits

    return dnn_logit_fn


def _dnn_model_fn(features, labels, mode, head, hidden_units, feature_columns, optimizer, activation_fn, dropout,
                  input_layer_partitioner, config):  # fmt: skip
    if not isinstance(features, dict):
        raise ValueError(f"features should be a dictionary of `Tensor`s. Given type: {type(features)}")
    optimizer = get_optimizer_instance(optimizer, learning_rate=_LEARNING_RATE)
    num_ps = config.num_ps_replicas if config else 0
    with variable_scope(
        "dnn", values=list(features.values()), partitioner=min_max_variable_partitioner(max_partitions=num_ps)
    ):
        input_partitioner = input_layer_partitioner or min_max_variable_partitioner(
            max_partitions=num_ps, min_slice_size=64 << 20
        )
        logit_fn = dnn_logit_fn_builder(
            head.logits_dimension, hidden_units, feature_columns, activation_fn, dropout, input_partitioner
        )
        logits = logit_fn(features=features, mode=mode)
        return head.create_estimator_spec(
            features=features, mode=mode, labels=labels, optimizer=optimizer, logits=logits
        )


def _check_columns(feature_columns: Any) -> tuple:
    columns = tuple(feature_columns or ())
    if not columns:
        raise ValueError("feature_columns must not be empty.")
    return columns


class DNNClassifier(Estimator):
    """A feed-forward classifier (``tf.estimator.DNNClassifier``); defaults as TF1's: Adagrad at 0.05, ReLU.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> DNNClassifier([], [tf.feature_column.numeric_column("x")], n_classes=1)
        Traceback (most recent call last):
        ValueError: n_classes must be > 1: 1
    """

    def __init__(
        self,
        hidden_units: Any,
        feature_columns: Any,
        model_dir: str | None = None,
        n_classes: int = 2,
        weight_column: Any = None,
        label_vocabulary: Any = None,
        optimizer: Any = "Adagrad",
        activation_fn: Any = relu,
        dropout: float | None = None,
        input_layer_partitioner: Any = None,
        config: Any = None,
        warm_start_from: Any = None,
        loss_reduction: str = Reduction.SUM,
    ) -> None:
        head = binary_or_multi_class_head(n_classes, weight_column, label_vocabulary, loss_reduction)
        columns = _check_columns(feature_columns)

        def _model_fn(features: Any, labels: Any, mode: str, config: Any) -> Any:
            return _dnn_model_fn(
                features,
                labels,
                mode,
                head,
                hidden_units,
                columns,
                optimizer,
                activation_fn,
                dropout,
                input_layer_partitioner,
                config,
            )

        super().__init__(model_fn=_model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNRegressor(Estimator):
    """A feed-forward regressor (``tf.estimator.DNNRegressor``); squared-error loss summed over the batch.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> DNNRegressor([2], [tf.feature_column.numeric_column("x")], label_dimension=0)
        Traceback (most recent call last):
        ValueError: Invalid label_dimension 0.
    """

    def __init__(
        self,
        hidden_units: Any,
        feature_columns: Any,
        model_dir: str | None = None,
        label_dimension: int = 1,
        weight_column: Any = None,
        optimizer: Any = "Adagrad",
        activation_fn: Any = relu,
        dropout: float | None = None,
        input_layer_partitioner: Any = None,
        config: Any = None,
        warm_start_from: Any = None,
        loss_reduction: str = Reduction.SUM,
    ) -> None:
        head = RegressionHead(label_dimension, weight_column, loss_reduction)
        columns = _check_columns(feature_columns)

        def _model_fn(features: Any, labels: Any, mode: str, config: Any) -> Any:
            return _dnn_model_fn(
                features,
                labels,
                mode,
                head,
                hidden_units,
                columns,
                optimizer,
                activation_fn,
                dropout,
                input_layer_partitioner,
                config,
            )

        super().__init__(model_fn=_model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)
