"""``SparseTensor``s through queues: TF's ``AddSparseToTensorsMap``, ``AddManySparseToTensorsMap`` and
``TakeManySparseFromTensorsMap``.

A queue holds dense tensors only, so ``tf.train.batch`` and its kin store each ``SparseTensor`` in a map (a
resource of the task, named after the storing op unless ``shared_name`` is set) and enqueue its int64 handle;
after the dequeue, ``TakeManySparseFromTensorsMap`` takes the handles' sparse tensors out of the map and stacks
them into one ``SparseTensor`` with a leading batch dimension.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     st = tf.SparseTensor([[0], [2]], [1.0, 2.0], [3])
    ...     handle = add_sparse_to_tensors_map(st)
    ...     batch = take_many_sparse_from_tensors_map(handle.op, tf.stack([handle]), rank=2)
    ...     with tf.Session() as sess:
    ...         print(sess.run(batch).indices.tolist())
    [[0, 0], [0, 2]]
"""

from __future__ import annotations

import itertools
import threading
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.sparse_tensor import SparseTensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, scalar
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.op_helpers import make_op

__all__ = ["add_sparse_to_tensors_map", "add_many_sparse_to_tensors_map", "take_many_sparse_from_tensors_map"]


class SparseTensorsMap:
    """Sparse tensors stored under int64 handles until taken (each handle is taken once).

    Example:
        >>> m = SparseTensorsMap("m")
        >>> h = m.add(np.array([[1]]), np.array([5.0]), np.array([4]))
        >>> m.take([h])[0][1].tolist()
        [5.0]
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._items: dict[int, tuple[np.ndarray, Any, np.ndarray]] = {}
        self._next = itertools.count(1)
        self._lock = threading.Lock()

    def add(self, indices: np.ndarray, values: Any, shape: np.ndarray) -> int:
        with self._lock:
            handle = next(self._next)
            self._items[handle] = (indices, values, shape)
            return handle

    def take(self, handles: list[int]) -> list[tuple[np.ndarray, Any, np.ndarray]]:
        with self._lock:
            missing = [h for h in handles if h not in self._items]
            if missing:
                raise errors.InvalidArgumentError(
                    None, None, f"Unable to find SparseTensor: {missing[0]} in map: {self.name}"
                )
            return [self._items.pop(h) for h in handles]

    def read(self) -> np.ndarray:
        return np.array([b"", self.name.encode()], dtype=object)


def _map_of(op: Operation, ctx: Any) -> Any:
    """The map an op uses: its shared name's, else the storing op's own (private to the session, as TF's)."""
    container, shared = op.get_attr("container"), op.get_attr("shared_name")
    name = shared or (op.get_attr("map_name") if "map_name" in op.attrs else op.name)
    mgr, session = ctx.resources, ctx.state.session
    key = f"{name}@{session}" if session and not shared else name
    return lambda: mgr.lookup_or_create(container, "SparseTensorsMap:" + key, lambda: SparseTensorsMap(name))


def _numpy(value: Any) -> Any:
    return value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else np.asarray(value, dtype=object)


def _add_kernel(op: Operation, ctx: Any) -> Any:
    find = _map_of(op, ctx)

    def run(indices: Any, values: Any, shape: Any) -> torch.Tensor:
        stored = values.clone() if isinstance(values, torch.Tensor) else np.array(values, dtype=object)
        return torch.tensor(find().add(_numpy(indices), stored, _numpy(shape)), dtype=torch.int64)

    return run


def _add_many_kernel(op: Operation, ctx: Any) -> Any:
    find = _map_of(op, ctx)

    def run(indices: Any, values: Any, shape: Any) -> torch.Tensor:
        ix, shape_np = _numpy(indices), _numpy(shape)
        if shape_np.size < 2:
            raise errors.InvalidArgumentError(
                None, op, f"Rank of input SparseTensor should be > 1, but saw rank: {shape_np.size}"
            )
        rows = ix[:, 0] if len(ix) else np.zeros(0, np.int64)
        if len(rows) > 1 and np.any(np.diff(rows) < 0):
            raise errors.InvalidArgumentError(None, op, "Indices are not ordered by their first dimension")
        bounds = np.searchsorted(rows, np.arange(int(shape_np[0]) + 1))
        the_map = find()
        handles = []
        for b in range(int(shape_np[0])):
            lo, hi = bounds[b], bounds[b + 1]
            part = values[lo:hi].clone() if isinstance(values, torch.Tensor) else np.array(values[lo:hi], dtype=object)
            handles.append(the_map.add(ix[lo:hi, 1:], part, shape_np[1:]))
        return torch.tensor(handles, dtype=torch.int64)

    return run


def _take_kernel(op: Operation, ctx: Any) -> Any:
    find = _map_of(op, ctx)
    dtype = op.get_attr("dtype")

    def run(handles: Any) -> tuple:
        items = find().take([int(h) for h in _numpy(handles).reshape(-1)])
        ranks = {len(shape) for _, _, shape in items}
        if len(ranks) > 1:
            raise errors.InvalidArgumentError(None, op, f"Inconsistent rank across SparseTensors: {sorted(ranks)}")
        rank = ranks.pop() if ranks else max(int(op.get_attr("rank")), 1) - 1
        shape = np.array([len(items), *np.max([s for _, _, s in items], axis=0)] if items else [0] * (rank + 1))
        index_parts = [
            np.concatenate([np.full((len(ix), 1), b, np.int64), ix.reshape(len(ix), rank)], axis=1)
            for b, (ix, _, _) in enumerate(items)
        ]
        indices = np.concatenate(index_parts) if index_parts else np.zeros((0, rank + 1), np.int64)
        if dtype == dtypes.string:
            value_parts = [np.asarray(v, dtype=object).reshape(-1) for _, v, _ in items]
            values: Any = np.concatenate(value_parts) if value_parts else np.zeros(0, dtype=object)
        else:
            value_parts = [v.reshape(-1) for _, v, _ in items]
            values = torch.cat(value_parts) if value_parts else torch.zeros(0, dtype=_torch_type(dtype))
        return torch.from_numpy(indices.astype(np.int64)), values, torch.from_numpy(shape.astype(np.int64))

    return run


def _torch_type(dtype: dtypes.DType) -> torch.dtype:
    from dtf_notebook.runtime.values import torch_dtype

    return torch_dtype(dtype)


_STATEFUL = {"grad": op_registry.NOT_DIFFERENTIABLE, "stateful": True, "cpu_only": True}
op_registry.register_op(
    "AddSparseToTensorsMap", infer=lambda op: [(dtypes.int64, scalar())], kernel=_add_kernel, **_STATEFUL
)
op_registry.register_op(
    "AddManySparseToTensorsMap",
    infer=lambda op: [(dtypes.int64, TensorShape([None]))],
    kernel=_add_many_kernel,
    **_STATEFUL,
)


def _take_infer(op: Operation) -> list:
    rank = int(op.get_attr("rank"))
    width = None if rank < 0 else rank
    return [
        (dtypes.int64, TensorShape([None, width])),
        (op.get_attr("dtype"), TensorShape([None])),
        (dtypes.int64, TensorShape([width])),
    ]


op_registry.register_op("TakeManySparseFromTensorsMap", infer=_take_infer, kernel=_take_kernel, **_STATEFUL)


def _map_attrs(container: str | None, shared_name: str | None) -> dict[str, Any]:
    return {"container": container or "", "shared_name": shared_name or ""}


def add_sparse_to_tensors_map(
    sp_input: SparseTensor, container: str | None = None, shared_name: str | None = None, name: str | None = None
) -> Tensor:
    """Stores ``sp_input`` in a map; returns its int64 scalar handle.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     add_sparse_to_tensors_map(tf.SparseTensor([[0]], [1], [2])).op.type
        'AddSparseToTensorsMap'
    """
    inputs = [sp_input.indices, sp_input.values, sp_input.dense_shape]
    attrs = _map_attrs(container, shared_name)
    return make_op("AddSparseToTensorsMap", inputs, attrs, name=name or "AddSparseToTensorsMap").outputs[0]


def add_many_sparse_to_tensors_map(
    sp_input: SparseTensor, container: str | None = None, shared_name: str | None = None, name: str | None = None
) -> Tensor:
    """Stores each row (along dimension 0) of ``sp_input`` in a map; returns their int64 handles.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     add_many_sparse_to_tensors_map(tf.SparseTensor([[0, 0], [1, 2]], [1, 2], [2, 3])).shape.as_list()
        [None]
    """
    inputs = [sp_input.indices, sp_input.values, sp_input.dense_shape]
    attrs = _map_attrs(container, shared_name)
    return make_op("AddManySparseToTensorsMap", inputs, attrs, name=name or "AddManySparseToTensorsMap").outputs[0]


def take_many_sparse_from_tensors_map(
    sparse_map_op: Operation,
    sparse_handles: Any,
    rank: int | None = None,
    name: str | None = None,
) -> SparseTensor:
    """Takes the sparse tensors of ``sparse_handles`` out of the map of ``sparse_map_op`` (the op that stored them)
    and stacks them into a ``SparseTensor`` of rank ``rank`` (their rank plus one).

    Raises:
        TypeError: ``sparse_map_op`` is not an op that stores sparse tensors.
        InvalidArgumentError (at run time): a handle is not (or no longer) in the map.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     st = tf.SparseTensor([[1]], ["x"], [2])
        ...     h = add_sparse_to_tensors_map(st)
        ...     take_many_sparse_from_tensors_map(h.op, tf.stack([h])).values.dtype
        tf.string
    """
    if sparse_map_op.type not in ("AddSparseToTensorsMap", "AddManySparseToTensorsMap"):
        raise TypeError(f"sparse_map_op must be an op storing SparseTensors, got {sparse_map_op.type}")
    handles = convert_to_tensor(sparse_handles, dtype=dtypes.int64, name="sparse_handles")
    attrs = {
        "dtype": sparse_map_op.inputs[1].dtype,
        "container": sparse_map_op.get_attr("container"),
        "shared_name": sparse_map_op.get_attr("shared_name"),
        "map_name": sparse_map_op.name,
        "rank": -1 if rank is None else int(rank),
    }
    op = make_op("TakeManySparseFromTensorsMap", [handles], attrs, name=name or "TakeManySparseFromTensorsMap")
    return SparseTensor(*op.outputs)
