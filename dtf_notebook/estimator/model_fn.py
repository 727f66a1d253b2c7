"""``tf.estimator.ModeKeys`` and ``EstimatorSpec``: what a ``model_fn`` returns to its ``Estimator``.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     loss = tf.constant(1.0)
    ...     spec = EstimatorSpec(ModeKeys.EVAL, loss=loss)
    ...     spec.mode, spec.eval_metric_ops
    ('eval', {})
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor

__all__ = ["ModeKeys", "EstimatorSpec", "LOSS_METRIC_KEY", "AVERAGE_LOSS_METRIC_KEY"]

#: The key under which ``evaluate`` reports the mean of the model's loss (TF's name).
LOSS_METRIC_KEY = "loss"
#: The key the canned heads report their mean per-example loss under.
AVERAGE_LOSS_METRIC_KEY = "average_loss"


class ModeKeys:
    """The three modes a ``model_fn`` is called in (``tf.estimator.ModeKeys``).

    Example:
        >>> ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT
        ('train', 'eval', 'infer')
    """

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


class _Spec(NamedTuple):
    mode: str
    predictions: Any
    loss: Any
    train_op: Any
    eval_metric_ops: dict
    export_outputs: Any
    training_chief_hooks: tuple
    training_hooks: tuple
    scaffold: Any
    evaluation_hooks: tuple
    prediction_hooks: tuple


def _tensor_or_op(value: Any, what: str) -> Any:
    if value is not None and not isinstance(value, Tensor | Operation):
        raise TypeError(f"{what} must be a Tensor or Operation, given: {value!r}")
    return value


def _metric_pair(key: str, value: Any) -> tuple[Any, Any]:
    if isinstance(value, tuple) and len(value) == 2:
        return value
    raise TypeError(f"Values of eval_metric_ops must be (metric_value, update_op) tuples, given: {value!r} for {key}")


def _hooks(hooks: Any, what: str) -> tuple:
    hooks = tuple(hooks or ())
    for hook in hooks:
        if not all(callable(getattr(hook, m, None)) for m in ("begin", "before_run", "after_run", "end")):
            raise TypeError(f"All hooks must be SessionRunHook instances, given: {hook!r} in {what}")
    return hooks


class EstimatorSpec(_Spec):
    """What a ``model_fn`` returns: the ops an ``Estimator`` runs in a mode (``tf.estimator.EstimatorSpec``).

    TRAIN needs ``loss`` and ``train_op``, EVAL needs ``loss``, PREDICT needs ``predictions``; ``loss`` is a
    scalar, ``eval_metric_ops`` maps names to ``(value, update_op)`` pairs as ``tf.metrics`` returns them.

    Raises:
        ValueError: a field the mode needs is missing, or ``loss`` is not a scalar.
        TypeError: a field has the wrong type.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     spec = EstimatorSpec("infer", predictions={"y": tf.constant([1.0])})
        ...     sorted(spec.predictions)
        ['y']
    """

    def __new__(
        cls,
        mode: str,
        predictions: Any = None,
        loss: Any = None,
        train_op: Any = None,
        eval_metric_ops: Mapping[str, Any] | None = None,
        export_outputs: Any = None,
        training_chief_hooks: Any = None,
        training_hooks: Any = None,
        scaffold: Any = None,
        evaluation_hooks: Any = None,
        prediction_hooks: Any = None,
    ) -> EstimatorSpec:
        if mode not in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT):
            raise ValueError(f"mode={mode!r} is not one of ModeKeys (train, eval, infer).")
        if mode == ModeKeys.TRAIN and train_op is None:
            raise ValueError("Missing train_op.")
        if mode in (ModeKeys.TRAIN, ModeKeys.EVAL) and loss is None:
            raise ValueError("Missing loss.")
        if mode == ModeKeys.PREDICT and predictions is None:
            raise ValueError("Missing predictions.")
        _tensor_or_op(train_op, "train_op")
        if loss is not None:
            if not isinstance(loss, Tensor):
                raise TypeError(f"loss must be Tensor, given: {loss!r}")
            if loss.shape.ndims not in (None, 0) and loss.shape.num_elements() != 1:
                raise ValueError(f"Loss must be scalar, given: {loss}")
        if predictions is not None:
            for value in predictions.values() if isinstance(predictions, Mapping) else [predictions]:
                if not isinstance(value, Tensor):
                    raise TypeError(f"predictions must be Tensor or dict of Tensor, given: {value!r}")
        metrics = {k: _metric_pair(k, v) for k, v in (eval_metric_ops or {}).items()}
        if scaffold is None:
            from dtf_notebook.train.scaffold import Scaffold

            scaffold = Scaffold()
        return super().__new__(
            cls,
            mode,
            predictions,
            loss,
            train_op,
            metrics,
            export_outputs,
            _hooks(training_chief_hooks, "training_chief_hooks"),
            _hooks(training_hooks, "training_hooks"),
            scaffold,
            _hooks(evaluation_hooks, "evaluation_hooks"),
            _hooks(prediction_hooks, "prediction_hooks"),
        )

    def _replace(self, **kwargs: Any) -> EstimatorSpec:
        """A copy with some fields replaced, validated again (as TF's)."""
        fields = self._asdict()
        fields.update(kwargs)
        return EstimatorSpec(**fields)
