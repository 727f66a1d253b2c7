"""Conditional accumulator resources: where replicas' gradients are summed until enough have arrived.

An accumulator keeps a *global step*. ``apply_grad(local_step, grad)`` drops a gradient computed at a
``local_step`` older than that step (stale); otherwise it is added in. ``take_grad(n)`` waits until at
least ``n`` gradients were added, returns their average (``MEAN``) or sum (``SUM``), starts over, and
advances the global step by one; ``set_global_step`` sets it. This is TF1's
``ConditionalAccumulator``, the building block of ``SyncReplicasOptimizer``.

The sparse accumulator takes ``IndexedSlices``-like triples. Its average is per row index: a row is
divided by the number of gradients that had that row. Rows repeated inside one gradient are summed
first, and the indices come back sorted.

Waiting follows :class:`~dtf_notebook.runtime.queues.SharedResource`: a ``take_grad`` gives up at its
step's deadline, when its step is aborted, or when the accumulator is removed from its container.

Example:
    >>> import torch
    >>> acc = ConditionalAccumulatorResource("acc", dtypes.float32, TensorShape([2]))
    >>> acc.apply_grad(0, torch.tensor([1.0, 2.0])); acc.apply_grad(0, torch.tensor([3.0, 4.0]))
    >>> acc.take_grad(2, step=None), acc.global_step
    (tensor([2., 3.]), 1)
    >>> acc.apply_grad(0, torch.tensor([9.0, 9.0]))  # stale: computed before step 1
    >>> acc.num_accumulated()
    0
"""

from __future__ import annotations

import logging
from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework import dtypes
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.runtime.queues import SharedResource, format_shape

__all__ = [
    "AccumulatorBase",
    "ConditionalAccumulatorResource",
    "SparseConditionalAccumulatorResource",
    "REDUCTION_TYPES",
]

_log = logging.getLogger(__name__)

REDUCTION_TYPES = ("MEAN", "SUM")


def _divide(total: torch.Tensor, count: Any) -> torch.Tensor:
    if total.dtype.is_floating_point or total.dtype.is_complex:
        return total / count
    return torch.div(total, count, rounding_mode="trunc")  # integer gradients: TF's truncating division


class AccumulatorBase(SharedResource):
    """What both accumulators share: dtype, shape, reduction, the counter and the global step.

    Example:
        >>> acc = ConditionalAccumulatorResource("a", dtypes.float32, TensorShape([2]))
        >>> isinstance(acc, AccumulatorBase), acc.global_step, acc.reduction_type
        (True, 0, 'MEAN')
    """

    def __init__(
        self,
        name: str,
        dtype: dtypes.DType,
        shape: TensorShape,
        reduction_type: str = "MEAN",
        container: str = "",
        mgr: Any = None,
        device: str = "",
    ) -> None:
        super().__init__(name, container, mgr, device)
        if reduction_type not in REDUCTION_TYPES:
            raise errors.InvalidArgumentError(
                None, None, f"reduction_type of accumulator '{name}' must be MEAN or SUM, got {reduction_type!r}"
            )
        self.dtype = dtype
        self.shape = TensorShape(shape)
        self.reduction_type = reduction_type
        self.global_step = 0
        self._counter = 0

    def verify(self, dtype: dtypes.DType, shape: Any, reduction_type: str) -> None:
        """Checks that a second op naming this shared accumulator asks for the same one.

        Raises:
            InvalidArgumentError: the dtype, shape or reduction type differs.

        Example:
            >>> acc = ConditionalAccumulatorResource("a", dtypes.float32, TensorShape([2]))
            >>> acc.verify(dtypes.float64, [2], "MEAN")  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            dtf_notebook.errors.InvalidArgumentError: Shared accumulator 'a' holds float32 [2] (MEAN) but float64 ...
        """
        shape = TensorShape(shape)
        if dtype != self.dtype or shape.as_tuple() != self.shape.as_tuple() or reduction_type != self.reduction_type:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Shared accumulator '{self.name}' holds {self.dtype.name} {format_shape(self.shape)} "
                f"({self.reduction_type}) but {dtype.name} {format_shape(shape)} ({reduction_type}) was requested",
            )

    def num_accumulated(self) -> int:
        """How many gradients were added since the last ``take_grad``.

        Example:
            >>> ConditionalAccumulatorResource("a", dtypes.float32, TensorShape(None)).num_accumulated()
            0
        """
        return self._counter

    def set_global_step(self, new_global_step: int) -> None:
        """Sets the step that gradients must not be older than.

        Example:
            >>> import torch
            >>> acc = ConditionalAccumulatorResource("a", dtypes.float32, TensorShape(None))
            >>> acc.set_global_step(3); acc.apply_grad(2, torch.tensor(1.0)); acc.num_accumulated()
            0
        """
        with self._cond:
            if new_global_step < self.global_step:
                _log.warning(
                    "Accumulator '%s': global step set back from %d to %d", self.name, self.global_step, new_global_step
                )
            self.global_step = int(new_global_step)

    def _is_stale(self, local_step: int) -> bool:
        if local_step < self.global_step:
            _log.debug(
                "Accumulator '%s' dropped a gradient of step %d (global step %d)",
                self.name,
                local_step,
                self.global_step,
            )
            return True
        return False

    def _take(self, num_required: int, step: Any) -> int:
        """With the lock held: waits for ``num_required`` gradients, advances the global step, starts over.

        Returns:
            How many gradients the sum held.
        """
        if num_required < 1:
            raise errors.InvalidArgumentError(
                None, None, f"Argument num_required must be positive, but was {num_required}"
            )
        self.wait_until(
            lambda: self._counter >= num_required,
            step,
            f"{num_required} gradients in accumulator '{self.name}'",
        )
        taken = self._counter
        self.global_step += 1
        self._counter = 0
        return taken


class ConditionalAccumulatorResource(AccumulatorBase):
    """Accumulates dense gradients (see the module docstring).

    Example:
        >>> import torch
        >>> acc = ConditionalAccumulatorResource("a", dtypes.float32, TensorShape(None), "SUM")
        >>> acc.apply_grad(0, torch.tensor(1.0)); acc.apply_grad(3, torch.tensor(2.0))
        >>> acc.take_grad(2, step=None)
        tensor(3.)
    """

    kind = "ConditionalAccumulator"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._sum: torch.Tensor | None = None

    def apply_grad(self, local_step: int, grad: torch.Tensor) -> None:
        """Adds ``grad`` unless ``local_step`` is older than the global step.

        Raises:
            InvalidArgumentError: the gradient's shape differs from the accumulator's or from earlier gradients'.

        Example:
            >>> import torch
            >>> acc = ConditionalAccumulatorResource("a", dtypes.float32, TensorShape([2]))
            >>> acc.apply_grad(0, torch.zeros(3))
            Traceback (most recent call last):
            ...
            dtf_notebook.errors.InvalidArgumentError: Shape mismatch: expected [2], got [3]
        """
        with self._cond:
            if self._is_stale(local_step):
                return
            got = tuple(grad.shape)
            if self._counter > 0 and tuple(self._sum.shape) != got:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Shape mismatch: expected {format_shape(tuple(self._sum.shape))}, got {format_shape(got)}",
                )
            if not self.shape.is_compatible_with(got):
                raise errors.InvalidArgumentError(
                    None, None, f"Shape mismatch: expected {format_shape(self.shape)}, got {format_shape(got)}"
                )
            if self._counter == 0:
                self._sum = grad.clone()
            else:
                self._sum.add_(grad)
            self._counter += 1
            self._cond.notify_all()

    def take_grad(self, num_required: int, step: Any) -> torch.Tensor:
        """Waits for ``num_required`` gradients; returns their average (or sum) and starts over.

        Raises:
            InvalidArgumentError: ``num_required`` < 1.
            DeadlineExceededError, CancelledError, OpError: see :meth:`SharedResource.wait_until`.

        Example:
            >>> import torch
            >>> acc = ConditionalAccumulatorResource("a", dtypes.int32, TensorShape([]))
            >>> acc.apply_grad(0, torch.tensor(3, dtype=torch.int32))
            >>> acc.apply_grad(0, torch.tensor(4, dtype=torch.int32))
            >>> acc.take_grad(2, step=None)  # integer gradients: truncating division
            tensor(3, dtype=torch.int32)
        """
        with self._cond:
            count = self._take(num_required, step)
            total, self._sum = self._sum, None
        return _divide(total, count) if self.reduction_type == "MEAN" else total


class SparseConditionalAccumulatorResource(AccumulatorBase):
    """Accumulates sparse gradients (indices, values, dense shape); see the module docstring.

    Example:
        >>> import torch
        >>> acc = SparseConditionalAccumulatorResource("s", dtypes.float32, TensorShape(None))
        >>> acc.apply_grad(0, torch.tensor([0, 2]), torch.tensor([[1.0], [2.0]]))
        >>> acc.apply_grad(0, torch.tensor([2]), torch.tensor([[4.0]]))
        >>> indices, values, shape = acc.take_grad(2, step=None)
        >>> indices.tolist(), values.tolist(), shape.tolist()
        ([0, 2], [[1.0], [3.0]], [-1, 1])
    """

    kind = "SparseConditionalAccumulator"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._indices: torch.Tensor | None = None  # sorted, unique row indices (int64)
        self._values: torch.Tensor | None = None  # summed rows, aligned with _indices
        self._counts: torch.Tensor | None = None  # how many gradients contributed to each row

    def _validate(self, indices: torch.Tensor, values: torch.Tensor, dense_shape: torch.Tensor | None) -> None:
        if indices.dim() != 1:
            raise errors.InvalidArgumentError(
                None, None, f"Input indices should be vector but received shape: {format_shape(tuple(indices.shape))}"
            )
        if values.dim() == 0:
            raise errors.InvalidArgumentError(None, None, "Values cannot be 0-dimensional.")
        nnz = indices.shape[0]
        if values.shape[0] != nnz:
            raise errors.InvalidArgumentError(
                None, None, f"Expected {nnz} non-empty input values, got {values.shape[0]}"
            )
        dims = self.shape.as_tuple()
        if dense_shape is not None and dims is not None:
            given = [int(d) for d in dense_shape.reshape(-1).tolist()]
            if len(dims) > len(given):
                raise errors.InvalidArgumentError(
                    None, None, f"Shape mismatch: expected shape rank at least {len(dims)}, got {len(given)}"
                )
            for i, d in enumerate(dims):
                if d is not None and d != given[i]:
                    raise errors.InvalidArgumentError(
                        None, None, f"Shape mismatch: expected shape dim {i} to be {d}, got {given[i]}"
                    )
        if dims and dims[0] is not None and nnz:
            too_big = indices >= dims[0]
            if bool(too_big.any()) or bool((indices < 0).any()):
                i = int(torch.nonzero(too_big | (indices < 0))[0])
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Shape mismatch: index of slice {i} exceeded limits of shape; index is {int(indices[i])} "
                    f"exceeded {dims[0]}",
                )
        if self._counter > 0:
            want = tuple(self._values.shape[1:])
            if values.dim() != self._values.dim():
                raise errors.InvalidArgumentError(
                    None, None, f"Shape mismatch: expected values rank {self._values.dim()}, got {values.dim()}"
                )
            for i, (w, g) in enumerate(zip(want, values.shape[1:]), start=1):
                if w != g:
                    raise errors.InvalidArgumentError(
                        None, None, f"Shape mismatch: expected values dim {i} to be {w}, got {g}"
                    )
        elif dims is not None:
            if len(dims) > values.dim():
                raise errors.InvalidArgumentError(
                    None, None, f"Shape mismatch: expected values rank at least {len(dims)}, got {values.dim()}"
                )
            for i in range(1, len(dims)):
                if dims[i] is not None and dims[i] != values.shape[i]:
                    raise errors.InvalidArgumentError(
                        None, None, f"Shape mismatch: expected values dim {i} to be {dims[i]}, got {values.shape[i]}"
                    )

    def apply_grad(
        self,
        local_step: int,
        indices: torch.Tensor,
        values: torch.Tensor,
        dense_shape: torch.Tensor | None = None,
    ) -> None:
        """Adds the rows ``values`` at ``indices`` unless ``local_step`` is older than the global step.

        Raises:
            InvalidArgumentError: the indices are not a vector, do not match the values, fall outside the
                accumulator's shape, or the values' shape differs from earlier gradients'.

        Example:
            >>> import torch
            >>> acc = SparseConditionalAccumulatorResource("s", dtypes.float32, TensorShape([3, 1]))
            >>> acc.apply_grad(0, torch.tensor([5]), torch.tensor([[1.0]]))  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            dtf_notebook.errors.InvalidArgumentError: Shape mismatch: index of slice 0 exceeded limits of shape; ...
        """
        with self._cond:
            if self._is_stale(local_step):
                return
            self._validate(indices, values, dense_shape)
            indices = indices.to(torch.int64)
            unique, position = torch.unique(indices, sorted=True, return_inverse=True)
            rows = torch.zeros((unique.shape[0],) + tuple(values.shape[1:]), dtype=values.dtype, device=values.device)
            rows.index_add_(0, position, values)
            ones = torch.ones(unique.shape[0], dtype=torch.int64, device=values.device)
            if self._counter == 0:
                self._indices, self._values, self._counts = unique, rows, ones
            else:
                merged, where = torch.unique(torch.cat([self._indices, unique]), sorted=True, return_inverse=True)
                summed = torch.zeros((merged.shape[0],) + tuple(rows.shape[1:]), dtype=rows.dtype, device=rows.device)
                summed.index_add_(0, where, torch.cat([self._values, rows]))
                counts = torch.zeros(merged.shape[0], dtype=torch.int64, device=rows.device)
                counts.index_add_(0, where, torch.cat([self._counts, ones]))
                self._indices, self._values, self._counts = merged, summed, counts
            self._counter += 1
            self._cond.notify_all()

    def take_grad(self, num_required: int, step: Any) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Waits for ``num_required`` gradients; returns ``(indices, values, dense_shape)`` and starts over.

        Each row is averaged over the gradients that had it (``MEAN``) or summed (``SUM``). The dense
        shape's first dimension is the accumulator's (``-1`` when unknown), the others the values'.

        Example:
            >>> import torch
            >>> acc = SparseConditionalAccumulatorResource("s", dtypes.float32, TensorShape([3, 1]), "SUM")
            >>> acc.apply_grad(0, torch.tensor([2, 0]), torch.tensor([[1.0], [2.0]]))
            >>> [t.tolist() for t in acc.take_grad(1, step=None)]
            [[0, 2], [[2.0], [1.0]], [3, 1]]
        """
        with self._cond:
            self._take(num_required, step)
            indices, values, counts = self._indices, self._values, self._counts
            self._indices = self._values = self._counts = None
        if self.reduction_type == "MEAN":
            values = _divide(values, counts.to(values.dtype).reshape((-1,) + (1,) * (values.dim() - 1)))
        dims = self.shape.as_tuple()
        first = -1 if not dims or dims[0] is None else dims[0]
        dense_shape = torch.tensor([first, *values.shape[1:]], dtype=torch.int64)
        return indices, values, dense_shape
