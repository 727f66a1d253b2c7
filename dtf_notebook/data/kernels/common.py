"""What the runtime datasets share: the iterator protocol, the run-time environment and value helpers.

A runtime dataset (:class:`RtDataset`) makes iterators; a runtime iterator (:class:`RtIterator`) hands out
elements as flat tuples of component values (torch tensors; numpy ``object`` arrays of bytes for strings), and
``None`` at the end of the sequence. An iterator may raise an :class:`~dtf_notebook.errors.OpError` for one
element and go on with the next, as TF's do. Iterators whose source can slice many elements at once offer
``next_batch(n, step)``, which ``batch`` uses to skip the per-element stacking.

Example:
    >>> import torch
    >>> stack([torch.tensor(1), torch.tensor(2)])
    tensor([1, 2])
    >>> string_scalar(b"a").shape, scalar_int(torch.tensor(7))
    ((), 7)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.lazy_modules import torch
from dtf_notebook.runtime.file_access import FileAccess

__all__ = [
    "Env",
    "RtDataset",
    "RtIterator",
    "scalar_int",
    "scalar_bool",
    "string_list",
    "string_scalar",
    "shape_of",
    "stack",
    "row",
    "rows",
    "dim0",
    "gather",
    "concat",
    "invalid",
]


@dataclass
class Env:
    """What runtime datasets may use where the iterator runs.

    Attributes:
        device: The torch device of the iterator's op (its CPU).
        files: The task's file roots (every reader and cache file asks it first).
        alive: False once the iterator's resource was removed (session closed or reset): background threads stop.
        state: The kernels' shared execution state (resources), for the functions' plans.

    Example:
        >>> Env().alive()
        True
    """

    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    files: FileAccess = field(default_factory=FileAccess)
    alive: Callable[[], bool] = lambda: True
    state: Any = None


class RtIterator:
    """One pass over a runtime dataset. Subclasses implement :meth:`next`; ``next_batch`` is offered by sources
    that can slice many elements at once (None otherwise).

    Example:
        >>> class Two(RtIterator):
        ...     def __init__(self): self.left = 2
        ...     def next(self, step):
        ...         self.left -= 1
        ...         return (self.left,) if self.left >= 0 else None
        >>> it = Two(); [it.next(None), it.next(None), it.next(None)]
        [(1,), (0,), None]
    """

    next_batch: Callable[[int, Any], tuple | None] | None = None

    def next(self, step: Any) -> tuple | None:
        """The next element (a flat tuple of component values), or None at the end of the sequence."""
        raise NotImplementedError

    def close(self) -> None:
        """Releases what the iterator holds (files, threads); it is not used afterwards."""


class RtDataset:
    """A runtime dataset: its input values are bound; :meth:`iterator` starts a pass over it.

    Example:
        >>> RtDataset().iterator()
        Traceback (most recent call last):
        ...
        NotImplementedError
    """

    def iterator(self) -> RtIterator:
        """A new iterator from the start."""
        raise NotImplementedError


def invalid(message: str) -> errors.InvalidArgumentError:
    """An InvalidArgumentError with ``message`` (the kernel adds the node).

    Example:
        >>> invalid("Batch size must be greater than zero.").message
        'Batch size must be greater than zero.'
    """
    return errors.InvalidArgumentError(None, None, message)


def scalar_int(value: Any) -> int:
    """A scalar tensor value as a Python int.

    Example:
        >>> scalar_int(torch.tensor(3, dtype=torch.int64))
        3
    """
    return int(value.item()) if isinstance(value, torch.Tensor) else int(np.asarray(value).reshape(()))


def scalar_bool(value: Any) -> bool:
    """A scalar bool tensor value as a Python bool.

    Example:
        >>> scalar_bool(torch.tensor(True))
        True
    """
    return bool(value.item()) if isinstance(value, torch.Tensor) else bool(np.asarray(value).reshape(()))


def string_list(value: Any) -> list[bytes]:
    """A string tensor value (scalar or any shape) as a flat list of bytes.

    Example:
        >>> string_list(np.array([b"a", b"b"], dtype=object)), string_list(string_scalar(b"c"))
        ([b'a', b'b'], [b'c'])
    """
    return [v if isinstance(v, bytes) else bytes(v) for v in np.asarray(value, dtype=object).reshape(-1)]


def string_scalar(data: bytes) -> np.ndarray:
    """A scalar string value (a 0-d numpy object array).

    Example:
        >>> string_scalar(b"x")[()]
        b'x'
    """
    out = np.empty((), dtype=object)
    out[()] = data
    return out


def shape_of(value: Any) -> tuple[int, ...]:
    """The shape of a runtime value.

    Example:
        >>> shape_of(torch.zeros(2, 3)), shape_of(np.empty((4,), dtype=object))
        ((2, 3), (4,))
    """
    return tuple(value.shape)


def dim0(value: Any) -> int:
    """The size of dimension 0 of a runtime value of rank >= 1.

    Example:
        >>> dim0(torch.zeros(5, 2))
        5
    """
    return int(value.shape[0])


def row(value: Any, i: int) -> Any:
    """Element ``i`` along dimension 0 (a 0-d array for a vector of strings).

    Example:
        >>> row(np.array([b"a", b"b"], dtype=object), 1)[()], row(torch.arange(3), 2)
        (b'b', tensor(2))
    """
    if isinstance(value, torch.Tensor):
        return value[i]
    return value[i, ...]


def rows(value: Any, start: int, stop: int) -> Any:
    """Elements ``start:stop`` along dimension 0.

    Example:
        >>> rows(torch.arange(5), 1, 3)
        tensor([1, 2])
    """
    return value[start:stop]


def gather(value: Any, indices: Sequence[int]) -> Any:
    """The rows ``indices`` of a value, stacked (one gather instead of a slice and a stack per row).

    Example:
        >>> gather(torch.tensor([10, 11, 12]), [2, 0]), gather(np.array([b"a", b"b"], dtype=object), [1]).tolist()
        (tensor([12, 10]), [b'b'])
    """
    if isinstance(value, torch.Tensor):
        return value.index_select(0, torch.tensor(indices, dtype=torch.int64, device=value.device))
    return value[np.asarray(indices, dtype=np.int64)]


def concat(parts: Sequence[Any]) -> Any:
    """Values joined along dimension 0.

    Example:
        >>> concat([torch.tensor([1]), torch.tensor([2, 3])])
        tensor([1, 2, 3])
    """
    if len(parts) == 1:
        return parts[0]
    if isinstance(parts[0], torch.Tensor):
        return torch.cat(list(parts))
    return np.concatenate(list(parts))


def stack(values: Sequence[Any], component: int = 0) -> Any:
    """Stacks equally shaped values along a new dimension 0 (TF's batching rule).

    Raises:
        InvalidArgumentError: the values have different shapes (TF's message, naming the component).

    Example:
        >>> stack([np.array([b"a"], dtype=object), np.array([b"b"], dtype=object)]).tolist()
        [[b'a'], [b'b']]
        >>> stack([torch.zeros(2), torch.zeros(3)])
        Traceback (most recent call last):
        ...
        dtf_notebook.errors.InvalidArgumentError: Cannot batch tensors with different shapes in component 0. \
First element had shape [2] and element 1 had shape [3].
    """
    first = values[0]
    shape = first.shape
    for i, v in enumerate(values):
        if v.shape != shape:
            raise invalid(
                f"Cannot batch tensors with different shapes in component {component}. First element had shape "
                f"{_dims(shape)} and element {i} had shape {_dims(v.shape)}."
            )
    if isinstance(first, torch.Tensor):
        return torch.stack(list(values))
    out = np.empty((len(values),) + tuple(shape), dtype=object)
    for i, v in enumerate(values):
        out[i, ...] = v
    return out


def _dims(shape: Any) -> str:
    return "[" + ",".join(str(int(d)) for d in shape) + "]"
