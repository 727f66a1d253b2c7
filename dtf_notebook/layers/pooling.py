"""``tf.layers`` pooling: ``MaxPooling1D/2D/3D``, ``AveragePooling1D/2D/3D`` and their functional forms.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     y = tf.layers.max_pooling2d(tf.zeros([1, 6, 6, 3]), pool_size=2, strides=2)
    >>> y.name, y.shape.as_list()
    ('max_pooling2d/MaxPool:0', [1, 3, 3, 3])
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.layers.base import InputSpec, Layer
from dtf_notebook.layers.utils import conv_output_length, normalize_data_format, normalize_padding, normalize_tuple
from dtf_notebook.ops import array_ops, nn_ops

__all__ = [
    "MaxPooling1D",
    "MaxPooling2D",
    "MaxPooling3D",
    "AveragePooling1D",
    "AveragePooling2D",
    "AveragePooling3D",
    "max_pooling1d",
    "max_pooling2d",
    "max_pooling3d",
    "average_pooling1d",
    "average_pooling2d",
    "average_pooling3d",
]


class _Pooling(Layer):
    """An N-D pool over ``pool_size`` windows moved by ``strides``."""

    def __init__(
        self,
        rank: int,
        kind: str,
        pool_size: Any,
        strides: Any,
        padding: str = "valid",
        data_format: str = "channels_last",
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(name=name, **kwargs)
        self.rank, self.kind = rank, kind
        self.pool_size = normalize_tuple(pool_size, rank, "pool_size")
        self.strides = normalize_tuple(self.pool_size if strides is None else strides, rank, "strides")
        self.padding = normalize_padding(padding)
        self.data_format = normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=rank + 2)

    def call(self, inputs: Tensor) -> Tensor:
        first = self.data_format == "channels_first"
        padding = self.padding.upper()
        if self.rank == 1:
            # Keras pools [batch, steps, channels] as a 2-D image with a width of 1.
            axis = 3 if first else 2
            x = array_ops.expand_dims(inputs, axis)
            if first:
                size, stride = [1, 1, self.pool_size[0], 1], [1, 1, self.strides[0], 1]
            else:
                size, stride = [1, self.pool_size[0], 1, 1], [1, self.strides[0], 1, 1]
            pool = nn_ops.max_pool if self.kind == "max" else nn_ops.avg_pool
            y = pool(x, size, stride, padding, "NCHW" if first else "NHWC")
            return array_ops.squeeze(y, [axis])
        if self.rank == 2:
            size = [1, 1, *self.pool_size] if first else [1, *self.pool_size, 1]
            stride = [1, 1, *self.strides] if first else [1, *self.strides, 1]
            pool = nn_ops.max_pool if self.kind == "max" else nn_ops.avg_pool
            return pool(inputs, size, stride, padding, "NCHW" if first else "NHWC")
        # 3-D: Keras transposes channels-first inputs to NDHWC and back.
        if first:
            inputs = array_ops.transpose(inputs, (0, 2, 3, 4, 1))
        pool = nn_ops.max_pool3d if self.kind == "max" else nn_ops.avg_pool3d
        y = pool(inputs, [1, *self.pool_size, 1], [1, *self.strides, 1], padding)
        return array_ops.transpose(y, (0, 4, 1, 2, 3)) if first else y

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        dims = TensorShape(input_shape).as_list()
        first = self.data_format == "channels_first"
        space = dims[2:] if first else dims[1:-1]
        out = [conv_output_length(n, k, self.padding, s) for n, k, s in zip(space, self.pool_size, self.strides)]
        return TensorShape([dims[0], dims[1], *out] if first else [dims[0], *out, dims[-1]])


def _pool_class(name: str, rank: int, kind: str, doc: str) -> type:
    def init(
        self: Any,
        pool_size: Any,
        strides: Any,
        padding: str = "valid",
        data_format: str = "channels_last",
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        _Pooling.__init__(self, rank, kind, pool_size, strides, padding, data_format, name, **kwargs)

    return type(name, (_Pooling,), {"__init__": init, "__doc__": doc, "__module__": __name__})


MaxPooling1D = _pool_class(
    "MaxPooling1D",
    1,
    "max",
    """Max pooling of ``[batch, steps, channels]`` inputs.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     tf.layers.MaxPooling1D(2, 2)(tf.zeros([1, 7, 3])).shape.as_list()
        [1, 3, 3]
    """,
)
MaxPooling2D = _pool_class(
    "MaxPooling2D",
    2,
    "max",
    """Max pooling of images (NHWC, or NCHW with ``data_format="channels_first"``).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     tf.layers.MaxPooling2D(3, 2, padding="same")(tf.zeros([1, 7, 7, 3])).shape.as_list()
        [1, 4, 4, 3]
    """,
)
MaxPooling3D = _pool_class(
    "MaxPooling3D",
    3,
    "max",
    """Max pooling of volumes (NDHWC by default).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     tf.layers.MaxPooling3D(2, 2)(tf.zeros([1, 4, 4, 4, 1])).shape.as_list()
        [1, 2, 2, 2, 1]
    """,
)
AveragePooling1D = _pool_class(
    "AveragePooling1D",
    1,
    "avg",
    """Average pooling of ``[batch, steps, channels]`` inputs.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     tf.layers.AveragePooling1D(2, 1)(tf.zeros([1, 5, 3])).shape.as_list()
        [1, 4, 3]
    """,
)
AveragePooling2D = _pool_class(
    "AveragePooling2D",
    2,
    "avg",
    """Average pooling of images; ``same`` windows count only the real elements.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     tf.layers.AveragePooling2D(2, 2)(tf.zeros([1, 4, 4, 3])).shape.as_list()
        [1, 2, 2, 3]
    """,
)
AveragePooling3D = _pool_class(
    "AveragePooling3D",
    3,
    "avg",
    """Average pooling of volumes.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     tf.layers.AveragePooling3D(2, 2, padding="same")(tf.zeros([1, 3, 3, 3, 1])).shape.as_list()
        [1, 2, 2, 2, 1]
    """,
)


def _pool_function(cls: type, fn_name: str, rank: int) -> Any:
    def pool(
        inputs: Any,
        pool_size: Any,
        strides: Any,
        padding: str = "valid",
        data_format: str = "channels_last",
        name: str | None = None,
    ) -> Tensor:
        return cls(pool_size=pool_size, strides=strides, padding=padding, data_format=data_format, name=name)(inputs)

    pool.__name__ = pool.__qualname__ = fn_name
    pool.__doc__ = f"""Functional :class:`{cls.__name__}`: ``{fn_name}(inputs, pool_size, strides, padding="valid",
    data_format="channels_last", name=None)``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     y = tf.layers.{fn_name}(tf.zeros([1{", 4" * rank}, 2]), 2, 2)
        >>> y.shape.as_list()
        [1{", 2" * rank}, 2]
    """
    return pool


max_pooling1d = _pool_function(MaxPooling1D, "max_pooling1d", 1)
max_pooling2d = _pool_function(MaxPooling2D, "max_pooling2d", 2)
max_pooling3d = _pool_function(MaxPooling3D, "max_pooling3d", 3)
average_pooling1d = _pool_function(AveragePooling1D, "average_pooling1d", 1)
average_pooling2d = _pool_function(AveragePooling2D, "average_pooling2d", 2)
average_pooling3d = _pool_function(AveragePooling3D, "average_pooling3d", 3)
