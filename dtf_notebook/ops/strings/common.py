"""What the string ops share: registering a CPU string op, string inputs, mapping a function over strings.

String tensors are numpy ``object`` arrays of ``bytes`` at run time; numeric inputs of these ops arrive as
torch tensors on the CPU (the ops are ``cpu_only``) and numeric outputs leave as torch tensors.

Example:
    >>> import numpy as np
    >>> map_strings(np.array([b"ab", b"c"], dtype=object), len, np.int32).tolist()
    [2, 1]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch

__all__ = ["register", "string_input", "map_strings", "to_numpy", "to_torch", "as_bytes", "shape_text"]


def register(op_type: str, infer: Callable[[Any], list], kernel: Callable[[Any, Any], Callable[..., Any]]) -> None:
    """Registers a string op: CPU only, no gradient (TF declares them all not differentiable).

    Example:
        >>> from dtf_notebook.framework import op_registry
        >>> op_registry.get("StringLength").cpu_only
        True
    """
    op_registry.register_op(op_type, infer=infer, kernel=kernel, grad=op_registry.NOT_DIFFERENTIABLE, cpu_only=True)


def string_input(value: Any, op_type: str, arg: str = "input") -> Tensor:
    """``value`` as a string tensor; TF's TypeError when it is a tensor of another dtype.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     string_input(["a", "b"], "StringLength").dtype
        tf.string
    """
    if isinstance(value, Tensor) and value.dtype.base_dtype is not dtypes.string:
        raise TypeError(
            f"Input '{arg}' of '{op_type}' Op has type {value.dtype.base_dtype.name} that does not match "
            "expected type of string."
        )
    return convert_to_tensor(value, dtype=dtypes.string, name=arg)


def as_bytes(value: Any) -> bytes:
    """A Python ``str`` or ``bytes`` attribute value as bytes (UTF-8).

    Example:
        >>> as_bytes("é"), as_bytes(b"x")
        (b'\\xc3\\xa9', b'x')
    """
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


def map_strings(values: np.ndarray, fn: Callable[[bytes], Any], out: Any = object) -> np.ndarray:
    """``fn`` applied to each string of ``values``, as an array of ``out`` dtype and the same shape.

    Example:
        >>> map_strings(np.array([[b"a"], [b"bc"]], dtype=object), bytes.upper)[1, 0]
        b'BC'
    """
    flat = np.asarray(values, dtype=object).reshape(-1)
    result = np.empty(flat.size, dtype=out)
    for i, s in enumerate(flat):
        result[i] = fn(s)
    return result.reshape(np.shape(values))


def to_numpy(value: Any) -> np.ndarray:
    """A runtime value (torch tensor or numpy array) as a numpy array.

    Example:
        >>> to_numpy(torch.tensor([1, 2])).tolist()
        [1, 2]
    """
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)


def to_torch(array: np.ndarray) -> torch.Tensor:
    """A numeric numpy result as a torch tensor (the runtime value of a numeric output).

    Example:
        >>> to_torch(np.array([1, 2], np.int64)).dtype
        torch.int64
    """
    # (not np.ascontiguousarray: it turns a 0-d array into a 1-d one)
    return torch.from_numpy(array if array.flags.c_contiguous else array.copy())


def shape_text(shape: Any) -> str:
    """A shape as TF's kernels write it in messages: ``[2,3]``.

    Example:
        >>> shape_text((2, 3)), shape_text(TensorShape([]))
        ('[2,3]', '[]')
    """
    dims = shape.as_list() if isinstance(shape, TensorShape) else list(shape)
    return "[" + ",".join(str(d) for d in dims) + "]"
