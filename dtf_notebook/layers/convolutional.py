"""``tf.layers`` convolutions: ``Conv1D``/``Conv2D``/``Conv3D``, ``SeparableConv1D``/``SeparableConv2D``,
``Conv2DTranspose``, ``Conv3DTranspose`` and their functional forms, with TF's variable names (``conv2d/kernel``,
``conv2d/bias``, ``separable_conv2d/depthwise_kernel``, ...).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 8, 8, 3])
    ...     y = tf.layers.conv2d(x, 4, 3, strides=2, padding="same", activation=tf.nn.relu)
    ...     names = [v.name for v in tf.trainable_variables()]
    >>> y.name, y.shape.as_list(), names
    ('conv2d/Relu:0', [None, 4, 4, 4], ['conv2d/kernel:0', 'conv2d/bias:0'])
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.layers.base import InputSpec, Layer
from dtf_notebook.layers.core import get_activation, get_initializer
from dtf_notebook.layers.utils import (
    conv_output_length,
    deconv_output_length,
    normalize_data_format,
    normalize_padding,
    normalize_tuple,
    tf_data_format,
)
from dtf_notebook.ops import array_ops, init_ops, math_ops, nn_ops

__all__ = [
    "Conv1D",
    "Conv2D",
    "Conv3D",
    "SeparableConv1D",
    "SeparableConv2D",
    "Conv2DTranspose",
    "Conv3DTranspose",
    "conv1d",
    "conv2d",
    "conv3d",
    "separable_conv1d",
    "separable_conv2d",
    "conv2d_transpose",
    "conv3d_transpose",
]

_ZEROS = init_ops.zeros_initializer()


class _Conv(Layer):
    """An N-D convolution layer (N = ``rank``): kernel ``kernel_size + (in_channels, filters)`` and a bias."""

    def __init__(
        self,
        rank: int,
        filters: int,
        kernel_size: Any,
        strides: Any = 1,
        padding: str = "valid",
        data_format: str | None = "channels_last",
        dilation_rate: Any = 1,
        activation: Any = None,
        use_bias: bool = True,
        kernel_initializer: Any = None,
        bias_initializer: Any = _ZEROS,
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
        self.rank = rank
        self.filters = int(filters)
        self.kernel_size = normalize_tuple(kernel_size, rank, "kernel_size")
        self.strides = normalize_tuple(strides, rank, "strides")
        self.padding = normalize_padding(padding)
        if self.padding == "causal" and rank != 1:
            raise ValueError("Causal padding is only supported for `Conv1D` and `SeparableConv1D`.")
        self.data_format = normalize_data_format(data_format)
        self.dilation_rate = normalize_tuple(dilation_rate, rank, "dilation_rate")
        self.activation = get_activation(activation)
        self.use_bias = use_bias
        self.kernel_initializer = get_initializer(kernel_initializer)
        self.bias_initializer = get_initializer(bias_initializer)
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self.input_spec = InputSpec(min_ndim=rank + 2)

    @property
    def _channel_axis(self) -> int:
        return 1 if self.data_format == "channels_first" else -1

    def _input_channels(self, input_shape: Any) -> int:
        dim = TensorShape(input_shape)[self._channel_axis].value
        if dim is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
        return int(dim)

    def _kernel_shape(self, channels: int) -> tuple[int, ...]:
        return (*self.kernel_size, channels, self.filters)

    def build(self, input_shape: Any) -> None:
        channels = self._input_channels(input_shape)
        self.kernel = self.add_weight(
            name="kernel",
            shape=self._kernel_shape(channels),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
            trainable=True,
            dtype=self.dtype,
        )
        self._add_bias()
        self.input_spec = InputSpec(min_ndim=self.rank + 2, axes={self._channel_axis: channels})
        self.built = True

    def _add_bias(self) -> None:
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                name="bias",
                shape=(self.filters,),
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
                trainable=True,
                dtype=self.dtype,
            )

    def _convolve(self, inputs: Tensor) -> Tensor:
        padding = "VALID" if self.padding == "causal" else self.padding.upper()
        fmt = tf_data_format(self.data_format, self.rank + 2)
        if self.rank == 1:
            return nn_ops.conv1d(
                inputs, self.kernel, self.strides[0], padding, data_format=fmt, dilations=self.dilation_rate[0],
                name="conv1d",
            )  # fmt: skip
        if self.rank == 2:
            return nn_ops.conv2d(
                inputs, self.kernel, list(self.strides), padding, data_format=fmt, dilations=list(self.dilation_rate),
                name="Conv2D",
            )  # fmt: skip
        return nn_ops.conv3d(
            inputs, self.kernel, list(self.strides), padding, data_format=fmt, dilations=list(self.dilation_rate),
            name="Conv3D",
        )  # fmt: skip

    def _add_bias_to(self, outputs: Tensor) -> Tensor:
        if self.rank == 1 and self.data_format == "channels_first":
            return math_ops.add(outputs, array_ops.reshape(self.bias, (1, self.filters, 1)))
        fmt = "NCHW" if self.data_format == "channels_first" else "NHWC"
        return nn_ops.bias_add(outputs, self.bias, data_format=fmt)

    def call(self, inputs: Tensor) -> Tensor:
        input_shape = inputs.shape
        if self.padding == "causal":
            left = self.dilation_rate[0] * (self.kernel_size[0] - 1)
            pads = [[0, 0], [left, 0], [0, 0]] if self.data_format == "channels_last" else [[0, 0], [0, 0], [left, 0]]
            inputs = array_ops.pad(inputs, pads)
        outputs = self._convolve(inputs)
        if self.use_bias:
            outputs = self._add_bias_to(outputs)
        outputs.set_shape(self.compute_output_shape(input_shape))
        return self.activation(outputs) if self.activation is not None else outputs

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        shape = TensorShape(input_shape)
        if shape.ndims is None:
            return TensorShape(None)
        dims = shape.as_list()
        space = dims[2:] if self.data_format == "channels_first" else dims[1:-1]
        out = [
            conv_output_length(n, k, self.padding, s, d)
            for n, k, s, d in zip(space, self.kernel_size, self.strides, self.dilation_rate)
        ]
        if self.data_format == "channels_first":
            return TensorShape([dims[0], self.filters, *out])
        return TensorShape([dims[0], *out, self.filters])


class Conv1D(_Conv):
    """1-D convolution layer (``[batch, width, channels]``); ``padding`` may also be ``"causal"``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     tf.layers.Conv1D(4, 3)(tf.zeros([2, 10, 3])).shape.as_list()
        [2, 8, 4]
    """

    def __init__(self, filters: int, kernel_size: Any, **kwargs: Any) -> None:
        super().__init__(1, filters, kernel_size, **kwargs)


class Conv2D(_Conv):
    """2-D convolution layer (NHWC by default, ``data_format="channels_first"`` for NCHW).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     tf.layers.Conv2D(4, (3, 3), padding="same")(tf.zeros([2, 5, 5, 3])).shape.as_list()
        [2, 5, 5, 4]
    """

    def __init__(self, filters: int, kernel_size: Any, **kwargs: Any) -> None:
        super().__init__(2, filters, kernel_size, **kwargs)


class Conv3D(_Conv):
    """3-D convolution layer (NDHWC by default).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     tf.layers.Conv3D(2, 3, strides=2)(tf.zeros([1, 7, 7, 7, 1])).shape.as_list()
        [1, 3, 3, 3, 2]
    """

    def __init__(self, filters: int, kernel_size: Any, **kwargs: Any) -> None:
        super().__init__(3, filters, kernel_size, **kwargs)


class _SeparableConv(_Conv):
    """A depthwise convolution (``depth_multiplier`` filters per input channel), then a pointwise one, then the
    bias: weights ``depthwise_kernel`` ``kernel_size + (in, depth_multiplier)``, ``pointwise_kernel``
    ``(1,) * rank + (in * depth_multiplier, filters)`` and ``bias``."""

    def __init__(
        self,
        rank: int,
        filters: int,
        kernel_size: Any,
        depth_multiplier: int = 1,
        depthwise_initializer: Any = None,
        pointwise_initializer: Any = None,
        depthwise_regularizer: Any = None,
        pointwise_regularizer: Any = None,
        depthwise_constraint: Any = None,
        pointwise_constraint: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(rank, filters, kernel_size, **kwargs)
        self.depth_multiplier = int(depth_multiplier)
        self.depthwise_initializer = get_initializer(depthwise_initializer)
        self.pointwise_initializer = get_initializer(pointwise_initializer)
        self.depthwise_regularizer = depthwise_regularizer
        self.pointwise_regularizer = pointwise_regularizer
        self.depthwise_constraint = depthwise_constraint
        self.pointwise_constraint = pointwise_constraint

    def build(self, input_shape: Any) -> None:
        channels = self._input_channels(input_shape)
        self.depthwise_kernel = self.add_weight(
            name="depthwise_kernel",
            shape=(*self.kernel_size, channels, self.depth_multiplier),
            initializer=self.depthwise_initializer,
            regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint,
            trainable=True,
            dtype=self.dtype,
        )
        self.pointwise_kernel = self.add_weight(
            name="pointwise_kernel",
            shape=(*(1,) * self.rank, channels * self.depth_multiplier, self.filters),
            initializer=self.pointwise_initializer,
            regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint,
            trainable=True,
            dtype=self.dtype,
        )
        self._add_bias()
        self.input_spec = InputSpec(ndim=self.rank + 2, axes={self._channel_axis: channels})
        self.built = True

    def _separable(self, inputs: Tensor, depthwise: Tensor, pointwise: Tensor, strides: Any, rate: Any) -> Tensor:
        fmt = tf_data_format(self.data_format, 4)
        strides = (1, 1, *strides) if fmt == "NCHW" else (1, *strides, 1)
        padding = "VALID" if self.padding == "causal" else self.padding.upper()
        return nn_ops.separable_conv2d(
            inputs, depthwise, pointwise, strides=list(strides), padding=padding, rate=list(rate), data_format=fmt
        )


class SeparableConv1D(_SeparableConv):
    """Depthwise 1-D convolution (``depth_multiplier`` filters per input channel) then a pointwise one, built as TF
    builds it: on the input expanded to a one-row image, the bias added before the row is squeezed away.

    Weights: ``depthwise_kernel`` ``(kernel_size, in, depth_multiplier)``, ``pointwise_kernel``
    ``(1, in * depth_multiplier, filters)`` and ``bias``; ``padding`` may also be ``"causal"``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     layer = tf.layers.SeparableConv1D(5, 3, depth_multiplier=2)
        ...     y = layer(tf.zeros([1, 6, 3]))
        >>> y.shape.as_list(), [w.shape.as_list() for w in layer.weights]
        ([1, 4, 5], [[3, 3, 2], [1, 6, 5], [5]])
    """

    def __init__(self, filters: int, kernel_size: Any, **kwargs: Any) -> None:
        super().__init__(1, filters, kernel_size, **kwargs)

    def call(self, inputs: Tensor) -> Tensor:
        input_shape = inputs.shape
        channels_last = self.data_format == "channels_last"
        if self.padding == "causal":
            left = self.dilation_rate[0] * (self.kernel_size[0] - 1)
            inputs = array_ops.pad(
                inputs, [[0, 0], [left, 0], [0, 0]] if channels_last else [[0, 0], [0, 0], [left, 0]]
            )
        spatial_start = 1 if channels_last else 2
        inputs = array_ops.expand_dims(inputs, spatial_start)
        depthwise = array_ops.expand_dims(self.depthwise_kernel, 0)
        pointwise = array_ops.expand_dims(self.pointwise_kernel, 0)
        outputs = self._separable(inputs, depthwise, pointwise, self.strides * 2, (1, *self.dilation_rate))
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias, data_format="NHWC" if channels_last else "NCHW")
        outputs = array_ops.squeeze(outputs, [spatial_start])
        outputs.set_shape(self.compute_output_shape(input_shape))
        return self.activation(outputs) if self.activation is not None else outputs


class SeparableConv2D(_SeparableConv):
    """Depthwise convolution (``depth_multiplier`` filters per input channel) then a 1x1 pointwise convolution.

    Weights: ``depthwise_kernel`` ``kernel_size + (in, depth_multiplier)``, ``pointwise_kernel``
    ``(1, 1, in * depth_multiplier, filters)`` and ``bias``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     layer = tf.layers.SeparableConv2D(5, 3, depth_multiplier=2)
        ...     y = layer(tf.zeros([1, 6, 6, 3]))
        >>> y.shape.as_list(), [w.name for w in layer.weights]
        ([1, 4, 4, 5], ['separable_conv2d/depthwise_kernel:0', 'separable_conv2d/pointwise_kernel:0', \
'separable_conv2d/bias:0'])
    """

    def __init__(self, filters: int, kernel_size: Any, **kwargs: Any) -> None:
        super().__init__(2, filters, kernel_size, **kwargs)

    def _convolve(self, inputs: Tensor) -> Tensor:
        return self._separable(inputs, self.depthwise_kernel, self.pointwise_kernel, self.strides, self.dilation_rate)


class _ConvTranspose(_Conv):
    """A transposed convolution: kernel ``kernel_size + (filters, in_channels)``."""

    def __init__(self, rank: int, filters: int, kernel_size: Any, output_padding: Any = None, **kwargs: Any) -> None:
        super().__init__(rank, filters, kernel_size, **kwargs)
        self.output_padding = (
            None if output_padding is None else normalize_tuple(output_padding, rank, "output_padding")
        )

    def _kernel_shape(self, channels: int) -> tuple[int, ...]:
        return (*self.kernel_size, self.filters, channels)

    def _out_sizes(self, sizes: list[Any]) -> list[Any]:
        pads = self.output_padding or (None,) * self.rank
        return [
            deconv_output_length(n, k, self.padding, s, p, d)
            for n, k, s, p, d in zip(sizes, self.kernel_size, self.strides, pads, self.dilation_rate)
        ]

    def call(self, inputs: Tensor) -> Tensor:
        dynamic = array_ops.shape(inputs)
        first = self.data_format == "channels_first"
        axes = list(range(2, self.rank + 2)) if first else list(range(1, self.rank + 1))
        static = inputs.shape.as_list() if inputs.shape.ndims is not None else [None] * (self.rank + 2)
        sizes = [static[a] if static[a] is not None else dynamic[a] for a in axes]
        out = []
        for n, k, s, p, d in zip(
            sizes, self.kernel_size, self.strides, self.output_padding or (None,) * self.rank, self.dilation_rate
        ):
            out.append(deconv_output_length(n, k, self.padding, s, p, d) if not isinstance(n, Tensor) else None)
            if isinstance(n, Tensor):
                # A size known only at run time: the same arithmetic on tensors.
                out[-1] = _deconv_length_tensor(n, k, self.padding, s, p, d)
        shape = [dynamic[0], self.filters, *out] if first else [dynamic[0], *out, self.filters]
        output_shape = array_ops.stack(shape)
        fmt = tf_data_format(self.data_format, self.rank + 2)
        strides = [1, 1, *self.strides] if first else [1, *self.strides, 1]
        dilations = [1, 1, *self.dilation_rate] if first else [1, *self.dilation_rate, 1]
        transpose = nn_ops.conv2d_transpose if self.rank == 2 else nn_ops.conv3d_transpose
        outputs = transpose(
            inputs,
            self.kernel,
            output_shape,
            strides,
            padding=self.padding.upper(),
            data_format=fmt,
            dilations=dilations,
        )
        outputs.set_shape(self.compute_output_shape(inputs.shape))
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias, data_format="NCHW" if first else "NHWC")
        return self.activation(outputs) if self.activation is not None else outputs

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        shape = TensorShape(input_shape)
        if shape.ndims is None:
            return TensorShape(None)
        dims = shape.as_list()
        if self.data_format == "channels_first":
            return TensorShape([dims[0], self.filters, *self._out_sizes(dims[2:])])
        return TensorShape([dims[0], *self._out_sizes(dims[1:-1]), self.filters])


def _deconv_length_tensor(n: Tensor, k: int, padding: str, s: int, p: Any, d: int) -> Tensor:
    size = k + (k - 1) * (d - 1)
    if p is None:
        if padding == "valid":
            return n * s + max(size - s, 0)
        return n * s
    pad = {"same": size // 2, "valid": 0}[padding]
    return (n - 1) * s + size - 2 * pad + p


class Conv2DTranspose(_ConvTranspose):
    """Transposed 2-D convolution ("deconvolution") layer.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     tf.layers.Conv2DTranspose(4, 3, strides=2, padding="same")(tf.zeros([1, 5, 5, 3])).shape.as_list()
        [1, 10, 10, 4]
    """

    def __init__(self, filters: int, kernel_size: Any, **kwargs: Any) -> None:
        super().__init__(2, filters, kernel_size, **kwargs)


class Conv3DTranspose(_ConvTranspose):
    """Transposed 3-D convolution layer.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     tf.layers.Conv3DTranspose(2, 3, strides=2)(tf.zeros([1, 2, 2, 2, 3])).shape.as_list()
        [1, 5, 5, 5, 2]
    """

    def __init__(self, filters: int, kernel_size: Any, **kwargs: Any) -> None:
        super().__init__(3, filters, kernel_size, **kwargs)


def _functional(cls: type, fn_name: str, doc: str):
    def build(inputs: Any, filters: int, kernel_size: Any, *args: Any, **kwargs: Any) -> Tensor:
        reuse = kwargs.pop("reuse", None)
        name = kwargs.get("name")
        layer = cls(filters, kernel_size, *args, _scope=name, _reuse=reuse, **kwargs)
        return layer(inputs)

    build.__name__ = build.__qualname__ = fn_name
    build.__doc__ = doc
    return build


conv1d = _functional(
    Conv1D,
    "conv1d",
    """Functional :class:`Conv1D` (``tf.layers.conv1d(inputs, filters, kernel_size, strides=1, padding="valid",
    data_format="channels_last", dilation_rate=1, activation=None, ..., name=None, reuse=None)``).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     tf.layers.conv1d(tf.zeros([2, 9, 3]), 4, 3, padding="causal").shape.as_list()
        [2, 9, 4]
    """,
)
conv2d = _functional(
    Conv2D,
    "conv2d",
    """Functional :class:`Conv2D` (``tf.layers.conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
    data_format="channels_last", dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer=None,
    bias_initializer=zeros, kernel_regularizer=None, ..., trainable=True, name=None, reuse=None)``).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     tf.layers.conv2d(tf.zeros([1, 6, 6, 2]), 3, [3, 3]).name
        'conv2d/BiasAdd:0'
    """,
)
conv3d = _functional(
    Conv3D,
    "conv3d",
    """Functional :class:`Conv3D`.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     tf.layers.conv3d(tf.zeros([1, 4, 4, 4, 2]), 3, 3, padding="same").shape.as_list()
        [1, 4, 4, 4, 3]
    """,
)
separable_conv1d = _functional(
    SeparableConv1D,
    "separable_conv1d",
    """Functional :class:`SeparableConv1D`.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     tf.layers.separable_conv1d(tf.zeros([1, 6, 2]), 3, 3, padding="same").shape.as_list()
        [1, 6, 3]
    """,
)
separable_conv2d = _functional(
    SeparableConv2D,
    "separable_conv2d",
    """Functional :class:`SeparableConv2D`.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     tf.layers.separable_conv2d(tf.zeros([1, 6, 6, 2]), 3, 3).shape.as_list()
        [1, 4, 4, 3]
    """,
)
conv2d_transpose = _functional(
    Conv2DTranspose,
    "conv2d_transpose",
    """Functional :class:`Conv2DTranspose`.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     tf.layers.conv2d_transpose(tf.zeros([1, 3, 3, 2]), 4, 3, strides=2).shape.as_list()
        [1, 7, 7, 4]
    """,
)
conv3d_transpose = _functional(
    Conv3DTranspose,
    "conv3d_transpose",
    """Functional :class:`Conv3DTranspose`.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     tf.layers.conv3d_transpose(tf.zeros([1, 2, 2, 2, 2]), 4, 2, strides=2).shape.as_list()
        [1, 4, 4, 4, 4]
    """,
)
