"""TF's N-d convolution and pooling front ends, built as TF builds them: ``convolution``, ``with_space_to_batch``
(dilation as ``SpaceToBatchND`` -> op -> ``BatchToSpaceND``), ``atrous_conv2d``, ``atrous_conv2d_transpose``,
``conv1d_transpose``, ``pool``, ``max_pool_v2``/``avg_pool_v2`` and the depthwise convolution's gradient builders.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     y = atrous_conv2d(tf.ones([1, 9, 9, 2]), tf.ones([3, 3, 2, 4]), rate=2, padding="SAME")
    ...     y.shape.as_list(), y.op.type
    ([1, 9, 9, 4], 'BatchToSpaceND')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.ops import array_ops
from dtf_notebook.ops.array.space_depth import (
    batch_to_space,
    batch_to_space_nd,
    required_space_to_batch_paddings,
    space_to_batch,
    space_to_batch_nd,
)
from dtf_notebook.ops.nn.conv import conv2d, conv2d_backprop_input, conv2d_transpose
from dtf_notebook.ops.nn.conv3d import conv3d, conv3d_transpose
from dtf_notebook.ops.nn.conv_family import backprop_filter, backprop_input
from dtf_notebook.ops.nn.conv_window import get_sequence, window_attrs
from dtf_notebook.ops.nn.depthwise import conv1d
from dtf_notebook.ops.nn.pooling import avg_pool, max_pool, max_pool2d
from dtf_notebook.ops.nn.pooling3d import avg_pool1d, avg_pool3d, max_pool1d, max_pool3d
from dtf_notebook.ops.op_helpers import constant_value

__all__ = [
    "convolution",
    "with_space_to_batch",
    "atrous_conv2d",
    "atrous_conv2d_transpose",
    "conv1d_transpose",
    "pool",
    "max_pool_v2",
    "avg_pool_v2",
    "conv_transpose",
    "depthwise_conv2d_native_backprop_input",
    "depthwise_conv2d_native_backprop_filter",
    "depthwise_conv2d_backprop_input",
    "depthwise_conv2d_backprop_filter",
]


# ---- with_space_to_batch -------------------------------------------------------------------------------------
def _convert_padding(padding: Any, expected_length: int) -> tuple[str, list[int]]:
    """TF's ``convert_padding``: a mode string, or explicit ``[[before, after], ...]`` pairs as ``EXPLICIT``."""
    if padding == "EXPLICIT":
        raise ValueError(
            "'EXPLICIT' is not a valid value for `padding`. To use explicit padding, `padding` must be a list."
        )
    if not isinstance(padding, list | tuple):
        return padding, []
    explicit: list[int] = []
    for i, pair in enumerate(padding):
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            raise ValueError(
                "When `padding` is a list, each element of `padding` must be a list/tuple of size 2. Received: "
                f"padding={padding} with element at index {i}"
            )
        explicit.extend(int(p) for p in pair)
    if len(padding) != expected_length:
        raise ValueError(f"When padding is a list, it must be of size {expected_length}. Received: padding={padding}")
    return "EXPLICIT", explicit


def _base_paddings(filter_shape: Any, num_spatial_dims: int, rate: Any) -> Any:
    """SAME padding of a filter dilated by ``rate``: ``(k - 1) * rate`` split with the extra one at the end."""
    if isinstance(filter_shape, np.ndarray) and isinstance(rate, np.ndarray):
        extra = (filter_shape[:num_spatial_dims] - 1) * rate
        start = extra // 2
        return np.stack([start, extra - start], axis=1).astype(np.int32)
    extra = (filter_shape[:num_spatial_dims] - 1) * rate
    start = extra // 2
    return array_ops.stack([[start[i], extra[i] - start[i]] for i in range(num_spatial_dims)])


def _adjust(orig: Any, fill_value: int, spatial_dims: Sequence[int]) -> Any:
    """``orig`` (one row per spatial dim) with rows of ``fill_value`` for the non-spatial dims between them."""
    if isinstance(orig, Tensor):
        const = constant_value(orig)
        fill_dims = orig.shape.as_list()[1:]
        dtype = orig.dtype.np_dtype
        values = const if const is not None else orig
    else:
        const = values = np.asarray(orig)
        fill_dims, dtype = list(values.shape[1:]), values.dtype
    parts: list[Any] = []
    prev, i = 0, 0
    while i < len(spatial_dims):
        start_i, start_dim = i, spatial_dims[i]
        if start_dim > 1:
            parts.append(np.full([start_dim - 1 - prev] + fill_dims, fill_value, dtype=dtype))
        while i + 1 < len(spatial_dims) and spatial_dims[i + 1] == spatial_dims[i] + 1:
            i += 1
        parts.append(values[start_i : i + 1])
        prev = spatial_dims[i]
        i += 1
    return np.concatenate(parts) if const is not None else array_ops.concat(parts, 0)


def with_space_to_batch(
    input: Any,  # noqa: A002 - TF's name
    dilation_rate: Any,
    padding: Any,
    op: Callable[[Tensor, int, str], Tensor],
    filter_shape: Any = None,
    spatial_dims: Sequence[int] | None = None,
    data_format: str | None = None,
) -> Tensor:
    """Runs ``op(converted_input, num_spatial_dims, padding)`` on a dilated grid, as TF's atrous convolution does.

    The input is rearranged with ``space_to_batch_nd`` by ``dilation_rate`` (padded so that ``SAME`` comes out
    right), ``op`` runs ``VALID`` on it, and ``batch_to_space_nd`` puts the result back. A rate of all ones
    calls ``op`` on the input with ``padding`` unchanged.

    Args:
        input: Tensor with ``spatial_dims`` as its spatial axes.
        dilation_rate: int vector, one rate per spatial axis.
        padding: ``"SAME"``, ``"VALID"`` or explicit pairs (one per axis of ``input``).
        op: ``op(tensor, num_spatial_dims, padding) -> tensor``.
        filter_shape: The filter's spatial shape (needed for ``SAME``).
        spatial_dims: Increasing spatial axes (default 1..N, or 2..N+1 for an ``NC...`` ``data_format``).
        data_format: Whether channels come first (``NC...``).

    Raises:
        ValueError: bad rates, spatial axes or padding.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x, w = tf.ones([1, 6, 6, 1]), tf.ones([2, 2, 1, 1])
        ...     y = tf.nn.with_space_to_batch(x, [2, 2], "VALID",
        ...                                   lambda t, n, p: tf.nn.conv2d(t, w, [1, 1, 1, 1], p))
        ...     with tf.Session() as sess:
        ...         print(sess.run(y)[0, :, :, 0])
        [[4. 4. 4. 4.]
         [4. 4. 4. 4.]
         [4. 4. 4. 4.]
         [4. 4. 4. 4.]]
    """
    input = convert_to_tensor(input, name="input")
    rate = convert_to_tensor(dilation_rate, dtype=dtypes.int32, name="dilation_rate")
    if rate.shape.ndims not in (None, 1):
        raise ValueError(
            f"`dilation_rate.shape.rank` must be 1. Received: dilation_rate={rate} of rank {rate.shape.ndims}"
        )
    if not rate.shape.is_fully_defined():
        raise ValueError(f"`dilation_rate.shape` must be fully defined. Received: dilation_rate={rate}")
    num_spatial_dims = rate.shape[0].value
    channels_first = data_format is not None and data_format.startswith("NC")
    start = 2 if channels_first else 1
    if spatial_dims is None:
        spatial_dims = range(start, num_spatial_dims + start)
    orig_spatial_dims = list(spatial_dims)
    spatial_dims = sorted({int(x) for x in orig_spatial_dims})
    if spatial_dims != orig_spatial_dims or any(x < 1 for x in spatial_dims):
        raise ValueError(
            f"`spatial_dims` must be a monotonically increasing sequence of positive integers. Received: "
            f"spatial_dims={orig_spatial_dims}"
        )
    expected_rank = spatial_dims[-1] if channels_first else spatial_dims[-1] + 1
    if input.shape.ndims is not None and input.shape.ndims < expected_rank:
        raise ValueError(
            f"`input.shape.rank` must be at least {expected_rank}. Received: input.shape={input.shape} with rank "
            f"{input.shape.ndims}"
        )
    const_rate = constant_value(rate)
    rate_value: Any = rate
    if const_rate is not None:
        rate_value = np.asarray(const_rate, np.int32)
        if np.any(rate_value < 1):
            raise ValueError(f"`dilation_rate` must be positive. Received: dilation_rate={rate_value}")
        if np.all(rate_value == 1):
            return op(input, num_spatial_dims, padding)
    padding, explicit = _convert_padding(padding, num_spatial_dims + 2)
    if padding == "SAME":
        if filter_shape is None:
            raise ValueError(
                f"`filter_shape` must be specified for `padding='SAME'`. Received: filter_shape={filter_shape} and "
                f"padding={padding}"
            )
        shape_t = convert_to_tensor(filter_shape, name="filter_shape")
        const_shape = constant_value(shape_t)
        shape_value = np.asarray(const_shape, np.int32) if const_shape is not None else shape_t
        base_paddings = _base_paddings(shape_value, num_spatial_dims, rate_value)
    elif padding == "VALID":
        base_paddings = np.zeros([num_spatial_dims, 2], np.int32)
    elif padding == "EXPLICIT":
        pairs = np.array(explicit).reshape([num_spatial_dims + 2, 2])
        base_paddings = pairs[2:] if channels_first else pairs[1:-1]
    else:
        raise ValueError(f"`padding` must be one of 'SAME' or 'VALID'. Received: padding={padding}")
    static = input.shape.as_list() if input.shape.ndims is not None else None
    if static is not None and all(static[i] is not None for i in spatial_dims):
        input_spatial_shape: Any = [static[i] for i in spatial_dims]
    else:
        shape = array_ops.shape(input)
        input_spatial_shape = array_ops.stack([shape[i] for i in spatial_dims])
    paddings, crops = required_space_to_batch_paddings(
        input_shape=input_spatial_shape, base_paddings=base_paddings, block_shape=rate_value
    )
    block = _adjust(rate_value if isinstance(rate_value, np.ndarray) else rate, 1, spatial_dims)
    paddings = _adjust(paddings, 0, spatial_dims)
    crops = _adjust(crops, 0, spatial_dims)
    converted = space_to_batch_nd(input, block_shape=block, paddings=paddings)
    result = op(converted, num_spatial_dims, "VALID")
    return batch_to_space_nd(result, block_shape=block, crops=crops)


# ---- convolution ---------------------------------------------------------------------------------------------------
_CHANNELS_LAST = ("NWC", "NHC", "NHWC", "NDHWC")


def _run_conv(
    x: Tensor, f: Tensor, n: int, strides: list[int], padding: Any, data_format: Any, dilations: Any, name: Any
) -> Tensor:
    """The plain (undilated-by-space-to-batch) 1/2/3-D convolution with full-length ``strides``."""
    if n == 2:
        return conv2d(x, f, strides, padding, data_format=data_format or "NHWC", dilations=dilations, name=name)
    if n == 3:
        return conv3d(x, f, strides, padding, data_format=data_format or "NDHWC", dilations=dilations, name=name)
    channels_first = data_format is not None and data_format.startswith("NC")
    stride = strides[2] if channels_first else strides[1]
    return conv1d(x, f, stride, padding, data_format=data_format or "NWC", dilations=dilations, name=name)


def convolution(
    input: Any,  # noqa: A002 - TF's names
    filter: Any = None,  # noqa: A002
    padding: Any = None,
    strides: Any = None,
    dilation_rate: Any = None,
    name: str | None = None,
    data_format: str | None = None,
    filters: Any = None,
    dilations: Any = None,
) -> Tensor:
    """N-d convolution (1, 2 or 3 spatial axes, from the filter's rank), dilated through :func:`with_space_to_batch`.

    Args:
        input: ``[batch, spatial..., channels]`` (or channels first with an ``NC...`` ``data_format``).
        filter: ``[spatial..., in_channels, out_channels]`` (``filters`` is TF2's name).
        padding: ``"SAME"``, ``"VALID"`` or explicit pairs.
        strides: One stride per spatial axis (not with a dilation above 1).
        dilation_rate: One rate per spatial axis (``dilations`` is TF2's name).
        name: Name scope (default ``convolution``).
        data_format: ``NWC``/``NCW``, ``NHWC``/``NCHW`` or ``NDHWC``/``NCDHW``.

    Raises:
        ValueError: both spellings of an argument, unknown ranks, or strides with dilation.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     y = tf.nn.convolution(tf.ones([2, 8, 3]), tf.ones([3, 3, 5]), "VALID", dilation_rate=[2])
        ...     y.shape.as_list()
        [2, 4, 5]
    """
    if filter is not None and filters is not None:
        raise ValueError("Cannot specify both 'filter' and 'filters'.")
    if dilation_rate is not None and dilations is not None:
        raise ValueError("Cannot specify both 'dilation_rate' and 'dilations'.")
    filter = filters if filter is None else filter
    dilation_rate = dilations if dilation_rate is None else dilation_rate
    x = input if isinstance(input, Tensor) else convert_to_tensor(input, name="input")
    f = filter if isinstance(filter, Tensor) else convert_to_tensor(filter, name="filters")
    if f.shape.ndims:
        n = f.shape.ndims - 2
    elif x.shape.ndims:
        n = x.shape.ndims - 2
    else:
        raise ValueError(
            "When `num_spatial_dims` is not set, one of `input.shape.rank` or `filters.shape.rank` must be known."
        )
    if n not in (1, 2, 3):
        raise ValueError(f"`num_spatial_dims` must be 1, 2, or 3. Received: num_spatial_dims={n}.")
    channel_index = n + 1 if data_format is None or data_format in _CHANNELS_LAST else 1
    is_dilated = dilation_rate is not None and any(d != 1 for d in get_sequence(dilation_rate, n, channel_index, "d"))
    dilations_full = get_sequence(dilation_rate, n, channel_index, "dilations")
    strides_full = get_sequence(strides, n, channel_index, "strides")
    with name_scope(name, "convolution", [x, f]) as scope:
        if not is_dilated:
            return _run_conv(x, f, n, strides_full, padding, data_format, dilations_full, scope)
        spatial = slice(2, None) if channel_index == 1 else slice(1, -1)
        if any(s > 1 for s in strides_full[spatial]):
            raise ValueError(
                f"`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
                f"strides={strides_full[spatial]} and dilation_rate={dilations_full[spatial]}"
            )
        filter_shape = f.shape.as_list()[:n] if f.shape.is_fully_defined() else array_ops.shape(f)

        def conv_op(converted: Tensor, num_spatial_dims: int, conv_padding: Any) -> Tensor:
            return _run_conv(converted, f, n, strides_full, conv_padding, data_format, None, scope)

        return with_space_to_batch(
            x, dilations_full[spatial], padding, conv_op, filter_shape=filter_shape, data_format=data_format
        )


def atrous_conv2d(value: Any, filters: Any, rate: int, padding: str, name: str | None = None) -> Tensor:
    """2-D convolution with holes: ``filters`` sampled every ``rate`` pixels (:func:`convolution` with dilation).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     y = tf.nn.atrous_conv2d(tf.reshape(tf.range(25.0), [1, 5, 5, 1]), tf.ones([2, 2, 1, 1]), 2, "VALID")
        ...     print(sess.run(y)[0, :, :, 0])
        [[24. 28. 32.]
         [44. 48. 52.]
         [64. 68. 72.]]
    """
    return convolution(
        input=value, filter=filters, padding=padding, dilation_rate=np.broadcast_to(rate, (2,)), name=name
    )


def atrous_conv2d_transpose(
    value: Any, filters: Any, output_shape: Any, rate: int, padding: str, name: str | None = None
) -> Tensor:
    """The transpose (gradient) of :func:`atrous_conv2d`, built as TF builds it (space-to-batch around a
    ``Conv2DBackpropInput``).

    Args:
        value: ``[batch, height, width, in_channels]``.
        filters: ``[height, width, out_channels, in_channels]``.
        output_shape: The output's ``[batch, height, width, out_channels]`` (a list or int vector).
        rate: The dilation (>= 1).
        padding: ``"SAME"`` or ``"VALID"``.
        name: Name scope.

    Raises:
        ValueError: a channel mismatch, ``rate < 1``, a bad ``output_shape`` or padding.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x, w = tf.ones([1, 3, 3, 2]), tf.ones([2, 2, 4, 2])
        ...     y = tf.nn.atrous_conv2d_transpose(x, w, [1, 5, 5, 4], 2, "VALID")
        ...     with tf.Session() as sess:
        ...         print(sess.run(y).shape)
        (1, 5, 5, 4)
    """
    with name_scope(name, "atrous_conv2d_transpose", [value, filters, output_shape]) as scope:
        value = convert_to_tensor(value, name="value")
        filters = convert_to_tensor(filters, name="filters")
        if not value.shape[3].is_compatible_with(filters.shape[3]):
            raise ValueError(
                "`value` channel count must be compatible with `filters` input channel count. Received: "
                f"value.shape={value.shape} and filters.shape={filters.shape}."
            )
        if rate < 1:
            raise ValueError(f"`rate` cannot be less than one. Received: rate={rate}")
        if rate == 1:
            return conv2d_transpose(value, filters, output_shape, strides=[1, 1, 1, 1], padding=padding)
        shape_t = convert_to_tensor(output_shape, name="output_shape")
        if not shape_t.shape.is_compatible_with(TensorShape([4])):
            raise ValueError(f"`output_shape` must have shape (4,). Received: output_shape={shape_t.shape}")
        if isinstance(output_shape, tuple):
            output_shape = list(output_shape)
        if isinstance(output_shape, list | np.ndarray):
            if not filters.shape[2].is_compatible_with(output_shape[3]):
                raise ValueError(
                    "`output_shape` channel count must be compatible with `filters` output channel count. Received: "
                    f"output_shape={output_shape} and filters.shape={filters.shape}."
                )
        else:
            output_shape = shape_t
        if padding == "SAME":
            filter_shape = filters.shape.as_list() if filters.shape.is_fully_defined() else array_ops.shape(filters)
            fh, fw = filter_shape[0], filter_shape[1]
            pad_h, pad_w = fh + (fh - 1) * (rate - 1) - 1, fw + (fw - 1) * (rate - 1) - 1
            pad_top, pad_left = pad_h // 2, pad_w // 2
            pad_bottom, pad_right = pad_h - pad_top, pad_w - pad_left
        elif padding == "VALID":
            pad_top = pad_bottom = pad_left = pad_right = 0
        else:
            raise ValueError(f"`padding` must be either 'VALID' or 'SAME'. Received: padding={padding}")
        in_height = output_shape[1] + pad_top + pad_bottom
        in_width = output_shape[2] + pad_left + pad_right
        pad_bottom_extra = (rate - in_height % rate) % rate
        pad_right_extra = (rate - in_width % rate) % rate
        value = space_to_batch(value, paddings=[[0, pad_bottom_extra], [0, pad_right_extra]], block_size=rate)
        input_sizes = [
            rate * rate * output_shape[0],
            (in_height + pad_bottom_extra) // rate,
            (in_width + pad_right_extra) // rate,
            output_shape[3],
        ]
        if any(isinstance(s, Tensor) for s in input_sizes):
            input_sizes = array_ops.stack(input_sizes)
        value = conv2d_backprop_input(input_sizes, filters, value, strides=[1, 1, 1, 1], padding="VALID")
        crops = [[pad_top, pad_bottom + pad_bottom_extra], [pad_left, pad_right + pad_right_extra]]
        return batch_to_space(value, crops=crops, block_size=rate, name=scope)


def conv1d_transpose(
    input: Any,  # noqa: A002 - TF's name
    filters: Any,
    output_shape: Any,
    strides: Any,
    padding: str = "SAME",
    data_format: str = "NWC",
    dilations: Any = None,
    name: str | None = None,
) -> Tensor:
    """The transpose of ``conv1d``: a ``Conv2DBackpropInput`` over a height of 1.

    ``filters`` is ``[width, output_channels, in_channels]``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.nn.conv1d_transpose(tf.ones([2, 4, 3]), tf.ones([3, 5, 3]), [2, 8, 5], 2).shape.as_list()
        [2, 8, 5]
    """
    with name_scope(name, "conv1d_transpose", [input, filters, output_shape]) as scope:
        if data_format is None or data_format == "NWC":
            fmt, spatial_start, channel = "NHWC", 1, 2
        elif data_format == "NCW":
            fmt, spatial_start, channel = "NCHW", 2, 1
        else:
            raise ValueError(f"`data_format` must be 'NWC' or 'NCW'. Received: data_format={data_format}")
        strides_ = [1] + get_sequence(strides, 1, channel, "stride")
        dilations_ = [1] + get_sequence(dilations, 1, channel, "dilations")
        x = array_ops.expand_dims(convert_to_tensor(input, name="input"), spatial_start)
        f = array_ops.expand_dims(convert_to_tensor(filters, name="filters"), 0)
        if isinstance(output_shape, Tensor):
            shape: Any = array_ops.concat([output_shape[:spatial_start], [1], output_shape[spatial_start:]], 0)
        else:
            # A known output shape stays a constant, so that the result's static shape is known.
            shape = [*list(output_shape)[:spatial_start], 1, *list(output_shape)[spatial_start:]]
        result = conv2d_backprop_input(
            shape, f, x, strides_, padding, data_format=fmt, dilations=dilations_, name=scope
        )
        return array_ops.squeeze(result, [spatial_start])


def conv_transpose(
    input: Any,  # noqa: A002 - TF's name
    filters: Any,
    output_shape: Any,
    strides: Any,
    padding: str = "SAME",
    data_format: str | None = None,
    dilations: Any = None,
    name: str | None = None,
) -> Tensor:
    """The transpose of ``convolution``: ``conv1d_transpose``, ``conv2d_transpose`` or ``conv3d_transpose`` by the
    length of ``output_shape``.

    Raises:
        ValueError: ``output_shape`` has no length, or one other than 3, 4 or 5.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     y = tf.nn.conv_transpose(tf.ones([1, 3, 3, 2]), tf.ones([3, 3, 4, 2]), [1, 6, 6, 4], 2)
        ...     y.shape.as_list()
        [1, 6, 6, 4]
    """
    with name_scope(name, "conv_transpose", [input, filters, output_shape]) as scope:
        if isinstance(output_shape, Tensor):
            n = output_shape.shape[0].value - 2 if output_shape.shape.ndims == 1 else None
        elif isinstance(output_shape, Sequence | np.ndarray):
            n = len(output_shape) - 2
        else:
            raise ValueError(
                f"`output_shape` must be a tensor or sized collection. Received: output_shape={output_shape}"
            )
        if n is None or not 1 <= n <= 3:
            raise ValueError(
                f"`output_shape` must be of length 3, 4 or 5. Received: output_shape={output_shape} of length "
                f"{None if n is None else n + 2}."
            )
        if n == 1:
            return conv1d_transpose(
                input, filters, output_shape, strides, padding, data_format or "NWC", dilations, name=scope
            )
        if n == 2:
            return conv2d_transpose(
                input,
                filters,
                output_shape,
                get_sequence(strides, 2, 1 if data_format == "NCHW" else 3, "strides"),
                padding,
                data_format=data_format or "NHWC",
                name=scope,
                dilations=dilations,
            )
        return conv3d_transpose(
            input,
            filters,
            output_shape,
            get_sequence(strides, 3, 1 if data_format == "NCDHW" else 4, "strides"),
            padding,
            data_format=data_format or "NDHWC",
            name=scope,
            dilations=dilations,
        )


# ---- depthwise backprops -------------------------------------------------------------------------------------------
def _depthwise_attrs(strides: Any, padding: Any, data_format: Any, dilations: Any, op_type: str) -> dict[str, Any]:
    fmt, strides_, dilations_, mode, explicit = window_attrs(
        op_type, data_format, ("strides", strides), ("dilations", dilations), padding, pool=False
    )
    return {
        "strides": strides_,
        "padding": mode,
        "explicit_paddings": explicit,
        "data_format": fmt,
        "dilations": dilations_,
    }


def depthwise_conv2d_native_backprop_input(
    input_sizes: Any,
    filter: Any,  # noqa: A002 - TF's name
    out_backprop: Any,
    strides: Any,
    padding: Any,
    data_format: str = "NHWC",
    dilations: Any = (1, 1, 1, 1),
    name: str | None = None,
) -> Tensor:
    """The gradient of ``depthwise_conv2d_native`` with respect to its input, given the input's shape.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     dx = tf.nn.depthwise_conv2d_native_backprop_input(
        ...         [1, 2, 2, 1], tf.ones([2, 2, 1, 1]), tf.ones([1, 1, 1, 1]), [1, 1, 1, 1], "VALID")
        ...     print(sess.run(dx).reshape(-1))
        [1. 1. 1. 1.]
    """
    op_type = "DepthwiseConv2dNativeBackpropInput"

    def attrs() -> dict[str, Any]:
        return _depthwise_attrs(strides, padding, data_format, dilations, op_type)

    return backprop_input(op_type, input_sizes, filter, out_backprop, attrs, name)


def depthwise_conv2d_native_backprop_filter(
    input: Any,  # noqa: A002 - TF's name
    filter_sizes: Any,
    out_backprop: Any,
    strides: Any,
    padding: Any,
    data_format: str = "NHWC",
    dilations: Any = (1, 1, 1, 1),
    name: str | None = None,
) -> Tensor:
    """The gradient of ``depthwise_conv2d_native`` with respect to its filter, given the filter's shape.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     dw = tf.nn.depthwise_conv2d_native_backprop_filter(
        ...         tf.ones([1, 2, 2, 1]), [2, 2, 1, 1], tf.ones([1, 1, 1, 1]), [1, 1, 1, 1], "VALID")
        ...     print(sess.run(dw).reshape(-1))
        [1. 1. 1. 1.]
    """
    op_type = "DepthwiseConv2dNativeBackpropFilter"

    def attrs() -> dict[str, Any]:
        return _depthwise_attrs(strides, padding, data_format, dilations, op_type)

    return backprop_filter(op_type, input, filter_sizes, out_backprop, attrs, name)


depthwise_conv2d_backprop_input = depthwise_conv2d_native_backprop_input
depthwise_conv2d_backprop_filter = depthwise_conv2d_native_backprop_filter


# ---- pooling -------------------------------------------------------------------------------------------------------
def pool(
    input: Any,  # noqa: A002 - TF's names
    window_shape: Sequence[int],
    pooling_type: str,
    padding: str,
    dilation_rate: Any = None,
    strides: Any = None,
    name: str | None = None,
    data_format: str | None = None,
    dilations: Any = None,
) -> Tensor:
    """N-d max or average pooling (1, 2 or 3 spatial axes) with optional dilation (``VALID`` only).

    Args:
        input: ``[batch, spatial..., channels]`` (or channels first with an ``NC...`` ``data_format``).
        window_shape: One window size per spatial axis.
        pooling_type: ``"MAX"`` or ``"AVG"``.
        padding: ``"SAME"`` or ``"VALID"``.
        dilation_rate: One rate per spatial axis (``dilations`` is TF2's name).
        strides: One stride per spatial axis (not with a dilation above 1; at most the window).
        name: Name scope (default ``max_pool``/``avg_pool``).
        data_format: ``NWC``/``NCW``, ``NHWC``/``NCHW`` or ``NDHWC``/``NCDHW``.

    Raises:
        ValueError: bad window, strides or dilation, or ``SAME`` with a dilation above 1.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
        ...     print(sess.run(tf.nn.pool(x, [2, 2], "MAX", "VALID", dilation_rate=[2, 2]))[0, :, :, 0])
        [[10. 11.]
         [14. 15.]]
    """
    if dilation_rate is not None and dilations is not None:
        raise ValueError("Cannot specify both 'dilation_rate' and 'dilations'.")
    dilation_rate = dilations if dilation_rate is None else dilation_rate
    with name_scope(name, f"{pooling_type.lower()}_pool", [input]) as scope:
        input = convert_to_tensor(input, name="input")
        n = len(window_shape)
        if n < 1 or n > 3:
            raise ValueError(f"`len(window_shape)` must be 1, 2, or 3. Received: window_shape={window_shape}")
        if input.shape.ndims is not None and input.shape.ndims != n + 2:
            raise ValueError(f"Shape must be rank {n + 2} but is rank {input.shape.ndims}")
        rates = np.array(dilation_rate if dilation_rate is not None else [1] * n, np.int32)
        steps = np.array(strides if strides is not None else [1] * n, np.int32)
        if len(rates) != n or np.any(rates < 1):
            raise ValueError(f"`dilation_rate` must be {n} positive values. Received: dilation_rate={rates}")
        if len(steps) != n or np.any(steps < 1):
            raise ValueError(f"`strides` must be {n} positive values. Received: strides={steps}")
        if np.any(steps > 1) and np.any(rates > 1):
            raise ValueError(
                f"`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: strides={steps} "
                f"and dilation_rate={rates}"
            )
        if padding == "SAME" and np.any(rates > 1):
            raise ValueError(
                "pooling with 'SAME' padding is not implemented for `dilation_rate` > 1. Received: "
                f"padding={padding} and dilation_rate={rates}"
            )
        if np.any(steps > np.asarray(window_shape)):
            raise ValueError(
                "`strides` > `window_shape` not supported due to inconsistency between CPU and GPU "
                f"implementations. Received: strides={steps} and window_shape={window_shape}"
            )
        if pooling_type not in ("MAX", "AVG"):
            raise ValueError(f"{n}-D {pooling_type} pooling is not supported.")
        channels_first = data_format is not None and data_format.startswith("NC")
        if channels_first:
            window = [1, 1] + list(window_shape)
            step = [1, 1] + [int(s) for s in steps]
            spatial_dims = list(range(2, n + 2))
        else:
            window = [1] + list(window_shape) + [1]
            step = [1] + [int(s) for s in steps] + [1]
            spatial_dims = list(range(1, n + 1))
        if n == 1:
            if data_format not in (None, "NWC", "NCW"):
                raise ValueError(f"data_format must be either 'NWC' or 'NCW'. Received: data_format={data_format}")
            fmt = "NCHW" if data_format == "NCW" else "NHWC"
            window, step = [1] + window, [1] + step
        else:
            fmt = data_format
        pools = {(2, "MAX"): max_pool, (2, "AVG"): avg_pool, (3, "MAX"): max_pool3d, (3, "AVG"): avg_pool3d}

        def pool_op(converted: Tensor, num_spatial_dims: int, pool_padding: str) -> Tensor:
            if n == 1:
                converted = array_ops.expand_dims(converted, spatial_dims[0])
            fn = pools[(max(n, 2), pooling_type)]
            kwargs = {"data_format": fmt} if fmt is not None else {}
            result = fn(converted, window, step, pool_padding, name=scope, **kwargs)
            if n == 1:
                result = array_ops.squeeze(result, [spatial_dims[0]])
            return result

        return with_space_to_batch(
            input, rates, padding, pool_op, filter_shape=list(window_shape), spatial_dims=spatial_dims
        )


def _pool_rank(input: Tensor, data_format: str | None) -> tuple[int, int]:
    if input.shape.ndims is not None:
        n = input.shape.ndims - 2
    elif data_format is not None:
        n = len(data_format) - 2
    else:
        raise ValueError(
            f"`input` must have a static shape or a data format must be given. Received: input.shape={input.shape} "
            f"and data_format={data_format}"
        )
    if not 1 <= n <= 3:
        raise ValueError(f"`input.shape.rank` must be 3, 4 or 5. Received: input.shape={input.shape} of rank {n + 2}.")
    channel_index = n + 1 if data_format is None else (1 if data_format.startswith("NC") else n + 1)
    return n, channel_index


def max_pool_v2(
    input: Any,  # noqa: A002 - TF's name
    ksize: Any,
    strides: Any,
    padding: Any,
    data_format: str | None = None,
    name: str | None = None,
) -> Tensor:
    """Max pooling of a 3-, 4- or 5-D tensor (``max_pool1d``, ``max_pool2d`` or ``max_pool3d`` by rank).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.nn.max_pool_v2(tf.ones([1, 6, 2]), 2, 2, "VALID").shape.as_list()
        [1, 3, 2]
    """
    x = convert_to_tensor(input, name="input")
    n, channel_index = _pool_rank(x, data_format)
    ksize = get_sequence(ksize, n, channel_index, "ksize")
    strides = get_sequence(strides, n, channel_index, "strides")
    if isinstance(padding, list | tuple) and n == 3:
        raise ValueError(
            f"Explicit padding is not supported with an input tensor of rank 5. Received: padding={padding}"
        )
    fmt = {} if data_format is None else {"data_format": data_format}
    op = {1: max_pool1d, 2: max_pool2d, 3: max_pool3d}[n]
    return op(x, ksize=ksize, strides=strides, padding=padding, name=name, **fmt)


def avg_pool_v2(
    input: Any,  # noqa: A002 - TF's name
    ksize: Any,
    strides: Any,
    padding: Any,
    data_format: str | None = None,
    name: str | None = None,
) -> Tensor:
    """Average pooling of a 3-, 4- or 5-D tensor (``avg_pool1d``, ``avg_pool`` or ``avg_pool3d`` by rank).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.nn.avg_pool_v2(tf.ones([1, 4, 4, 4, 2]), 2, 2, "SAME").shape.as_list()
        [1, 2, 2, 2, 2]
    """
    x = convert_to_tensor(input, name="input")
    n, channel_index = _pool_rank(x, data_format)
    ksize = get_sequence(ksize, n, channel_index, "ksize")
    strides = get_sequence(strides, n, channel_index, "strides")
    fmt = {} if data_format is None else {"data_format": data_format}
    op = {1: avg_pool1d, 2: avg_pool, 3: avg_pool3d}[n]
    return op(x, ksize=ksize, strides=strides, padding=padding, name=name, **fmt)
