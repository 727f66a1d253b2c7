"""Runtime values: torch tensors for numeric dtypes, numpy ``object`` arrays of bytes for strings.

This module maps :class:`DType` to torch dtypes and converts between what
users feed and fetch (numpy) and what kernels compute on (torch).

Example:
    >>> import numpy as np, torch
    >>> t = from_numpy(np.arange(3, dtype=np.float32), torch.device("cpu"))
    >>> to_numpy(t)
    array([0., 1., 2.], dtype=float32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes
from dtf_notebook.lazy_modules import torch
from dtf_notebook.runtime.buffer_pool import copy_to_pool

# DType <-> torch dtype, filled by the first lookup: naming torch's dtypes imports torch, which graphs never need.
_TORCH: dict[dtypes.DType, Any] = {}
_FROM_TORCH: dict[Any, dtypes.DType] = {}


def _fill_tables() -> None:
    pairs = {
        dtypes.float16: torch.float16,
        dtypes.float32: torch.float32,
        dtypes.float64: torch.float64,
        dtypes.bfloat16: torch.bfloat16,
        dtypes.int8: torch.int8,
        dtypes.int16: torch.int16,
        dtypes.int32: torch.int32,
        dtypes.int64: torch.int64,
        dtypes.uint8: torch.uint8,
        dtypes.uint16: torch.uint16,  # torch stores, copies and casts these three; little arithmetic
        dtypes.uint32: torch.uint32,
        dtypes.uint64: torch.uint64,
        dtypes.complex64: torch.complex64,
        dtypes.complex128: torch.complex128,
        dtypes.bool: torch.bool,
    }
    _FROM_TORCH.update({v: k for k, v in pairs.items()})
    _TORCH.update(pairs)


def torch_dtype(dtype: dtypes.DType) -> torch.dtype:
    """The torch dtype that holds ``dtype`` values.

    Raises:
        TypeError: ``dtype`` is ``string`` (held in numpy, never in torch), or has no torch kernels (the quantized
            types, ``variant``, ``resource``).

    Example:
        >>> torch_dtype(dtypes.int64)
        torch.int64
    """
    try:
        return _TORCH[dtype]
    except KeyError:
        if not _TORCH:
            _fill_tables()
            return torch_dtype(dtype)
        if dtype.is_string:
            raise TypeError(f"{dtype.name} values are held as numpy arrays, not torch tensors") from None
        raise TypeError(f"No op here computes on {dtype.name} values (torch has no such type)") from None


def dtype_of(value: Any) -> dtypes.DType:
    """The DType of a runtime value.

    Example:
        >>> dtype_of(torch.zeros(2, dtype=torch.int32))
        tf.int32
    """
    if isinstance(value, torch.Tensor):
        if not _FROM_TORCH:
            _fill_tables()
        return _FROM_TORCH[value.dtype]
    return dtypes.as_dtype(value.dtype)


def is_string_value(value: Any) -> bool:
    """True for a string tensor's value (a numpy object array).

    Example:
        >>> is_string_value(np.array([b"a"], dtype=object)), is_string_value(torch.tensor([1.0]))
        (True, False)
    """
    return isinstance(value, np.ndarray) and value.dtype == object


def nbytes(value: Any) -> int:
    """Bytes a runtime value's elements occupy (torch tensor or numpy array; 0 for anything else).

    Example:
        >>> nbytes(torch.zeros(3)), nbytes(np.zeros(2, np.int64)), nbytes(None)
        (12, 16, 0)
    """
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    return int(getattr(value, "nbytes", 0))


def from_numpy(array: np.ndarray, device: torch.device) -> Any:
    """Turns a numpy array into a runtime value on ``device`` (strings stay numpy).

    Example:
        >>> from_numpy(np.array([b"a"], dtype=object), torch.device("cpu"))
        array([b'a'], dtype=object)
    """
    if array.dtype == object:
        return array
    if array.dtype == dtypes.bfloat16.np_dtype:
        return torch.from_numpy(array.astype(np.float32)).to(device, torch.bfloat16)
    if not (array.flags.c_contiguous and array.flags.writeable):
        array = array.copy()
    t = torch.from_numpy(array)
    return t.to(device) if device.type != "cpu" else t


def to_numpy(value: Any) -> Any:
    """Turns a runtime value into what ``Session.run`` returns: a numpy array or numpy scalar (a copy).

    Example:
        >>> to_numpy(torch.tensor(2.5))
        np.float32(2.5)
    """
    if isinstance(value, torch.Tensor):
        t = value.detach()
        if t.dtype is torch.bfloat16:
            arr = t.to(torch.float32).cpu().numpy().astype(dtypes.bfloat16.np_dtype)
        else:
            arr = t.cpu().numpy()
            if arr.ndim == 0:
                return arr[()]  # a numpy scalar is already a copy
            if t.device.type == "cpu":
                arr = _copy(arr)  # never hand out a view of a variable's live buffer
        return arr[()] if arr.ndim == 0 else arr
    if isinstance(value, np.ndarray):
        return value[()] if value.ndim == 0 else _copy(value)
    return value


def _copy(array: np.ndarray) -> np.ndarray:
    # Large copies go to recycled buffers: a fresh multi-MiB block would fault in page by page.
    return copy_to_pool(array) if array.dtype != object else array.copy()


def feed_value(value: Any, dtype: dtypes.DType, device: torch.device) -> Any:
    """Converts a fed Python/numpy value into a runtime value of ``dtype`` (TF converts with numpy rules).

    Raises:
        ValueError: ``value`` cannot be held as ``dtype``.

    Example:
        >>> feed_value([1, 2], dtypes.float32, torch.device("cpu"))
        tensor([1., 2.])
    """
    if isinstance(value, torch.Tensor):
        return value.to(device=device, dtype=torch_dtype(dtype))
    if dtype.is_string:
        arr = np.asarray(value, dtype=object)
        flat = arr.reshape(-1)
        out = np.empty(flat.size, dtype=object)
        for i, v in enumerate(flat):
            if not isinstance(v, str | bytes | np.bytes_ | np.str_):
                raise ValueError(f"expected strings or bytes, got {type(v).__name__}")
            out[i] = v.encode() if isinstance(v, str) else bytes(v)
        return out.reshape(arr.shape)
    arr = np.asarray(value)
    if arr.dtype.kind in "OSU":
        raise ValueError(f"could not convert {type(value).__name__} of {arr.dtype} to {dtype.name}")
    return from_numpy(np.asarray(arr, dtype=dtype.np_dtype), device)
