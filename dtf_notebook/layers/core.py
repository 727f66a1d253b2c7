"""``tf.layers`` core layers: ``Dense``, ``Dropout``, ``Flatten`` and their functional forms.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 2, 3])
    ...     y = tf.layers.dense(tf.layers.flatten(x), 4, activation=tf.nn.relu)
    ...     training = tf.placeholder(tf.bool, [])
    ...     z = tf.layers.dropout(y, 0.5, training=training)
    >>> y.name, y.shape.as_list(), z.op.type
    ('dense/Relu:0', [None, 4], 'Merge')
"""

from __future__ import annotations

import math
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.layers.base import InputSpec, Layer
from dtf_notebook.layers.utils import normalize_data_format, smart_cond
from dtf_notebook.ops import array_ops, init_ops, math_ops, nn_ops
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.identity_ops import identity

__all__ = ["Dense", "Dropout", "Flatten", "dense", "dropout", "flatten"]

_ACTIVATIONS = {
    "relu": nn_ops.relu,
    "relu6": nn_ops.relu6,
    "elu": nn_ops.elu,
    "sigmoid": math_ops.sigmoid,
    "tanh": math_ops.tanh,
    "softmax": nn_ops.softmax,
    "softplus": nn_ops.softplus,
    "softsign": nn_ops.softsign,
    "linear": None,
}


def get_activation(activation: Any) -> Any:
    """A callable activation (None for linear), from a callable, None or a Keras name such as ``"relu"``.

    Example:
        >>> get_activation("relu").__name__, get_activation(None)
        ('relu', None)
    """
    if activation is None or callable(activation):
        return activation
    if activation in _ACTIVATIONS:
        return _ACTIVATIONS[activation]
    raise ValueError(f"Unknown activation function: {activation!r}")


def get_initializer(initializer: Any) -> Any:
    """An initializer from an initializer, None, or a name such as ``"zeros"`` or ``"glorot_uniform"``.

    Example:
        >>> type(get_initializer("zeros")).__name__
        'Zeros'
    """
    if isinstance(initializer, str):
        if initializer not in init_ops.INITIALIZERS:
            raise ValueError(f"Unknown initializer: {initializer!r}")
        return init_ops.INITIALIZERS[initializer]()
    if isinstance(initializer, type):
        return initializer()
    return initializer


def _tensordot_last(inputs: Tensor, kernel: Any) -> Tensor:
    # TF's tensordot(inputs, kernel, [[rank - 1], [0]]): the leading axes folded into one for a MatMul.
    with name_scope(None, "Tensordot", [inputs, kernel]) as scope:
        units = kernel.shape[-1].value
        shape = array_ops.shape(inputs)
        lead = array_ops.strided_slice(shape, [0], [-1])
        flat = array_ops.reshape(inputs, [-1, inputs.shape[-1].value])
        product = math_ops.matmul(flat, kernel)
        out_shape = array_ops.concat([lead, constant([units], dtype=lead.dtype)], 0)
        return array_ops.reshape(product, out_shape, name=scope)


class Dense(Layer):
    """A densely connected layer: ``activation(inputs @ kernel + bias)`` (over the last axis of ``inputs``).

    Args:
        units: Output size.
        activation: Callable, Keras name, or None (linear).
        use_bias: Whether to add ``bias``.
        kernel_initializer: Default glorot-uniform (or the variable scope's initializer).
        bias_initializer: Default zeros.
        kernel_regularizer, bias_regularizer: ``fn(weight) -> loss`` added to ``REGULARIZATION_LOSSES``.
        activity_regularizer: ``fn(output) -> loss``, averaged over the batch.
        kernel_constraint, bias_constraint: Projections applied by optimizers.
        trainable, name: As for every layer.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     layer = tf.layers.Dense(2, kernel_initializer=tf.ones_initializer())
        ...     y = layer(tf.constant([[1.0, 2.0]]))
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print(sess.run(y), layer.kernel.name)
        [[3. 3.]] dense/kernel:0
    """

    def __init__(
        self,
        units: int,
        activation: Any = None,
        use_bias: bool = True,
        kernel_initializer: Any = None,
        bias_initializer: Any = init_ops.zeros_initializer(),
        kernel_regularizer: Any = None,
        bias_regularizer: Any = None,
        activity_regularizer: Any = None,
        kernel_constraint: Any = None,
        bias_constraint: Any = None,
        trainable: bool = True,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs)
        self.units = int(units)
        if self.units <= 0:
            raise ValueError(f"Received an invalid value for `units`, expected a positive integer, got {units}.")
        self.activation = get_activation(activation)
        self.use_bias = use_bias
        self.kernel_initializer = get_initializer(kernel_initializer)
        self.bias_initializer = get_initializer(bias_initializer)
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self.input_spec = InputSpec(min_ndim=2)

    def build(self, input_shape: Any) -> None:
        dtype = dtypes.as_dtype(self.dtype or dtypes.float32)
        if not dtype.is_floating:
            raise TypeError(f"Unable to build `Dense` layer with non-floating point dtype {dtype}")
        last = TensorShape(input_shape)[-1].value
        if last is None:
            raise ValueError("The last dimension of the inputs to `Dense` should be defined. Found `None`.")
        self.input_spec = InputSpec(min_ndim=2, axes={-1: last})
        self.kernel = self.add_weight(
            "kernel",
            shape=[last, self.units],
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
            dtype=self.dtype,
            trainable=True,
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                "bias",
                shape=[self.units],
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
                dtype=self.dtype,
                trainable=True,
            )
        self.built = True

    def call(self, inputs: Tensor) -> Tensor:
        if inputs.dtype.base_dtype != self.dtype:
            inputs = math_ops.cast(inputs, self.dtype)
        rank = inputs.shape.ndims
        if rank == 2 or rank is None:
            outputs = math_ops.matmul(inputs, self.kernel)
        else:
            outputs = _tensordot_last(inputs, self.kernel)
            outputs.set_shape(inputs.shape.as_list()[:-1] + [self.units])
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias)
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        return TensorShape(input_shape)[:-1].concatenate([self.units])


def dense(
    inputs: Any,
    units: int,
    activation: Any = None,
    use_bias: bool = True,
    kernel_initializer: Any = None,
    bias_initializer: Any = init_ops.zeros_initializer(),
    kernel_regularizer: Any = None,
    bias_regularizer: Any = None,
    activity_regularizer: Any = None,
    kernel_constraint: Any = None,
    bias_constraint: Any = None,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
) -> Tensor:
    """Functional :class:`Dense`: a new layer (scope ``name``, reused per ``reuse``) applied to ``inputs``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.placeholder(tf.float32, [None, 3])
        ...     a = tf.layers.dense(x, 2, name="fc")
        ...     b = tf.layers.dense(x, 2, name="fc", reuse=True)
        ...     [v.name for v in tf.trainable_variables()]
        ['fc/kernel:0', 'fc/bias:0']
    """
    layer = Dense(
        units,
        activation=activation,
        use_bias=use_bias,
        kernel_initializer=kernel_initializer,
        bias_initializer=bias_initializer,
        kernel_regularizer=kernel_regularizer,
        bias_regularizer=bias_regularizer,
        activity_regularizer=activity_regularizer,
        kernel_constraint=kernel_constraint,
        bias_constraint=bias_constraint,
        trainable=trainable,
        name=name,
        _scope=name,
        _reuse=reuse,
    )
    return layer(inputs)


class Dropout(Layer):
    """Zeroes inputs with probability ``rate`` when ``training`` (a bool or a boolean tensor: then a ``tf.cond``).

    Args:
        rate: Fraction of inputs dropped.
        noise_shape: Shape of the keep/drop mask (None entries take the input's size).
        seed: Op seed.
        name: Layer name.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.layers.Dropout(0.5)(tf.ones([3]), training=False)))
        [1. 1. 1.]
    """

    def __init__(
        self,
        rate: float = 0.5,
        noise_shape: Any = None,
        seed: int | None = None,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(name=name, **kwargs)
        self.rate = rate
        self.noise_shape = noise_shape
        self.seed = seed

    def _get_noise_shape(self, inputs: Tensor) -> Any:
        if self.noise_shape is None:
            return None
        shape = array_ops.shape(inputs)
        dims = [shape[i] if value is None else value for i, value in enumerate(self.noise_shape)]
        return array_ops.stack(dims)

    def call(self, inputs: Tensor, training: Any = False) -> Tensor:
        def dropped() -> Tensor:
            return nn_ops.dropout(inputs, noise_shape=self._get_noise_shape(inputs), seed=self.seed, rate=self.rate)

        return smart_cond(training, dropped, lambda: identity(inputs))

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        return TensorShape(input_shape)


def dropout(
    inputs: Any,
    rate: float = 0.5,
    noise_shape: Any = None,
    seed: int | None = None,
    training: Any = False,
    name: str | None = None,
) -> Tensor:
    """Functional :class:`Dropout`; ``training`` defaults to False (no dropout), as in TF1.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     tf.layers.dropout(tf.ones([2]), training=False).op.name
        'dropout/Identity'
    """
    return Dropout(rate, noise_shape=noise_shape, seed=seed, name=name)(inputs, training=training)


class Flatten(Layer):
    """Flattens all but the first axis: ``[batch, ...] -> [batch, prod(...)]``.

    Args:
        data_format: ``channels_last`` (default) or ``channels_first`` (channels moved last first, as Keras).
        name: Layer name.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     tf.layers.Flatten()(tf.zeros([4, 2, 3])).shape.as_list()
        [4, 6]
    """

    def __init__(self, data_format: str | None = None, name: str | None = None, **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        self.data_format = normalize_data_format(data_format)
        self.input_spec = InputSpec(min_ndim=1)

    def call(self, inputs: Tensor) -> Tensor:
        rank = inputs.shape.ndims
        if self.data_format == "channels_first" and rank and rank > 1:
            inputs = array_ops.transpose(inputs, [0, *range(2, rank), 1])
        if rank == 1:
            return array_ops.expand_dims(inputs, 1)
        shape = inputs.shape
        batch = shape[0].value
        rest = shape[1:]
        if rest.is_fully_defined():
            target: Any = constant([-1, int(math.prod(rest.as_list()))])
        elif batch is not None:
            target = constant([int(batch), -1])
        else:
            target = [array_ops.shape(inputs)[0], -1]
        return array_ops.reshape(inputs, target)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        shape = TensorShape(input_shape)
        rest = shape[1:]
        return TensorShape([shape[0].value, rest.num_elements() if rest.is_fully_defined() else None])


def flatten(inputs: Any, name: str | None = None, data_format: str = "channels_last") -> Tensor:
    """Functional :class:`Flatten`.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     y = tf.layers.flatten(tf.placeholder(tf.float32, [None, 2, 5]))
        >>> y.name, y.shape.as_list()
        ('flatten/Reshape:0', [None, 10])
    """
    return Flatten(name=name, data_format=data_format)(inputs)
