"""``tf.layers.BatchNormalization`` and ``tf.layers.batch_normalization`` (TF1's Keras-based layer).

Weights ``gamma``, ``beta`` (trainable), ``moving_mean`` and ``moving_variance`` (not trainable, in
``GLOBAL_VARIABLES``); the moving averages are updated by ops in ``UPDATE_OPS`` (``AssignMovingAvg``:
``var -= (var - batch_value) * (1 - momentum)``), which a training script runs with its train op.

As in TF1, a 4-D input normalized over its channel axis (1 or 3) takes the fused path (``FusedBatchNormV3``,
whose moving variance gets the batch's Bessel-corrected variance; ``fused=False`` turns it off), and other
inputs the composite path (``tf.nn.moments`` + ``tf.nn.batch_normalization``, biased variance). ``training``
may be a Python bool or a boolean tensor (then ``tf.cond`` picks batch or moving statistics, and the updates
leave the moving values unchanged when it is False). ``renorm`` and ``virtual_batch_size`` are not supported.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 4, 4, 3])
    ...     y = tf.layers.batch_normalization(x, training=True)
    ...     names = [v.name for v in tf.global_variables()]
    ...     updates = [op.name for op in tf.get_collection(tf.GraphKeys.UPDATE_OPS)]
    >>> names  # doctest: +NORMALIZE_WHITESPACE
    ['batch_normalization/gamma:0', 'batch_normalization/beta:0', 'batch_normalization/moving_mean:0',
     'batch_normalization/moving_variance:0']
    >>> updates
    ['batch_normalization/AssignMovingAvg', 'batch_normalization/AssignMovingAvg_1']
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.layers.base import InputSpec, Layer
from dtf_notebook.layers.core import get_initializer
from dtf_notebook.layers.utils import constant_bool, smart_cond
from dtf_notebook.ops import array_ops, init_ops, math_ops, nn_ops, state_ops
from dtf_notebook.ops.constant_op import constant

__all__ = ["BatchNormalization", "batch_normalization"]


class BatchNormalization(Layer):
    """Normalizes inputs over a batch: ``gamma * (x - mean) / sqrt(var + epsilon) + beta``.

    Args:
        axis: The channel axis (or axes) kept; the others are reduced (default the last).
        momentum: Weight of the old value in the moving averages.
        epsilon: Added to the variance.
        center, scale: Whether to learn ``beta`` and ``gamma``.
        beta_initializer, gamma_initializer, moving_mean_initializer, moving_variance_initializer: Initializers.
        beta_regularizer, gamma_regularizer, beta_constraint, gamma_constraint: As for other layers.
        renorm: Only False is supported.
        fused: None or True: use ``FusedBatchNormV3`` when the input allows it; False: never.
        trainable, name: As for other layers.

    Raises:
        ValueError: ``renorm``, ``virtual_batch_size`` or ``adjustment`` requested, or a bad ``axis``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     bn = tf.layers.BatchNormalization(center=False)
        ...     y = bn(tf.constant([[1.0], [3.0]]), training=True)
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print(sess.run(y).round(3).ravel(), sess.run(bn.updates) is not None)
        [-1.  1.] True
    """

    def __init__(
        self,
        axis: Any = -1,
        momentum: float = 0.99,
        epsilon: float = 1e-3,
        center: bool = True,
        scale: bool = True,
        beta_initializer: Any = init_ops.zeros_initializer(),
        gamma_initializer: Any = init_ops.ones_initializer(),
        moving_mean_initializer: Any = init_ops.zeros_initializer(),
        moving_variance_initializer: Any = init_ops.ones_initializer(),
        beta_regularizer: Any = None,
        gamma_regularizer: Any = None,
        beta_constraint: Any = None,
        gamma_constraint: Any = None,
        renorm: bool = False,
        renorm_clipping: Any = None,
        renorm_momentum: float = 0.99,
        fused: bool | None = None,
        trainable: bool = True,
        virtual_batch_size: int | None = None,
        adjustment: Any = None,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(name=name, trainable=trainable, **kwargs)
        if renorm or virtual_batch_size is not None or adjustment is not None:
            raise ValueError(
                f"BatchNormalization {self.name}: renorm, virtual_batch_size and adjustment are not supported"
            )
        self.axis = list(axis) if isinstance(axis, list | tuple) else axis
        self.momentum = momentum
        self.epsilon = epsilon
        self.center, self.scale = center, scale
        self.beta_initializer = get_initializer(beta_initializer)
        self.gamma_initializer = get_initializer(gamma_initializer)
        self.moving_mean_initializer = get_initializer(moving_mean_initializer)
        self.moving_variance_initializer = get_initializer(moving_variance_initializer)
        self.beta_regularizer, self.gamma_regularizer = beta_regularizer, gamma_regularizer
        self.beta_constraint, self.gamma_constraint = beta_constraint, gamma_constraint
        self.renorm = False
        self.fused = True if fused is None else bool(fused)

    def build(self, input_shape: Any) -> None:
        shape = TensorShape(input_shape)
        ndims = shape.ndims
        if ndims is None:
            raise ValueError(f"Input has undefined rank: {shape}")
        axes = self.axis if isinstance(self.axis, list) else [self.axis]
        axes = sorted({a + ndims if a < 0 else a for a in axes})
        if any(a < 0 or a >= ndims for a in axes):
            raise ValueError(f"Invalid axis: {self.axis}")
        self.axis = axes
        param_dtype = dtypes.as_dtype(self.dtype or dtypes.float32)
        if param_dtype in (dtypes.float16, dtypes.bfloat16):
            param_dtype = dtypes.float32
        self._param_dtype = param_dtype
        self.fused = (
            self.fused
            and ndims == 4
            and axes in ([1], [3])
            and self.epsilon >= 1.001e-5
            and param_dtype in (dtypes.float32, None)
        )
        if self.fused:
            self._data_format = "NCHW" if axes == [1] else "NHWC"
        sizes = {a: shape[a].value for a in axes}
        for a, size in sizes.items():
            if size is None:
                raise ValueError(f"Input has undefined `axis` dimension. Received input with shape {shape}. Axis: {a}")
        self.input_spec = InputSpec(ndim=ndims, axes=sizes)
        if len(axes) == 1:
            param_shape = [sizes[axes[0]]]
        else:
            param_shape = [sizes[a] if a in sizes else 1 for a in range(ndims)]
        self.gamma = self.beta = None
        if self.scale:
            self.gamma = self.add_weight(
                "gamma", param_shape, param_dtype, self.gamma_initializer, self.gamma_regularizer,
                trainable=True, constraint=self.gamma_constraint,
            )  # fmt: skip
        elif self.fused:
            self._gamma_const = constant(1.0, dtype=param_dtype, shape=param_shape)
        if self.center:
            self.beta = self.add_weight(
                "beta", param_shape, param_dtype, self.beta_initializer, self.beta_regularizer,
                trainable=True, constraint=self.beta_constraint,
            )  # fmt: skip
        elif self.fused:
            self._beta_const = constant(0.0, dtype=param_dtype, shape=param_shape)
        self.moving_mean = self.add_weight(
            "moving_mean", param_shape, param_dtype, self.moving_mean_initializer, trainable=False
        )
        self.moving_variance = self.add_weight(
            "moving_variance", param_shape, param_dtype, self.moving_variance_initializer, trainable=False
        )
        self.built = True

    def _assign_moving_average(self, variable: Any, value: Tensor, momentum: Any, inputs_size: Any) -> Tensor:
        with name_scope("AssignMovingAvg") as scope:
            decay = convert_to_tensor(math_ops.subtract(1.0, momentum), name="decay")
            if decay.dtype != variable.dtype.base_dtype:
                decay = math_ops.cast(decay, variable.dtype.base_dtype)
            delta = math_ops.multiply(math_ops.subtract(variable, math_ops.cast(value, variable.dtype)), decay)
            if inputs_size is not None:
                delta = math_ops.where(math_ops.greater(inputs_size, 0), delta, array_ops.zeros_like(delta))
            return state_ops.assign_sub(variable, delta, name=scope)

    def _add_update(self, update: Any) -> None:
        self.add_update(update.op if isinstance(update, Tensor) else update)

    def _fused_call(self, inputs: Tensor, training: Any) -> Tensor:
        beta = self.beta if self.center else self._beta_const
        gamma = self.gamma if self.scale else self._gamma_const
        inputs_size = array_ops.size(inputs)

        def train() -> tuple:
            return nn_ops.fused_batch_norm(inputs, gamma, beta, epsilon=self.epsilon, data_format=self._data_format)

        def infer() -> tuple:
            return nn_ops.fused_batch_norm(
                inputs, gamma, beta, mean=self.moving_mean, variance=self.moving_variance, epsilon=self.epsilon,
                is_training=False, data_format=self._data_format,
            )  # fmt: skip

        output, mean, variance = smart_cond(training, train, infer)
        value = constant_bool(training)
        if value is None or value:
            if value is None:
                momentum: Any = smart_cond(training, lambda: self.momentum, lambda: 1.0)
            else:
                momentum = convert_to_tensor(self.momentum)
            self._add_update(self._assign_moving_average(self.moving_mean, mean, momentum, inputs_size))
            self._add_update(self._assign_moving_average(self.moving_variance, variance, momentum, inputs_size))
        return output

    def call(self, inputs: Tensor, training: Any = False) -> Tensor:
        if self.fused:
            return self._fused_call(inputs, training)
        ndims = inputs.shape.ndims
        reduction = [i for i in range(ndims) if i not in self.axis]
        broadcast_shape = [1] * ndims
        for a in self.axis:
            broadcast_shape[a] = inputs.shape[a].value

        def broadcast(v: Any) -> Any:
            if v is not None and len(v.shape) != ndims and reduction != list(range(ndims - 1)):
                return array_ops.reshape(v, broadcast_shape)
            return v

        scale, offset = broadcast(self.gamma), broadcast(self.beta)
        value = constant_bool(training)
        if value is False:
            mean, variance = self.moving_mean, self.moving_variance
        else:
            batch_mean, batch_variance = nn_ops.moments(math_ops.cast(inputs, self._param_dtype), reduction)
            moving_mean, moving_variance = self.moving_mean, self.moving_variance
            mean = smart_cond(training, lambda: batch_mean, lambda: convert_to_tensor(moving_mean))
            variance = smart_cond(training, lambda: batch_variance, lambda: convert_to_tensor(moving_variance))

            def update(var: Any, new: Tensor) -> Any:
                return smart_cond(
                    training,
                    lambda: self._assign_moving_average(var, new, self.momentum, None),
                    lambda: convert_to_tensor(var),
                )

            self._add_update(update(self.moving_mean, mean))
            self._add_update(update(self.moving_variance, variance))
        mean = math_ops.cast(mean, inputs.dtype)
        variance = math_ops.cast(variance, inputs.dtype)
        if offset is not None:
            offset = math_ops.cast(offset, inputs.dtype)
        if scale is not None:
            scale = math_ops.cast(scale, inputs.dtype)
        outputs = nn_ops.batch_normalization(inputs, broadcast(mean), broadcast(variance), offset, scale, self.epsilon)
        outputs.set_shape(inputs.shape)
        return outputs

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        return TensorShape(input_shape)


def batch_normalization(
    inputs: Any,
    axis: Any = -1,
    momentum: float = 0.99,
    epsilon: float = 1e-3,
    center: bool = True,
    scale: bool = True,
    beta_initializer: Any = init_ops.zeros_initializer(),
    gamma_initializer: Any = init_ops.ones_initializer(),
    moving_mean_initializer: Any = init_ops.zeros_initializer(),
    moving_variance_initializer: Any = init_ops.ones_initializer(),
    beta_regularizer: Any = None,
    gamma_regularizer: Any = None,
    beta_constraint: Any = None,
    gamma_constraint: Any = None,
    training: Any = False,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
    renorm: bool = False,
    renorm_clipping: Any = None,
    renorm_momentum: float = 0.99,
    fused: bool | None = None,
    virtual_batch_size: int | None = None,
    adjustment: Any = None,
) -> Tensor:
    """Functional :class:`BatchNormalization`; run ``tf.GraphKeys.UPDATE_OPS`` with the train op.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.placeholder(tf.float32, [None, 3])
        ...     is_training = tf.placeholder(tf.bool, [])
        ...     y = tf.layers.batch_normalization(x, training=is_training, name="bn")
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         _ = sess.run([y, tf.get_collection(tf.GraphKeys.UPDATE_OPS)],
        ...                      {x: [[0.0, 1.0, 2.0], [2.0, 3.0, 4.0]], is_training: True})
        ...         print(sess.run(tf.global_variables("bn/moving_mean")[0]).round(4))
        [0.01 0.02 0.03]
    """
    layer = BatchNormalization(
        axis=axis,
        momentum=momentum,
        epsilon=epsilon,
        center=center,
        scale=scale,
        beta_initializer=beta_initializer,
        gamma_initializer=gamma_initializer,
        moving_mean_initializer=moving_mean_initializer,
        moving_variance_initializer=moving_variance_initializer,
        beta_regularizer=beta_regularizer,
        gamma_regularizer=gamma_regularizer,
        beta_constraint=beta_constraint,
        gamma_constraint=gamma_constraint,
        renorm=renorm,
        renorm_clipping=renorm_clipping,
        renorm_momentum=renorm_momentum,
        fused=fused,
        trainable=trainable,
        virtual_batch_size=virtual_batch_size,
        adjustment=adjustment,
        name=name,
        _reuse=reuse,
        _scope=name,
    )
    return layer(inputs, training=training)
