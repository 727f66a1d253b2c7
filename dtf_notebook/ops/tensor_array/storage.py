"""The array behind a ``TensorArrayV3`` handle: its elements, their states, and TF1's rules for them.

Each run of a ``TensorArrayV3`` op makes a fresh :class:`TensorArrayStorage` on the op's device; the
handle's value at run time is the storage itself, so it lives as long as the step that made it uses it
(TF1 keeps it in the step's container). Element states follow TF1's ``TensorArray`` kernel: an element is
written once (a gradient array sums repeated writes), read once unless ``clear_after_read`` is off, and
an element never written reads as zeros when the element shape is fully known. Errors carry TF's text.

Example:
    >>> import torch
    >>> from dtf_notebook.framework import dtypes
    >>> from dtf_notebook.framework.tensor_shape import TensorShape
    >>> ta = TensorArrayStorage("ta_0", dtypes.float32, 2, TensorShape(None), True, False, True, torch.device("cpu"))
    >>> ta.write(0, torch.tensor([1.0, 2.0]))
    >>> ta.read_at(1)   # never written: zeros of the element shape the first write fixed
    tensor([0., 0.])
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.runtime.values import dtype_of, torch_dtype

__all__ = ["TensorArrayStorage", "unique_name", "type_string", "shape_string"]

_COUNTER = itertools.count()
_TF_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "half"}


def unique_name(base: str) -> str:
    """The name a new array gets at run time: ``base`` plus a process-wide counter, as TF1's kernel names it.

    Example:
        >>> unique_name("TensorArray").startswith("TensorArray_")
        True
    """
    return f"{base}_{next(_COUNTER)}"


def type_string(dtype: dtypes.DType) -> str:
    """TF's ``DataTypeString``: ``float`` for float32, ``double`` for float64, else the dtype's name.

    Example:
        >>> type_string(dtypes.float32), type_string(dtypes.int32)
        ('float', 'int32')
    """
    return _TF_TYPE_NAMES.get(dtype.name, dtype.name)


def shape_string(shape: Any) -> str:
    """A shape as TF's ``DebugString`` writes it: ``[2,3]``, ``[?,3]``, ``[]`` or ``<unknown>``.

    Example:
        >>> shape_string((2, 3)), shape_string(TensorShape([None, 3])), shape_string(TensorShape(None))
        ('[2,3]', '[?,3]', '<unknown>')
    """
    dims = shape.as_tuple() if isinstance(shape, TensorShape) else tuple(shape)
    if dims is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


class _Element:
    """One slot: its value (None once cleared, or when only its shape is known), shape and state flags."""

    __slots__ = ("value", "shape", "written", "read", "cleared")

    def __init__(self) -> None:
        self.value: Any = None
        self.shape: tuple[int, ...] | None = None
        self.written = False
        self.read = False
        self.cleared = False


def _shape_of(value: Any) -> tuple[int, ...]:
    return tuple(value.shape)


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


class TensorArrayStorage:
    """A TensorArray's elements and flags, safe to use from the executor's threads.

    Args:
        name: The run-time name errors show (``TensorArray_3``).
        dtype: The element dtype.
        size: The initial number of elements.
        element_shape: The known element shape (a possibly partial TensorShape).
        identical_element_shapes: The first write fixes the element shape (``infer_shape``).
        dynamic_size: Writes past the end grow the array.
        clear_after_read: A read drops the element (a second read is an error).
        device: Where zeros for unwritten elements are made (the op's device).
        multiple_writes_aggregate: Repeated writes to an element are summed (gradient arrays).
        is_grad: A gradient array: reads past the end, or of elements never written, give zeros.

    Example:
        >>> ta = TensorArrayStorage("a_0", dtypes.int32, 1, TensorShape(None), True, True, True, torch.device("cpu"))
        >>> ta.write(2, torch.tensor(7, dtype=torch.int32)); ta.size()
        3
    """

    kind = "TensorArray"

    def __init__(
        self,
        name: str,
        dtype: dtypes.DType,
        size: int,
        element_shape: TensorShape,
        identical_element_shapes: bool,
        dynamic_size: bool,
        clear_after_read: bool,
        device: torch.device,
        multiple_writes_aggregate: bool = False,
        is_grad: bool = False,
    ) -> None:
        self.name = name
        self.dtype = dtype
        self.element_shape = element_shape
        self.identical_element_shapes = identical_element_shapes
        self.dynamic_size = dynamic_size
        self.clear_after_read = clear_after_read
        self.device = device
        self.multiple_writes_aggregate = multiple_writes_aggregate
        self.is_grad = is_grad
        self.closed = False
        self._elements = [_Element() for _ in range(size)]
        self._grads: dict[str, TensorArrayStorage] = {}
        self._lock = threading.Lock()

    def read(self) -> TensorArrayStorage:
        """The array itself: what an op taking the handle by value (an ``Identity``) receives."""
        return self

    def __repr__(self) -> str:
        return f"<TensorArray {self.name} {type_string(self.dtype)} size={len(self._elements)}>"

    # ---- checks -------------------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self.closed:
            raise _invalid(f"TensorArray {self.name} has already been closed.")

    def check_dtype(self, dtype: dtypes.DType, writing: bool) -> None:
        """Raises TF's error when an op reads or writes ``dtype`` from an array of another dtype."""
        if dtype is not self.dtype:
            verb = "is trying to write" if writing else "requested"
            raise _invalid(f"TensorArray dtype is {type_string(self.dtype)} but Op {verb} dtype {type_string(dtype)}.")

    # ---- elements ------------------------------------------------------------------------------------
    def size(self) -> int:
        """The current number of elements.

        Raises:
            InvalidArgumentError: the array is closed.
        """
        with self._lock:
            self._check_open()
            return len(self._elements)

    def write(self, index: int, value: Any) -> None:
        """Writes ``value`` at ``index`` (TF1's ``WriteOrAggregate``).

        Raises:
            InvalidArgumentError: closed; the index is out of range of a fixed-size array; the value's dtype or
                shape does not fit; or the element was already read or written (and writes do not aggregate).
        """
        with self._lock:
            self._write(index, value)

    def write_many(self, indices: Sequence[int], values: Sequence[Any]) -> None:
        """Writes each of ``values`` at the matching index, in order (a scatter or split)."""
        with self._lock:
            for index, value in zip(indices, values):
                self._write(index, value)

    def _write(self, index: int, value: Any) -> None:
        self._check_open()
        if index < 0 or (not self.dynamic_size and index >= len(self._elements)):
            raise _invalid(
                f"TensorArray {self.name}: Tried to write to index {index} but array is not resizeable and size "
                f"is: {len(self._elements)}"
            )
        if index >= len(self._elements):
            self._elements.extend(_Element() for _ in range(index + 1 - len(self._elements)))
        element = self._elements[index]
        value_dtype = dtype_of(value)
        if value_dtype is not self.dtype:
            raise _invalid(
                f"TensorArray {self.name}: Could not write to TensorArray index {index} because the value dtype is "
                f"{type_string(value_dtype)} but TensorArray dtype is {type_string(self.dtype)}."
            )
        shape = _shape_of(value)
        if not self.element_shape.is_compatible_with(shape):
            raise _invalid(
                f"TensorArray {self.name}: Could not write to TensorArray index {index} because the value shape is "
                f"{shape_string(shape)} which is incompatible with the TensorArray's inferred element shape: "
                f"{shape_string(self.element_shape)} (consider setting infer_shape=False)."
            )
        if self.identical_element_shapes and not self.element_shape.is_fully_defined():
            self.element_shape = TensorShape(shape)
        if element.read:
            raise _invalid(
                f"TensorArray {self.name}: Could not write to TensorArray index {index} because it has already been "
                "read."
            )
        if element.written and not self.multiple_writes_aggregate:
            raise _invalid(
                f"TensorArray {self.name}: Could not write to TensorArray index {index} because it has already been "
                "written to."
            )
        if element.written:
            if shape != element.shape:
                raise _invalid(
                    f"TensorArray {self.name}: Could not aggregate to TensorArray index {index} because the existing "
                    f"shape is {shape_string(element.shape)} but the new input shape is {shape_string(shape)}."
                )
            # Only a shape was known (copied from the forward array): the value replaces the implied zeros.
            element.value = value if element.value is None else element.value + value
            return
        element.value, element.shape, element.written = value, shape, True

    def read_at(self, index: int) -> Any:
        """The element at ``index`` (zeros when it was never written and its shape is known).

        Raises:
            InvalidArgumentError: closed; index out of range; read twice with ``clear_after_read``; or an
                unwritten element whose shape is not fully known.
        """
        with self._lock:
            return self._read(index)

    def read_many(self, indices: Sequence[int]) -> list[Any]:
        """The elements at ``indices``, read in order (a gather, stack or concat)."""
        with self._lock:
            return [self._read(index) for index in indices]

    def _read(self, index: int) -> Any:
        self._check_open()
        size = len(self._elements)
        if index < 0 or (not self.is_grad and index >= size):
            raise _invalid(f"Tried to read from index {index} but array size is: {size}")
        if index >= size or not self._elements[index].written:
            # A gradient array knows each written element's own shape; any array knows its element shape.
            if index < size and self._elements[index].shape:
                return self._zeros(self._elements[index].shape)
            if not self.element_shape.is_fully_defined():
                raise _invalid(
                    f"TensorArray {self.name}: Could not read from TensorArray index {index}.  Furthermore, the "
                    f"element shape is not fully defined: {shape_string(self.element_shape)}.  It is possible you "
                    "are working with a resizeable TensorArray and stop_gradients is not allowing the gradients to "
                    "be written.  If you set the full element_shape property on the forward TensorArray, the proper "
                    "all-zeros tensor will be returned instead of incurring this error."
                )
            return self._zeros(self.element_shape.as_tuple())
        element = self._elements[index]
        if element.cleared:
            raise _invalid(
                f"TensorArray {self.name}: Could not read index {index} twice because it was cleared after a "
                "previous read (perhaps try setting clear_after_read = false?)."
            )
        value = element.value
        if value is None:  # written as a shape only: zeros of that shape
            value = self._zeros(element.shape)
        if self.clear_after_read:
            element.value, element.cleared = None, True
        element.read = True
        return value

    def _zeros(self, shape: tuple[int, ...]) -> Any:
        if self.dtype.is_string:
            raise _invalid("tensor_array::TensorSetZero type not supported: string")
        return torch.zeros(shape, dtype=torch_dtype(self.dtype), device=self.device)

    def close(self) -> None:
        """Drops every element; any later use of the array is an error (TF1's ``TensorArrayCloseV3``)."""
        with self._lock:
            self._elements = []
            self.closed = True

    def grad(self, source: str) -> TensorArrayStorage:
        """The gradient array for gradient computation ``source`` (one per source, made on first use).

        It has this array's size and element shape, sums repeated writes, and knows the shape of each
        element written here, so a read of an element no gradient reached gives zeros of that shape. Once a
        gradient array exists, this array no longer grows.

        Raises:
            InvalidArgumentError: the array is closed.
        """
        with self._lock:
            self._check_open()
            self.dynamic_size = False
            found = self._grads.get(source)
            if found is None:
                found = self._grads[source] = TensorArrayStorage(
                    f"{self.name}@{source}",
                    self.dtype,
                    len(self._elements),
                    self.element_shape,
                    self.identical_element_shapes,
                    dynamic_size=False,
                    clear_after_read=True,
                    device=self.device,
                    multiple_writes_aggregate=True,
                    is_grad=True,
                )
                for forward, element in zip(self._elements, found._elements):
                    if forward.written:
                        element.shape, element.written = forward.shape, True
            return found


def stack_values(values: list[Any]) -> Any:
    """``values`` (torch tensors, or numpy arrays of strings) stacked along a new first axis.

    Example:
        >>> stack_values([torch.tensor(1.0), torch.tensor(2.0)])
        tensor([1., 2.])
    """
    if isinstance(values[0], np.ndarray):
        return np.stack(values)
    return torch.stack(values)


def concat_values(values: list[Any]) -> Any:
    """``values`` joined along their first axis.

    Example:
        >>> concat_values([torch.tensor([1.0]), torch.tensor([2.0, 3.0])])
        tensor([1., 2., 3.])
    """
    if isinstance(values[0], np.ndarray):
        return np.concatenate(values)
    return torch.cat(values)
