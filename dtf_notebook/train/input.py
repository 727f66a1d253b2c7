"""TF1's queue-based input pipelines (``tf.train.string_input_producer``, ``batch``, ``shuffle_batch``, ...).

Each function builds queues in the graph and registers a :class:`~dtf_notebook.train.queue_runner.QueueRunner`
for them in ``GraphKeys.QUEUE_RUNNERS``: once ``tf.train.start_queue_runners`` (or a monitored session) starts
their threads, the queues fill while the model trains, and the model reads batches with no ``feed_dict``. On a
cluster the queues, readers and parsing ops live on the task whose device they are built under (the enqueue runs
there too), so training data never passes through the client. With ``num_epochs`` an input ends after that many
passes: the producer's local ``epochs`` counter raises ``OutOfRangeError``, its queue closes, and the batch
queues drain and close in turn, so the training loop ends on ``OutOfRangeError`` (as in TF; initialise local
variables first).

The graph is TF's: the same name scopes, queue kinds, summaries (``fraction_of_<capacity>_full``) and
``SparseTensor`` handling (sparse tensors travel through queues as handles into a map).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     number = tf.train.range_input_producer(5, num_epochs=1, shuffle=False).dequeue()
    ...     batch = tf.train.batch([number], batch_size=2, allow_smaller_final_batch=True)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.local_variables_initializer())
    ...         coord = tf.train.Coordinator()
    ...         threads = tf.train.start_queue_runners(sess, coord)
    ...         try:
    ...             while True:
    ...                 print(sess.run(batch))
    ...         except tf.errors.OutOfRangeError:
    ...             print("done")
    ...         coord.request_stop(); coord.join(threads)
    [0 1]
    [2 3]
    [4]
    done
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import GraphKeys, control_dependencies, name_scope
from dtf_notebook.framework.sparse_tensor import SparseTensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import Dimension, TensorShape
from dtf_notebook.layers.utils import smart_cond
from dtf_notebook.ops import array_ops, identity_ops, math_ops
from dtf_notebook.ops.assert_op import Assert
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.data_flow_ops import FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue
from dtf_notebook.ops.io.input_ops import matching_files
from dtf_notebook.ops.io.sparse_map_ops import (
    add_many_sparse_to_tensors_map,
    add_sparse_to_tensors_map,
    take_many_sparse_from_tensors_map,
)
from dtf_notebook.ops.random_ops import random_shuffle
from dtf_notebook.ops.variables import Variable
from dtf_notebook.summary import summary_ops
from dtf_notebook.train.queue_runner import QueueRunner, add_queue_runner

__all__ = [
    "match_filenames_once",
    "limit_epochs",
    "input_producer",
    "string_input_producer",
    "range_input_producer",
    "slice_input_producer",
    "batch",
    "maybe_batch",
    "batch_join",
    "maybe_batch_join",
    "shuffle_batch",
    "maybe_shuffle_batch",
    "shuffle_batch_join",
    "maybe_shuffle_batch_join",
]


# ---- producers -------------------------------------------------------------------------------------
def match_filenames_once(pattern: Any, name: str | None = None) -> Variable:
    """A local variable holding the (sorted) files matching ``pattern``, computed once when it is initialised.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     files = match_filenames_once("memory://no_such_dir/*.csv")
        ...     files.op.name, files in tf.local_variables()
        ('matching_filenames', True)
    """
    with name_scope(name, "matching_filenames", [pattern]) as scope:
        return Variable(
            matching_files(pattern),
            name=scope,
            trainable=False,
            validate_shape=False,
            collections=[GraphKeys.LOCAL_VARIABLES],
        )


def limit_epochs(tensor: Any, num_epochs: int | None = None, name: str | None = None) -> Tensor:
    """``tensor``, readable ``num_epochs`` times; then ``OutOfRangeError`` (a local ``epochs`` counter counts).

    Raises:
        ValueError: ``num_epochs`` is not positive.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     twice = limit_epochs(tf.constant("x"), 2)
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(sess.run(twice), sess.run(twice))
        ...         try:
        ...             sess.run(twice)
        ...         except tf.errors.OutOfRangeError:
        ...             print("no more")
        b'x' b'x'
        no more
    """
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0 not {num_epochs}.")
    with name_scope(name, "limit_epochs", [tensor]) as scope:
        zero64 = constant(0, dtype=dtypes.int64)
        epochs = Variable(zero64, name="epochs", trainable=False, collections=[GraphKeys.LOCAL_VARIABLES])
        counter = epochs.count_up_to(num_epochs)
        with control_dependencies([counter]):
            return identity_ops.identity(tensor, name=scope)


def _fraction_full(queue: Any, capacity: int, name: str) -> None:
    summary_ops.scalar(name, math_ops.cast(queue.size(), dtypes.float32) * (1.0 / capacity))


def input_producer(
    input_tensor: Any,
    element_shape: Any = None,
    num_epochs: int | None = None,
    shuffle: bool = True,
    seed: int | None = None,
    capacity: int = 32,
    shared_name: str | None = None,
    summary_name: str | None = None,
    name: str | None = None,
    cancel_op: Any = None,
) -> FIFOQueue:
    """A queue filled with the rows of ``input_tensor``, epoch after epoch (shuffled per epoch by default).

    Args:
        input_tensor: The rows to produce (rank >= 1).
        element_shape: A row's shape, when ``input_tensor``'s is not fully known.
        num_epochs: Produce every row this many times, then close the queue (None: forever).
        shuffle: Shuffle the rows of each epoch.
        seed: Seed of the shuffle.
        capacity: The queue's capacity.
        shared_name: Share the queue across sessions under this name.
        summary_name: Add a ``fraction of full`` scalar summary under this name.
        name: The queue's name.
        cancel_op: The op cancelling the queue's pending enqueues on a stop.

    Returns:
        The queue, with its runner in ``QUEUE_RUNNERS``.

    Raises:
        ValueError: the row shape is not fully known.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     q = input_producer([[1, 2], [3, 4]], shuffle=False)
        ...     q.dtypes, q.shapes, len(tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS))
        ([tf.int32], [TensorShape([2])], 1)
    """
    with name_scope(name, "input_producer", [input_tensor]):
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        element_shape = input_tensor.shape[1:].merge_with(TensorShape(element_shape))
        if not element_shape.is_fully_defined():
            raise ValueError(
                "Either `input_tensor` must have a fully defined shape or `element_shape` must be specified"
            )
        if shuffle:
            input_tensor = random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        q = FIFOQueue(
            capacity=capacity,
            dtypes=[input_tensor.dtype.base_dtype],
            shapes=[element_shape],
            shared_name=shared_name,
            name=name or "fifo_queue",
        )
        enq = q.enqueue_many([input_tensor])
        add_queue_runner(QueueRunner(q, [enq], cancel_op=cancel_op))
        if summary_name is not None:
            _fraction_full(q, capacity, summary_name)
        return q


def string_input_producer(
    string_tensor: Any,
    num_epochs: int | None = None,
    shuffle: bool = True,
    seed: int | None = None,
    capacity: int = 32,
    shared_name: str | None = None,
    name: str | None = None,
    cancel_op: Any = None,
) -> FIFOQueue:
    """A queue of the strings (usually file names) of ``string_tensor``, for a reader to read.

    Raises:
        ValueError: ``string_tensor`` is empty (checked again when it runs, for tensors).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     files = string_input_producer(["a.csv", "b.csv"], shuffle=False, num_epochs=1)
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         threads = tf.train.start_queue_runners(sess)
        ...         print(sess.run(files.dequeue_up_to(5)))
        [b'a.csv' b'b.csv']
    """
    not_null_err = "string_input_producer requires a non-null input tensor"
    if _statically_empty(string_tensor):
        raise ValueError(not_null_err)
    with name_scope(name, "input_producer", [string_tensor]) as scope:
        string_tensor = convert_to_tensor(string_tensor, dtype=dtypes.string)
        with control_dependencies([Assert(math_ops.greater(array_ops.size(string_tensor), 0), [not_null_err])]):
            string_tensor = identity_ops.identity(string_tensor)
        return input_producer(
            input_tensor=string_tensor,
            element_shape=[],
            num_epochs=num_epochs,
            shuffle=shuffle,
            seed=seed,
            capacity=capacity,
            shared_name=shared_name,
            name=scope,
            summary_name=f"fraction_of_{capacity}_full",
            cancel_op=cancel_op,
        )


def _statically_empty(value: Any) -> bool:
    """An empty Python list (or falsy value); a tensor or variable is checked when it runs."""
    if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
        return False
    try:
        return len(value) == 0
    except TypeError:
        return not value


def range_input_producer(
    limit: Any,
    num_epochs: int | None = None,
    shuffle: bool = True,
    seed: int | None = None,
    capacity: int = 32,
    shared_name: str | None = None,
    name: str | None = None,
) -> FIFOQueue:
    """A queue of the integers ``0 .. limit - 1``, epoch after epoch.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     range_input_producer(10).dtypes
        [tf.int32]
    """
    with name_scope(name, "input_producer", [limit]) as scope:
        range_tensor = math_ops.range(limit)
        return input_producer(
            range_tensor, [], num_epochs, shuffle, seed, capacity, shared_name, f"fraction_of_{capacity}_full", scope
        )


def slice_input_producer(
    tensor_list: Sequence[Any],
    num_epochs: int | None = None,
    shuffle: bool = True,
    seed: int | None = None,
    capacity: int = 32,
    shared_name: str | None = None,
    name: str | None = None,
) -> list[Tensor]:
    """One slice (along dimension 0) of each tensor of ``tensor_list``, the same row of each, row after row.

    Returns:
        A list of tensors, one row of each input.

    Raises:
        ValueError: ``tensor_list`` is empty.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     x, y = slice_input_producer([tf.zeros([5, 3]), tf.range(5)], shuffle=False)
        ...     x.shape.as_list(), y.shape.as_list()
        ([3], [])
    """
    with name_scope(name, "input_producer", list(tensor_list)):
        tensors = _convert_n(tensor_list)
        if not tensors:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        range_size = array_ops.shape(tensors[0])[0]
        queue = range_input_producer(
            range_size, num_epochs=num_epochs, shuffle=shuffle, seed=seed, capacity=capacity, shared_name=shared_name
        )
        index = queue.dequeue()
        return [array_ops.gather(t, index) for t in tensors]


# ---- batching helpers ------------------------------------------------------------------------------
def _convert_n(values: Sequence[Any]) -> list[Any]:
    return [v if isinstance(v, SparseTensor) else convert_to_tensor(v) for v in values]


class _SparseMetaData:
    """Whether a batched component is sparse, which op stored it, and its rank (TF's ``_SparseMetaData``)."""

    def __init__(self, sparse: bool, map_op: Any, rank: Any) -> None:
        self.sparse, self.map_op, self.rank = sparse, map_op, Dimension(rank)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _SparseMetaData) or self.sparse != other.sparse:
            return False
        if not self.sparse:
            return True
        return self.map_op is other.map_op and self.rank.is_compatible_with(other.rank)

    __hash__ = None  # type: ignore[assignment]

    def merge_with(self, other: _SparseMetaData) -> _SparseMetaData:
        if self != other:
            raise ValueError(f"SparseMetaData objects are incompatible: {self} vs. {other}")
        if self.sparse:
            self.rank = self.rank.merge_with(other.rank)
        return self

    def __str__(self) -> str:
        return f"[SparseMetaData({self.sparse}, {getattr(self.map_op, 'name', None)}, {self.rank})]"


def _as_tensor_list(tensors: Any) -> list[Any]:
    if isinstance(tensors, dict):
        return [tensors[k] for k in sorted(tensors, key=str)]
    return list(tensors)


def _as_tensor_list_list(tensors_list: Sequence[Any]) -> list[list[Any]]:
    if not tensors_list:
        raise ValueError("Expected at least one set of tensors")
    if isinstance(tensors_list[0], dict):
        expected = set(tensors_list[0])
        for tensors in tensors_list[1:]:
            if set(tensors) != expected:
                raise ValueError("All dictionaries in tensors_list must have the same keys")
    return [_as_tensor_list(t) for t in tensors_list]


def _as_original_type(original: Any, tensor_list: Any) -> Any:
    if isinstance(original, dict):
        if len(original) == 1:
            tensor_list = [tensor_list]  # a one-component dequeue gives a tensor, not a list
        return {k: tensor_list[i] for i, k in enumerate(sorted(original, key=str))}
    return tensor_list


def _sparse_retain(st: SparseTensor, keep: Tensor) -> SparseTensor:
    """The entries of ``st`` where ``keep`` (one bool per entry) is true (TF's ``sparse_retain``)."""
    return SparseTensor(
        array_ops.boolean_mask(st.indices, keep), array_ops.boolean_mask(st.values, keep), st.dense_shape
    )


def _store_sparse_tensors(
    tensor_list: list[Any], enqueue_many: bool, keep_input: Tensor, shared_map_ops: list[Any] | None = None
) -> tuple[list[Any], list[_SparseMetaData]]:
    """Replaces each ``SparseTensor`` by its handle(s) in a map, so it can go through a queue."""
    maybe_shared = shared_map_ops or [None] * len(tensor_list)

    def store(t: Any, shared_map_op: Any) -> Any:
        if not isinstance(t, SparseTensor):
            return t
        map_name = shared_map_op.name if shared_map_op is not None else None
        if keep_input.shape.ndims == 1:
            t = _sparse_retain(t, array_ops.gather(keep_input, t.indices[:, 0]))
            return add_many_sparse_to_tensors_map(t, shared_name=map_name)
        if enqueue_many:
            out = smart_cond(
                keep_input,
                lambda: add_many_sparse_to_tensors_map(t, shared_name=map_name),
                lambda: -1 * array_ops.ones(t.dense_shape[0:1], dtypes.int64),
            )
            out.set_shape([None])
            return out
        return smart_cond(
            keep_input,
            lambda: add_sparse_to_tensors_map(t, shared_name=map_name),
            lambda: constant(-1, dtypes.int64),
        )

    stored = [store(t, m) for t, m in zip(tensor_list, maybe_shared)]

    def storing_op(s: Any) -> Any:
        # Behind a tf.cond the stored handle comes out of a Merge: look one op back for the storing op.
        if s.op.type in ("AddSparseToTensorsMap", "AddManySparseToTensorsMap"):
            return s.op
        for t in s.op.inputs:
            if t.op.type in ("AddSparseToTensorsMap", "AddManySparseToTensorsMap"):
                return t.op
            for u in t.op.inputs:
                if u.op.type in ("AddSparseToTensorsMap", "AddManySparseToTensorsMap"):
                    return u.op
        return s.op

    infos = []
    for t, s, shared in zip(tensor_list, stored, maybe_shared):
        if not isinstance(t, SparseTensor):
            infos.append(_SparseMetaData(False, None, None))
            continue
        rank = t.dense_shape.shape.with_rank(1)[0].value
        if enqueue_many and rank is not None:
            rank -= 1
        infos.append(_SparseMetaData(True, shared or storing_op(s), rank))
    stored = [array_ops.expand_dims(s, -1) if info.sparse else s for s, info in zip(stored, infos)]
    return stored, infos


def _store_sparse_tensors_join(
    tensor_list_list: list[list[Any]], enqueue_many: bool, keep_input: Tensor
) -> tuple[list[list[Any]], list[_SparseMetaData]]:
    first, infos = _store_sparse_tensors(tensor_list_list[0], enqueue_many, keep_input)
    stored = [first]
    for tensor_list in tensor_list_list[1:]:
        s, candidate = _store_sparse_tensors(tensor_list, enqueue_many, keep_input, [i.map_op for i in infos])
        if infos != candidate:
            raise ValueError(f"Inconsistent SparseTensors list: {tensor_list_list[0]} vs. {tensor_list}")
        infos = [a.merge_with(b) for a, b in zip(infos, candidate)]
        stored.append(s)
    return stored, infos


def _restore_sparse_tensors(stored: Any, infos: list[_SparseMetaData]) -> Any:
    sequence = isinstance(stored, list | tuple)
    stored_list = list(stored) if sequence else [stored]
    tensors = [
        take_many_sparse_from_tensors_map(
            info.map_op, array_ops.squeeze(s, [1]), rank=None if info.rank.value is None else info.rank.value + 1
        )
        if info.sparse
        else s
        for s, info in zip(stored_list, infos)
    ]
    if any(isinstance(t, SparseTensor) for t in tensors):
        # TF: every output waits for every sparse restore, so a step never sees half a batch.
        deps = [t.values if isinstance(t, SparseTensor) else t for t in tensors]

        def after(x: Tensor) -> Tensor:
            with control_dependencies(deps):
                return identity_ops.identity(x)

        tensors = [
            SparseTensor(after(t.indices), after(t.values), after(t.dense_shape))
            if isinstance(t, SparseTensor)
            else after(t)
            for t in tensors
        ]
    return tensors if sequence else tensors[0]


def _validate(tensor_list: list[Any]) -> list[Any]:
    tensor_list = _convert_n(tensor_list)
    if not tensor_list:
        raise ValueError("Expected at least one tensor in batch().")
    return tensor_list


def _validate_join(tensor_list_list: list[list[Any]]) -> list[list[Any]]:
    tensor_list_list = [_convert_n(tl) for tl in tensor_list_list]
    if not tensor_list_list:
        raise ValueError("Expected at least one input in batch_join().")
    return tensor_list_list


def _validate_keep_input(keep_input: Any, enqueue_many: bool) -> Tensor:
    keep_input = convert_to_tensor(keep_input)
    if keep_input.shape.ndims is None:
        raise ValueError("`keep_input` dimensions must be known at graph construction.")
    if not enqueue_many and keep_input.shape.ndims == 1:
        raise ValueError("`keep_input` cannot be a vector when `enqueue_many=False`.")
    if keep_input.shape.ndims > 1:
        raise ValueError("`keep_input` must be 0 or 1 dimensions.")
    return keep_input


def _dtypes(tensor_list_list: list[list[Any]]) -> list[dtypes.DType]:
    all_types = [[t.dtype for t in tl] for tl in tensor_list_list]
    types = all_types[0]
    for other in all_types[1:]:
        if other != types:
            raise TypeError(
                "Expected types to be consistent: "
                f"{', '.join(x.name for x in types)} vs. {', '.join(x.name for x in other)}."
            )
    return types


def _merge_shapes(shape_list: list[Any], enqueue_many: bool) -> list[Any]:
    shapes = [TensorShape(s) for s in shape_list]
    if enqueue_many:
        shapes = [s.with_rank_at_least(1)[1:] for s in shapes]
    merged = shapes[0]
    for s in shapes[1:]:
        merged = merged.merge_with(s)
    return merged.as_list()


def _shapes(tensor_list_list: list[list[Any]], shapes: Any, enqueue_many: bool) -> Any:
    if shapes is not None:
        return shapes
    n = len(tensor_list_list[0])
    for tl in tensor_list_list:
        for i in range(n):
            if tl[i].shape.ndims is None:
                raise ValueError(f"Cannot infer Tensor's rank: {tl[i]}")
    return [_merge_shapes([tl[i].shape.as_list() for tl in tensor_list_list], enqueue_many) for i in range(n)]


def _select_which_to_enqueue(tensor_list: list[Any], keep_input: Tensor) -> list[Any]:
    select = math_ops.cast(keep_input, dtypes.int32)
    return [array_ops.dynamic_partition(x, select, num_partitions=2)[1] for x in tensor_list]


def _enqueue_join(queue: Any, tensor_list_list: list[list[Any]], enqueue_many: bool, keep_input: Tensor) -> None:
    enqueue_fn = queue.enqueue_many if enqueue_many else queue.enqueue
    if keep_input.shape.ndims == 1:
        ops = [enqueue_fn(_select_which_to_enqueue(x, keep_input)) for x in tensor_list_list]
    else:
        ops = [smart_cond(keep_input, lambda tl=tl: enqueue_fn(tl), identity_ops.no_op) for tl in tensor_list_list]
    add_queue_runner(QueueRunner(queue, ops))


def _enqueue(queue: Any, tensor_list: list[Any], threads: int, enqueue_many: bool, keep_input: Tensor) -> None:
    enqueue_fn = queue.enqueue_many if enqueue_many else queue.enqueue
    if keep_input.shape.ndims == 1:
        op = enqueue_fn(_select_which_to_enqueue(tensor_list, keep_input))
    else:
        op = smart_cond(keep_input, lambda: enqueue_fn(tensor_list), identity_ops.no_op)
    # One op, run by ``threads`` threads at once (TF's way to read and decode in parallel).
    add_queue_runner(QueueRunner(queue, [op] * threads))


def _which_queue(dynamic_pad: bool) -> type:
    return PaddingFIFOQueue if dynamic_pad else FIFOQueue


def _dequeue(queue: Any, batch_size: Any, allow_smaller_final_batch: bool, name: str) -> Any:
    if allow_smaller_final_batch:
        return queue.dequeue_up_to(batch_size, name=name)
    return queue.dequeue_many(batch_size, name=name)


# ---- batching --------------------------------------------------------------------------------------
def _batch(
    tensors: Any,
    batch_size: Any,
    keep_input: Any,
    num_threads: int = 1,
    capacity: int = 32,
    enqueue_many: bool = False,
    shapes: Any = None,
    dynamic_pad: bool = False,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    tensor_list = _as_tensor_list(tensors)
    with name_scope(name, "batch", [*_plain(tensor_list), keep_input]) as scope:
        tensor_list = _validate(tensor_list)
        keep = _validate_keep_input(keep_input, enqueue_many)
        tensor_list, sparse_info = _store_sparse_tensors(tensor_list, enqueue_many, keep)
        types = _dtypes([tensor_list])
        shapes = _shapes([tensor_list], shapes, enqueue_many)
        queue = _which_queue(dynamic_pad)(capacity=capacity, dtypes=types, shapes=shapes, shared_name=shared_name)
        _enqueue(queue, tensor_list, num_threads, enqueue_many, keep)
        _fraction_full(queue, capacity, f"fraction_of_{capacity}_full")
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        return _as_original_type(tensors, _restore_sparse_tensors(dequeued, sparse_info))


def _plain(values: Sequence[Any]) -> list[Any]:
    return [v.values if isinstance(v, SparseTensor) else v for v in values]


def _batch_join(
    tensors_list: Sequence[Any],
    batch_size: Any,
    keep_input: Any,
    capacity: int = 32,
    enqueue_many: bool = False,
    shapes: Any = None,
    dynamic_pad: bool = False,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    tensor_list_list = _as_tensor_list_list(tensors_list)
    flat = [t for tl in tensor_list_list for t in tl]
    with name_scope(name, "batch_join", [*_plain(flat), keep_input]) as scope:
        tensor_list_list = _validate_join(tensor_list_list)
        keep = _validate_keep_input(keep_input, enqueue_many)
        tensor_list_list, sparse_info = _store_sparse_tensors_join(tensor_list_list, enqueue_many, keep)
        types = _dtypes(tensor_list_list)
        shapes = _shapes(tensor_list_list, shapes, enqueue_many)
        queue = _which_queue(dynamic_pad)(capacity=capacity, dtypes=types, shapes=shapes, shared_name=shared_name)
        _enqueue_join(queue, tensor_list_list, enqueue_many, keep)
        _fraction_full(queue, capacity, f"fraction_of_{capacity}_full")
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        return _as_original_type(tensors_list[0], _restore_sparse_tensors(dequeued, sparse_info))


def _shuffle_queue(
    tensor_list_list: list[list[Any]],
    capacity: int,
    min_after_dequeue: int,
    seed: int | None,
    shapes: Any,
    enqueue_many: bool,
    shared_name: str | None,
) -> RandomShuffleQueue:
    types = _dtypes(tensor_list_list)
    shapes = _shapes(tensor_list_list, shapes, enqueue_many)
    return RandomShuffleQueue(
        capacity=capacity,
        min_after_dequeue=min_after_dequeue,
        seed=seed,
        dtypes=types,
        shapes=shapes,
        shared_name=shared_name,
    )


def _fraction_over(queue: Any, capacity: int, min_after_dequeue: int) -> None:
    full = math_ops.cast(math_ops.maximum(0, queue.size() - min_after_dequeue), dtypes.float32) * (
        1.0 / (capacity - min_after_dequeue)
    )
    summary_ops.scalar(f"fraction_over_{min_after_dequeue}_of_{capacity - min_after_dequeue}_full", full)


def _shuffle_batch(
    tensors: Any,
    batch_size: Any,
    capacity: int,
    min_after_dequeue: int,
    keep_input: Any,
    num_threads: int = 1,
    seed: int | None = None,
    enqueue_many: bool = False,
    shapes: Any = None,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    tensor_list = _as_tensor_list(tensors)
    with name_scope(name, "shuffle_batch", [*_plain(tensor_list), keep_input]) as scope:
        if capacity <= min_after_dequeue:
            raise ValueError(f"capacity {capacity} must be bigger than min_after_dequeue {min_after_dequeue}.")
        tensor_list = _validate(tensor_list)
        keep = _validate_keep_input(keep_input, enqueue_many)
        tensor_list, sparse_info = _store_sparse_tensors(tensor_list, enqueue_many, keep)
        queue = _shuffle_queue([tensor_list], capacity, min_after_dequeue, seed, shapes, enqueue_many, shared_name)
        _enqueue(queue, tensor_list, num_threads, enqueue_many, keep)
        _fraction_over(queue, capacity, min_after_dequeue)
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        return _as_original_type(tensors, _restore_sparse_tensors(dequeued, sparse_info))


def _shuffle_batch_join(
    tensors_list: Sequence[Any],
    batch_size: Any,
    capacity: int,
    min_after_dequeue: int,
    keep_input: Any,
    seed: int | None = None,
    enqueue_many: bool = False,
    shapes: Any = None,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    tensor_list_list = _as_tensor_list_list(tensors_list)
    flat = [t for tl in tensor_list_list for t in tl]
    with name_scope(name, "shuffle_batch_join", [*_plain(flat), keep_input]) as scope:
        tensor_list_list = _validate_join(tensor_list_list)
        keep = _validate_keep_input(keep_input, enqueue_many)
        tensor_list_list, sparse_info = _store_sparse_tensors_join(tensor_list_list, enqueue_many, keep)
        queue = _shuffle_queue(tensor_list_list, capacity, min_after_dequeue, seed, shapes, enqueue_many, shared_name)
        _enqueue_join(queue, tensor_list_list, enqueue_many, keep)
        _fraction_over(queue, capacity, min_after_dequeue)
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        return _as_original_type(tensors_list[0], _restore_sparse_tensors(dequeued, sparse_info))


def batch(
    tensors: Any,
    batch_size: Any,
    num_threads: int = 1,
    capacity: int = 32,
    enqueue_many: bool = False,
    shapes: Any = None,
    dynamic_pad: bool = False,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """Batches ``tensors`` through a FIFO queue filled by ``num_threads`` threads (TF1's ``tf.train.batch``).

    Args:
        tensors: A list or dict of tensors (``SparseTensor``s too): one example (or, with ``enqueue_many``, a
            batch of examples along dimension 0).
        batch_size: Examples per batch.
        num_threads: Threads running the enqueue (examples from several threads arrive in any order).
        capacity: The queue's capacity.
        enqueue_many: ``tensors`` hold several examples each.
        shapes: Each component's example shape (default: the tensors' static shapes, which must be known).
        dynamic_pad: Allow unknown dimensions, padded per batch to the longest (a ``PaddingFIFOQueue``).
        allow_smaller_final_batch: Give the examples left at the end as a last, smaller batch.
        shared_name: Share the queue across sessions under this name.
        name: Name scope (default ``batch``).

    Returns:
        The same structure as ``tensors``, each with a leading batch dimension.

    Raises:
        ValueError: no tensors, a shape that cannot be inferred, or inconsistent shapes.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     features = {"x": tf.zeros([3]), "y": tf.constant(1)}
        ...     batched = batch(features, batch_size=4)
        ...     {k: v.shape.as_list() for k, v in batched.items()}
        {'x': [4, 3], 'y': [4]}
    """
    return _batch(
        tensors,
        batch_size,
        keep_input=True,
        num_threads=num_threads,
        capacity=capacity,
        enqueue_many=enqueue_many,
        shapes=shapes,
        dynamic_pad=dynamic_pad,
        allow_smaller_final_batch=allow_smaller_final_batch,
        shared_name=shared_name,
        name=name,
    )


def maybe_batch(
    tensors: Any,
    keep_input: Any,
    batch_size: Any,
    num_threads: int = 1,
    capacity: int = 32,
    enqueue_many: bool = False,
    shapes: Any = None,
    dynamic_pad: bool = False,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """:func:`batch`, keeping only the examples for which ``keep_input`` (a bool scalar, or with
    ``enqueue_many`` a bool vector) is true.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.range(6)
        ...     evens = maybe_batch([x], tf.equal(x % 2, 0), batch_size=3, enqueue_many=True)
        ...     with tf.Session() as sess:
        ...         threads = tf.train.start_queue_runners(sess)
        ...         print(sess.run(evens))
        [0 2 4]
    """
    return _batch(
        tensors,
        batch_size,
        keep_input,
        num_threads=num_threads,
        capacity=capacity,
        enqueue_many=enqueue_many,
        shapes=shapes,
        dynamic_pad=dynamic_pad,
        allow_smaller_final_batch=allow_smaller_final_batch,
        shared_name=shared_name,
        name=name,
    )


def batch_join(
    tensors_list: Sequence[Any],
    batch_size: Any,
    capacity: int = 32,
    enqueue_many: bool = False,
    shapes: Any = None,
    dynamic_pad: bool = False,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """Batches examples from several sources (one enqueue thread each, e.g. one reader each) into one queue
    (TF1's ``tf.train.batch_join``).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     sources = [[tf.constant(1)], [tf.constant(2)]]
        ...     out = batch_join(sources, batch_size=4)
        ...     len(tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[0].enqueue_ops), out.shape.as_list()
        (2, [4])
    """
    return _batch_join(
        tensors_list,
        batch_size,
        keep_input=True,
        capacity=capacity,
        enqueue_many=enqueue_many,
        shapes=shapes,
        dynamic_pad=dynamic_pad,
        allow_smaller_final_batch=allow_smaller_final_batch,
        shared_name=shared_name,
        name=name,
    )


def maybe_batch_join(
    tensors_list: Sequence[Any],
    keep_input: Any,
    batch_size: Any,
    capacity: int = 32,
    enqueue_many: bool = False,
    shapes: Any = None,
    dynamic_pad: bool = False,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """:func:`batch_join`, keeping only the examples for which ``keep_input`` is true.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     maybe_batch_join([[tf.constant(1)]], True, batch_size=2).op.type  # one component: a tensor, as TF
        'QueueDequeueManyV2'
    """
    return _batch_join(
        tensors_list,
        batch_size,
        keep_input,
        capacity=capacity,
        enqueue_many=enqueue_many,
        shapes=shapes,
        dynamic_pad=dynamic_pad,
        allow_smaller_final_batch=allow_smaller_final_batch,
        shared_name=shared_name,
        name=name,
    )


def shuffle_batch(
    tensors: Any,
    batch_size: Any,
    capacity: int,
    min_after_dequeue: int,
    num_threads: int = 1,
    seed: int | None = None,
    enqueue_many: bool = False,
    shapes: Any = None,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """Batches ``tensors`` in random order through a ``RandomShuffleQueue`` (TF1's ``tf.train.shuffle_batch``).

    Each batch is drawn from at least ``min_after_dequeue`` buffered examples while the input lasts; once it
    ends (``num_epochs``), the rest is handed out and then ``OutOfRangeError`` ends the loop.

    Raises:
        ValueError: ``capacity`` is not above ``min_after_dequeue``, or as :func:`batch`.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
        ...     mixed = shuffle_batch([x], batch_size=5, capacity=10, min_after_dequeue=3, seed=1)
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         threads = tf.train.start_queue_runners(sess)
        ...         print(sorted(sess.run(mixed).tolist() + sess.run(mixed).tolist()))
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    """
    return _shuffle_batch(
        tensors,
        batch_size,
        capacity,
        min_after_dequeue,
        keep_input=True,
        num_threads=num_threads,
        seed=seed,
        enqueue_many=enqueue_many,
        shapes=shapes,
        allow_smaller_final_batch=allow_smaller_final_batch,
        shared_name=shared_name,
        name=name,
    )


def maybe_shuffle_batch(
    tensors: Any,
    batch_size: Any,
    capacity: int,
    min_after_dequeue: int,
    keep_input: Any,
    num_threads: int = 1,
    seed: int | None = None,
    enqueue_many: bool = False,
    shapes: Any = None,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """:func:`shuffle_batch`, keeping only the examples for which ``keep_input`` is true.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     maybe_shuffle_batch([tf.constant(1)], 2, 10, 2, keep_input=True).shape.as_list()
        [2]
    """
    return _shuffle_batch(
        tensors,
        batch_size,
        capacity,
        min_after_dequeue,
        keep_input,
        num_threads=num_threads,
        seed=seed,
        enqueue_many=enqueue_many,
        shapes=shapes,
        allow_smaller_final_batch=allow_smaller_final_batch,
        shared_name=shared_name,
        name=name,
    )


def shuffle_batch_join(
    tensors_list: Sequence[Any],
    batch_size: Any,
    capacity: int,
    min_after_dequeue: int,
    seed: int | None = None,
    enqueue_many: bool = False,
    shapes: Any = None,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """Shuffles and batches examples from several sources through one ``RandomShuffleQueue``
    (TF1's ``tf.train.shuffle_batch_join``).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     shuffle_batch_join([[tf.constant(1.0)], [tf.constant(2.0)]], 4, 20, 5).shape.as_list()
        [4]
    """
    return _shuffle_batch_join(
        tensors_list,
        batch_size,
        capacity,
        min_after_dequeue,
        keep_input=True,
        seed=seed,
        enqueue_many=enqueue_many,
        shapes=shapes,
        allow_smaller_final_batch=allow_smaller_final_batch,
        shared_name=shared_name,
        name=name,
    )


def maybe_shuffle_batch_join(
    tensors_list: Sequence[Any],
    batch_size: Any,
    capacity: int,
    min_after_dequeue: int,
    keep_input: Any,
    seed: int | None = None,
    enqueue_many: bool = False,
    shapes: Any = None,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """:func:`shuffle_batch_join`, keeping only the examples for which ``keep_input`` is true.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     maybe_shuffle_batch_join([[tf.constant(1.0)]], 4, 20, 5, keep_input=True).shape.as_list()
        [4]
    """
    return _shuffle_batch_join(
        tensors_list,
        batch_size,
        capacity,
        min_after_dequeue,
        keep_input,
        seed=seed,
        enqueue_many=enqueue_many,
        shapes=shapes,
        allow_smaller_final_batch=allow_smaller_final_batch,
        shared_name=shared_name,
        name=name,
    )
