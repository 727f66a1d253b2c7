"""What the layer modules share: TF's ``smart_cond``, argument normalisation and window output sizes.

Example:
    >>> normalize_tuple(3, 2, "kernel_size"), conv_output_length(7, 3, "valid", 2), deconv_output_length(4, 3, "same",
    ...                                                                                                    2)
    ((3, 3), 3, 8)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops.control_flow_ops import cond
from dtf_notebook.ops.op_helpers import constant_value


def constant_bool(pred: Any) -> bool | None:
    """``pred``'s truth value when it is known while building (a Python bool, or a constant tensor), else None.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     constant_bool(True), constant_bool(tf.constant(False)), constant_bool(tf.placeholder(tf.bool))
        (True, False, None)
    """
    if isinstance(pred, Tensor):
        value = constant_value(pred)
        return None if value is None else bool(np.asarray(value))
    if isinstance(pred, bool | int | np.bool_ | np.integer):
        return bool(pred)
    raise TypeError(f"`pred` must be a Tensor, or a Python bool, or 1 or 0. Found instead: {type(pred)}")


def smart_cond(pred: Any, true_fn: Callable[[], Any], false_fn: Callable[[], Any], name: str | None = None) -> Any:
    """``true_fn()`` or ``false_fn()`` when ``pred`` is known while building, else ``tf.cond`` over both.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     smart_cond(True, lambda: 1, lambda: 2), smart_cond(tf.placeholder(tf.bool), lambda: tf.constant(1),
        ...                                                        lambda: tf.constant(2)).op.type
        (1, 'Merge')
    """
    value = constant_bool(pred)
    if value is None:
        return cond(pred, true_fn, false_fn, name=name)
    return true_fn() if value else false_fn()


def normalize_tuple(value: Any, n: int, name: str) -> tuple[int, ...]:
    """An int or ``n`` ints as a tuple of ``n`` ints (Keras's ``conv_utils.normalize_tuple``).

    Example:
        >>> normalize_tuple([1, 2], 2, "strides")
        (1, 2)
    """
    if isinstance(value, int | np.integer):
        return (int(value),) * n
    try:
        values = tuple(int(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. Received: {value}") from None
    if len(values) != n:
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. Received: {value}")
    return values


def normalize_data_format(value: Any) -> str:
    """``channels_last`` (default) or ``channels_first``.

    Example:
        >>> normalize_data_format(None), normalize_data_format("Channels_First")
        ('channels_last', 'channels_first')
    """
    fmt = "channels_last" if value is None else str(value).lower()
    if fmt not in ("channels_first", "channels_last"):
        raise ValueError(
            f'The `data_format` argument must be one of "channels_first", "channels_last". Received: {value}'
        )
    return fmt


def normalize_padding(value: Any) -> str:
    """``valid``, ``same`` (or ``causal`` for 1-D convolutions), in lower case.

    Example:
        >>> normalize_padding("SAME")
        'same'
    """
    padding = str(value).lower()
    if padding not in ("valid", "same", "causal"):
        raise ValueError(f'The `padding` argument must be one of "valid", "same" (or "causal"). Received: {value}')
    return padding


def tf_data_format(data_format: str, ndim: int) -> str:
    """The op-level data format of a ``ndim``-D input (``NHWC``, ``NCDHW``, ``NWC``, ...).

    Example:
        >>> tf_data_format("channels_first", 5), tf_data_format("channels_last", 3)
        ('NCDHW', 'NWC')
    """
    spatial = {3: "W", 4: "HW", 5: "DHW"}[ndim]
    return "NC" + spatial if data_format == "channels_first" else "N" + spatial + "C"


def conv_output_length(length: int | None, size: int, padding: str, stride: int, dilation: int = 1) -> int | None:
    """Output length of a convolution or pool along one axis.

    Example:
        >>> conv_output_length(10, 3, "same", 3), conv_output_length(None, 3, "same", 1)
        (4, None)
    """
    if length is None:
        return None
    eff = size + (size - 1) * (dilation - 1)
    if padding in ("same", "causal"):
        out = length
    else:
        out = length - eff + 1
    return (out + stride - 1) // stride


def deconv_output_length(
    length: int | None, size: int, padding: str, stride: int, output_padding: int | None = None, dilation: int = 1
) -> int | None:
    """Output length of a transposed convolution along one axis (Keras's ``deconv_output_length``).

    Example:
        >>> deconv_output_length(3, 3, "valid", 2), deconv_output_length(3, 3, "same", 2, output_padding=0)
        (7, 5)
    """
    if length is None:
        return None
    size = size + (size - 1) * (dilation - 1)
    if output_padding is None:
        if padding == "valid":
            return length * stride + max(size - stride, 0)
        if padding == "full":
            return length * stride - (stride + size - 2)
        return length * stride
    pad = {"same": size // 2, "valid": 0, "full": size - 1}[padding]
    return (length - 1) * stride + size - 2 * pad + output_padding
