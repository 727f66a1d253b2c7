"""``DNNLinearCombinedClassifier`` and ``...Regressor``: wide (linear) and deep (DNN) logits summed, each part
trained by its own optimizer (TF1's ``canned/dnn_linear_combined.py``).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> DNNLinearCombinedClassifier()
    Traceback (most recent call last):
    ValueError: Either linear_feature_columns or dnn_feature_columns must be defined.
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.estimator.canned.dnn import add_layer_summary, dnn_logit_fn_builder
from dtf_notebook.estimator.canned.head import RegressionHead, binary_or_multi_class_head
from dtf_notebook.estimator.canned.linear import linear_learning_rate, linear_logit_fn_builder
from dtf_notebook.estimator.canned.optimizers import get_optimizer_instance
from dtf_notebook.estimator.estimator import Estimator
from dtf_notebook.framework.graph import GraphKeys, control_dependencies, get_collection
from dtf_notebook.ops.identity_ops import group
from dtf_notebook.ops.losses.losses_impl import Reduction
from dtf_notebook.ops.nn.activations import relu
from dtf_notebook.ops.partitioners import min_max_variable_partitioner
from dtf_notebook.ops.state_ops import assign_add
from dtf_notebook.ops.variable_scope import variable_scope
from dtf_notebook.train.training_util import get_global_step

__all__ = ["DNNLinearCombinedClassifier", "DNNLinearCombinedRegressor"]

_DNN_LEARNING_RATE = 0.001


def _combined_model_fn(features, labels, mode, head, linear_feature_columns, linear_optimizer, dnn_feature_columns,
                       dnn_optimizer, dnn_hidden_units, dnn_activation_fn, dnn_dropout, input_layer_partitioner,
                       config, linear_sparse_combiner):  # fmt: skip
    if not isinstance(features, dict):
        raise ValueError(f"features should be a dictionary of `Tensor`s. Given type: {type(features)}")
    if not linear_feature_columns and not dnn_feature_columns:
        raise ValueError("Either linear_feature_columns or dnn_feature_columns must be defined.")
    num_ps = config.num_ps_replicas if config else 0
    input_layer_partitioner = input_layer_partitioner or min_max_variable_partitioner(
        max_partitions=num_ps, min_slice_size=64 << 20
    )
    dnn_logits = linear_logits = None
    if dnn_feature_columns:
        dnn_optimizer = get_optimizer_instance(dnn_optimizer, learning_rate=_DNN_LEARNING_RATE)
        if not dnn_hidden_units:
            raise ValueError("dnn_hidden_units must be defined when dnn_feature_columns is specified.")
        with variable_scope(
            "dnn", values=list(features.values()), partitioner=min_max_variable_partitioner(max_partitions=num_ps)
        ):
            logit_fn = dnn_logit_fn_builder(
                head.logits_dimension,
                dnn_hidden_units,
                dnn_feature_columns,
                dnn_activation_fn,
                dnn_dropout,
                input_layer_partitioner,
            )
            dnn_logits = logit_fn(features=features, mode=mode)
    if linear_feature_columns:
        linear_optimizer = get_optimizer_instance(
            linear_optimizer, learning_rate=linear_learning_rate(len(linear_feature_columns))
        )
        with variable_scope("linear", values=list(features.values()), partitioner=input_layer_partitioner) as scope:
            linear_logits = linear_logit_fn_builder(
                head.logits_dimension, linear_feature_columns, linear_sparse_combiner
            )(features)
            add_layer_summary(linear_logits, scope.name)
    if dnn_logits is not None and linear_logits is not None:
        logits = dnn_logits + linear_logits
    else:
        logits = dnn_logits if dnn_logits is not None else linear_logits

    def _train_op_fn(loss: Any) -> Any:
        train_ops = []
        global_step = get_global_step()
        if dnn_logits is not None:
            dnn_vars = get_collection(GraphKeys.TRAINABLE_VARIABLES, scope="dnn")
            train_ops.append(dnn_optimizer.minimize(loss, var_list=dnn_vars))
        if linear_logits is not None:
            linear_vars = get_collection(GraphKeys.TRAINABLE_VARIABLES, scope="linear")
            train_ops.append(linear_optimizer.minimize(loss, var_list=linear_vars))
        train_op = group(*train_ops)
        with control_dependencies([train_op]):
            return assign_add(global_step, 1).op

    return head.create_estimator_spec(
        features=features, mode=mode, labels=labels, train_op_fn=_train_op_fn, logits=logits
    )


class DNNLinearCombinedClassifier(Estimator):
    """A wide-and-deep classifier (``tf.estimator.DNNLinearCombinedClassifier``): FTRL for the linear part,
    Adagrad for the DNN by default."""

    def __init__(
        self,
        model_dir: str | None = None,
        linear_feature_columns: Any = None,
        linear_optimizer: Any = "Ftrl",
        dnn_feature_columns: Any = None,
        dnn_optimizer: Any = "Adagrad",
        dnn_hidden_units: Any = None,
        dnn_activation_fn: Any = relu,
        dnn_dropout: float | None = None,
        n_classes: int = 2,
        weight_column: Any = None,
        label_vocabulary: Any = None,
        input_layer_partitioner: Any = None,
        config: Any = None,
        warm_start_from: Any = None,
        loss_reduction: str = Reduction.SUM,
        linear_sparse_combiner: str = "sum",
    ) -> None:
        linear = tuple(linear_feature_columns or ())
        dnn = tuple(dnn_feature_columns or ())
        if not linear and not dnn:
            raise ValueError("Either linear_feature_columns or dnn_feature_columns must be defined.")
        head = binary_or_multi_class_head(n_classes, weight_column, label_vocabulary, loss_reduction)

        def _model_fn(features: Any, labels: Any, mode: str, config: Any) -> Any:
            return _combined_model_fn(
                features,
                labels,
                mode,
                head,
                linear,
                linear_optimizer,
                dnn,
                dnn_optimizer,
                dnn_hidden_units,
                dnn_activation_fn,
                dnn_dropout,
                input_layer_partitioner,
                config,
                linear_sparse_combiner,
            )

        super().__init__(model_fn=_model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNLinearCombinedRegressor(Estimator):
    """A wide-and-deep regressor (``tf.estimator.DNNLinearCombinedRegressor``).

    Example:
        >>> DNNLinearCombinedRegressor()
        Traceback (most recent call last):
        ValueError: Either linear_feature_columns or dnn_feature_columns must be defined.
    """

    def __init__(
        self,
        model_dir: str | None = None,
        linear_feature_columns: Any = None,
        linear_optimizer: Any = "Ftrl",
        dnn_feature_columns: Any = None,
        dnn_optimizer: Any = "Adagrad",
        dnn_hidden_units: Any = None,
        dnn_activation_fn: Any = relu,
        dnn_dropout: float | None = None,
        label_dimension: int = 1,
        weight_column: Any = None,
        input_layer_partitioner: Any = None,
        config: Any = None,
        warm_start_from: Any = None,
        loss_reduction: str = Reduction.SUM,
        linear_sparse_combiner: str = "sum",
    ) -> None:
        linear = tuple(linear_feature_columns or ())
        dnn = tuple(dnn_feature_columns or ())
        if not linear and not dnn:
            raise ValueError("Either linear_feature_columns or dnn_feature_columns must be defined.")
        head = RegressionHead(label_dimension, weight_column, loss_reduction)

        def _model_fn(features: Any, labels: Any, mode: str, config: Any) -> Any:
            return _combined_model_fn(
                features,
                labels,
                mode,
                head,
                linear,
                linear_optimizer,
                dnn,
                dnn_optimizer,
                dnn_hidden_units,
                dnn_activation_fn,
                dnn_dropout,
                input_layer_partitioner,
                config,
                linear_sparse_combiner,
            )

        super().__init__(model_fn=_model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)
