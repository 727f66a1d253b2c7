"""``tf.data.Dataset`` in graph mode (TF1's ``DatasetV1``): sources, transformations and iterators.

A dataset is a description built in a graph: its element structure (nested tuples and dicts of tensors with dtypes
and static shapes, as TF infers them), the tensors it is built from, and its traced functions. Nothing runs until
an iterator is made and run; the iterator's op carries the whole pipeline (see :mod:`.pipeline_spec`) to the
device it is placed on, where the pipeline runs with no client in the data path.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     ds = Dataset.range(6).map(lambda x: x * 10).filter(lambda x: x > 10).batch(2)
    ...     print(repr(ds.output_types), ds.output_shapes)
    ...     next_batch = ds.make_one_shot_iterator().get_next()
    ...     with tf.Session() as sess:
    ...         print(sess.run(next_batch), sess.run(next_batch))
    tf.int64 (?,)
    [20 30] [40 50]
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from dtf_notebook.data import generators, structure
from dtf_notebook.data.function import TracedFunction, trace
from dtf_notebook.data.pipeline_spec import PipelineBuilder, serialize
from dtf_notebook.data.structure import TensorSpec
from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import Graph, get_default_graph, name_scope
from dtf_notebook.framework.random_seed import get_seed
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, as_shape
from dtf_notebook.ops.op_helpers import constant_value

__all__ = ["Dataset", "DatasetV1", "AUTOTUNE"]

#: ``tf.data.experimental.AUTOTUNE``: let the runtime pick a parallelism or buffer size.
AUTOTUNE = -1


def _int64(value: Any, name: str) -> Tensor:
    return convert_to_tensor(value, dtype=dtypes.int64, name=name)


def _static_int(t: Tensor) -> int | None:
    value = constant_value(t)
    return None if value is None else int(np.asarray(value).reshape(()))


def _static_count(value: Any) -> int:
    """A parallelism argument (``num_parallel_calls``, ...) as a Python int; AUTOTUNE is -1."""
    if value is None:
        return 1
    if isinstance(value, Tensor):
        known = _static_int(value)
        if known is None:
            raise ValueError(f"num_parallel_calls must be known while building the graph, got {value!r}")
        return known
    return int(value)


class DatasetV1:
    """A ``tf.data`` dataset (TF1's ``tf.data.Dataset``): a description of a sequence of elements.

    Create one with a source (:meth:`from_tensor_slices`, :meth:`range`, :class:`TFRecordDataset`, ...), chain
    transformations, and read it through an iterator (:meth:`make_one_shot_iterator`,
    :meth:`make_initializable_iterator`).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     ds = Dataset.from_tensor_slices({"x": [[1.0, 2.0], [3.0, 4.0]], "y": [0, 1]})
        ...     ds.output_types, ds.output_shapes
        ({'x': tf.float32, 'y': tf.int32}, {'x': TensorShape([2]), 'y': TensorShape([])})
    """

    def __init__(self, element_structure: Any, graph: Graph | None = None) -> None:
        self._element_structure = element_structure
        self._graph = graph if graph is not None else get_default_graph()

    # ---- what subclasses implement ----------------------------------------------------------------------------
    def _build(self, builder: PipelineBuilder) -> dict[str, Any]:
        """This dataset's pipeline node (see :mod:`.pipeline_spec`)."""
        raise NotImplementedError

    # ---- element structure ------------------------------------------------------------------------------------
    @property
    def element_spec(self) -> Any:
        """The spec structure of an element (:class:`~dtf_notebook.data.structure.TensorSpec` and
        :class:`~dtf_notebook.data.structure.SparseTensorSpec` leaves)."""
        return self._element_structure

    @property
    def output_types(self) -> Any:
        """The dtype structure of an element."""
        return structure.types_of(self._element_structure)

    @property
    def output_shapes(self) -> Any:
        """The static shape structure of an element."""
        return structure.shapes_of(self._element_structure)

    @property
    def output_classes(self) -> Any:
        """The class structure of an element (``Tensor``, or ``SparseTensor`` for a sparse leaf)."""
        return structure.classes_of(self._element_structure)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} shapes: {self.output_shapes}, types: {self.output_types}>"

    def __iter__(self) -> Any:
        raise RuntimeError(
            "`tf.data.Dataset` only supports Python-style iteration in eager mode or within tf.function: in graph "
            "mode, read it through an iterator (make_one_shot_iterator, make_initializable_iterator)."
        )

    # ---- sources ------------------------------------------------------------------------------------------------
    @staticmethod
    def from_tensors(tensors: Any) -> DatasetV1:
        """A dataset of one element, ``tensors``.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     Dataset.from_tensors(([1, 2], "a")).output_shapes
            (TensorShape([2]), TensorShape([]))
        """
        with name_scope("tensors"):
            element = structure.normalize_element(tensors)
        return _Source("TensorDataset", structure.to_components(element), structure.spec_of(element))

    @staticmethod
    def from_tensor_slices(tensors: Any) -> DatasetV1:
        """A dataset of the slices of ``tensors`` along dimension 0 (every component has that dimension); a
        ``SparseTensor`` (or ``SparseTensorValue``) of rank >= 2 gives SparseTensors of one rank less.

        Raises:
            ValueError: a component is a scalar, or the components' dimension 0 sizes differ.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     Dataset.from_tensor_slices(([[1, 2], [3, 4], [5, 6]], ["a", "b", "c"])).output_shapes
            (TensorShape([2]), TensorShape([]))
        """
        with name_scope("tensors"):
            element = structure.normalize_element(tensors)
        batch = TensorShape([None])
        for t in structure.flatten(element):
            if t.shape.ndims == 0:
                raise ValueError("Unbatching a tensor is only supported for rank >= 1")
            if structure.is_sparse(t):
                continue  # as in TF, a sparse leaf's dimension 0 is checked when the iterator starts
            first = t.shape[:1] if t.shape.ndims is not None else TensorShape([None])
            try:
                batch = batch.merge_with(first)
            except ValueError:
                raise ValueError(f"Dimensions {batch[0]} and {first[0]} are not compatible") from None
        spec = structure.unbatched(structure.spec_of(element))
        attrs = {"sparse": structure.sparse_slots(spec)}
        return _Source("TensorSliceDataset", structure.to_components(element), spec, attrs)

    @staticmethod
    def range(*args: Any, output_type: Any = dtypes.int64) -> DatasetV1:
        """``range(stop)``, ``range(start, stop)`` or ``range(start, stop, step)``, like Python's.

        Raises:
            ValueError: no argument, or more than three.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     Dataset.range(1, 10, 3).output_types
            tf.int64
        """
        if not 1 <= len(args) <= 3:
            raise ValueError(f"Invalid arguments to range: {args}")
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], 1) if len(args) == 2 else args
        inputs = [_int64(start, "start"), _int64(stop, "stop"), _int64(step, "step")]
        dtype = dtypes.as_dtype(output_type)
        return _Source("RangeDataset", inputs, TensorSpec(dtype, []), {"output_type": dtype})

    @staticmethod
    def zip(datasets: Any) -> DatasetV1:
        """A dataset of the elements of ``datasets`` (a tuple or dict of datasets) side by side.

        Raises:
            TypeError: a leaf of ``datasets`` is not a dataset.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     a, b = Dataset.range(3), Dataset.from_tensor_slices(["x", "y"])
            ...     Dataset.zip((a, {"text": b})).output_types
            (tf.int64, {'text': tf.string})
        """
        leaves = structure.flatten(datasets)
        for d in leaves:
            if not isinstance(d, DatasetV1):
                raise TypeError(
                    f"The argument to `Dataset.zip()` must be a (nested) structure of `Dataset` objects, got {d!r}"
                )
        spec = structure.pack_as(datasets, [d._element_structure for d in leaves])
        return _Zip(leaves, spec)

    @staticmethod
    def from_generator(
        generator: Callable[..., Any],
        output_types: Any,
        output_shapes: Any = None,
        args: Any = None,
    ) -> DatasetV1:
        """A dataset of the values ``generator(*args)`` yields (called anew for each pass).

        The generator runs in the Python process that built the dataset, where the iterator must run too (a local
        session; see :mod:`dtf_notebook.data.generators`). Each yielded value is checked against
        ``output_types``/``output_shapes`` (``InvalidArgumentError`` at ``get_next`` when it does not fit).

        Raises:
            TypeError: ``generator`` is not callable.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     ds = Dataset.from_generator(lambda: iter([(1, "a"), (2, "b")]), (tf.int64, tf.string))
            ...     ds.output_shapes
            (TensorShape(None), TensorShape(None))
        """
        if not callable(generator):
            raise TypeError("`generator` must be callable.")
        types = structure.map_structure(dtypes.as_dtype, _as_structure(output_types))
        if output_shapes is None:
            shapes = structure.map_structure(lambda _: TensorShape(None), types)
        else:
            shapes = _shapes_like(types, output_shapes)
        arg_tensors = []
        if args is not None:
            with name_scope("args"):
                arg_tensors = [convert_to_tensor(a, name=f"arg{i}") for i, a in enumerate(args)]
        spec = structure.pack_as(
            types, [TensorSpec(t, s) for t, s in zip(structure.flatten(types), structure.flatten(shapes))]
        )
        label = getattr(generator, "__name__", "generator")
        attrs = {
            "token": generators.register(generator, label),
            "types": structure.flatten(types),
            "shapes": structure.flatten(shapes),
            "structure": _plain_structure(types),
        }
        return _Source("GeneratorDataset", arg_tensors, spec, attrs)

    @staticmethod
    def list_files(file_pattern: Any, shuffle: bool | None = None, seed: int | None = None) -> DatasetV1:
        """A dataset of the file names matching ``file_pattern`` (a glob, or a vector of globs), found when the
        iterator is initialised, on its task; shuffled unless ``shuffle=False``.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     Dataset.list_files("/data/*.tfrecord").output_types
            tf.string
        """
        with name_scope("file_pattern"):
            pattern = convert_to_tensor(file_pattern, dtype=dtypes.string, name="file_pattern")
        seed1, seed2 = get_seed(seed)
        attrs = {"shuffle": shuffle is None or bool(shuffle), "seed": seed1 or 0, "seed2": seed2 or 0}
        return _Source("ListFilesDataset", [pattern], TensorSpec(dtypes.string, []), attrs)

    # ---- transformations ----------------------------------------------------------------------------------------
    def concatenate(self, dataset: DatasetV1) -> DatasetV1:
        """The elements of this dataset, then those of ``dataset`` (same structure, classes and dtypes).

        Raises:
            TypeError: the element structures, classes or dtypes differ.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     Dataset.range(2).concatenate(Dataset.range(5)).output_shapes
            TensorShape([])
        """
        a, b = self._element_structure, dataset._element_structure
        spec = structure.most_specific_compatible_spec(a, b)
        if spec is None:
            raise TypeError(f"Incompatible dataset elements:\n  {a} vs. \n  {b}")
        return _Unary("ConcatenateDataset", self, spec, extra_children=[dataset])

    def map(self, map_func: Callable[..., Any], num_parallel_calls: Any = None, deterministic: Any = None) -> DatasetV1:
        """``map_func`` applied to each element (a tuple element is passed as positional arguments).

        ``num_parallel_calls`` runs it for that many elements at once (``AUTOTUNE``: one per CPU); the output order
        is the input's. Followed directly by :meth:`batch`, the function runs once per batch when it can be
        vectorized (see :mod:`dtf_notebook.data.vectorize`).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     Dataset.range(3).map(lambda x: (x, tf.cast(x, tf.float32) / 2)).output_types
            (tf.int64, tf.float32)
        """
        fn = trace(map_func, self._element_structure, "map", outer_graph=self._graph)
        return _Map(self, fn, _static_count(num_parallel_calls))

    def filter(self, predicate: Callable[..., Any]) -> DatasetV1:
        """The elements for which ``predicate`` returns True.

        Raises:
            ValueError: ``predicate`` does not return a scalar ``tf.bool`` tensor.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     Dataset.range(5).filter(lambda x: tf.equal(x % 2, 0)).output_types
            tf.int64
        """
        fn = trace(predicate, self._element_structure, "filter", outer_graph=self._graph)
        out = fn.output_spec
        if not isinstance(out, TensorSpec) or out.dtype is not dtypes.bool or not out.shape.is_compatible_with([]):
            raise ValueError(
                f"Invalid `predicate`. `predicate` must return a `tf.bool` scalar tensor, but its return type is {out}."
            )
        return _Unary("FilterDataset", self, self._element_structure, functions={"predicate": fn})

    def flat_map(self, map_func: Callable[..., Any]) -> DatasetV1:
        """The elements of the datasets ``map_func`` returns for each element, one dataset after another.

        Raises:
            TypeError: ``map_func`` does not return a dataset.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     Dataset.range(3).flat_map(lambda x: Dataset.from_tensors(x).repeat(x)).output_types
            tf.int64
        """
        fn = trace(map_func, self._element_structure, "flat_map", _serialize_result, outer_graph=self._graph)
        return _Unary("FlatMapDataset", self, fn.dataset._element_structure, functions={"f": fn})

    def interleave(
        self,
        map_func: Callable[..., Any],
        cycle_length: Any = None,
        block_length: Any = None,
        num_parallel_calls: Any = None,
        deterministic: Any = None,
    ) -> DatasetV1:
        """Elements of the datasets ``map_func`` returns, ``cycle_length`` of them open at once, ``block_length``
        consecutive elements from each in turn (TF's order; ``cycle_length`` None or AUTOTUNE: one per CPU).

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     files = Dataset.from_tensor_slices(["a.txt", "b.txt"])
            ...     files.interleave(lambda f: tf.data.TextLineDataset(f), cycle_length=2).output_types
            tf.string
        """
        fn = trace(map_func, self._element_structure, "interleave", _serialize_result, outer_graph=self._graph)
        if cycle_length is None or (not isinstance(cycle_length, Tensor) and int(cycle_length) == AUTOTUNE):
            cycle_length = os.cpu_count() or 1
        inputs = [
            _int64(cycle_length, "cycle_length"),
            _int64(1 if block_length is None else block_length, "block_length"),
        ]
        return _Unary(
            "InterleaveDataset",
            self,
            fn.dataset._element_structure,
            inputs=inputs,
            functions={"f": fn},
            attrs={"num_parallel_calls": _static_count(num_parallel_calls)},
        )

    def batch(
        self, batch_size: Any, drop_remainder: Any = False, num_parallel_calls: Any = None, deterministic: Any = None
    ) -> DatasetV1:
        """Consecutive elements stacked into batches of ``batch_size`` (the last one smaller unless
        ``drop_remainder``). SparseTensors of one rank are batched as TF does: their indices gain the position in the
        batch, and the batch's dense shape is the largest of each dimension.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     ds = Dataset.range(10)
            ...     ds.batch(4).output_shapes, ds.batch(4, drop_remainder=True).output_shapes
            (TensorShape([None]), TensorShape([4]))
        """
        size = _int64(batch_size, "batch_size")
        drop = convert_to_tensor(drop_remainder, dtype=dtypes.bool, name="drop_remainder")
        dim = _static_int(size) if constant_value(drop) is not None and bool(constant_value(drop)) else None
        return _Batch(self, structure.batched(self._element_structure, dim), size, drop)

    def padded_batch(
        self, batch_size: Any, padded_shapes: Any = None, padding_values: Any = None, drop_remainder: Any = False
    ) -> DatasetV1:
        """Like :meth:`batch`, with each component padded to ``padded_shapes`` (None or -1 dims: the batch's
        longest; default: every unknown dim) with ``padding_values`` (default 0 or ``b""``).

        Raises:
            ValueError: a padded shape does not fit its component's shape.
            TypeError: a padding value has another dtype than its component, or an element holds a SparseTensor
                (TF's message).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     ds = Dataset.range(4).map(lambda x: tf.fill([x], x))
            ...     ds.padded_batch(2, padded_shapes=[5]).output_shapes
            TensorShape([None, 5])
        """
        spec = self._element_structure
        flat = structure.flatten(spec)
        for s in flat:
            if structure.is_sparse(s):
                raise TypeError(
                    "`padded_batch` is only supported for datasets that produce tensor elements but type spec of "
                    f"elements in the input dataset is not a subclass of TensorSpec: `{s!r}`."
                )
        if padded_shapes is None:
            shape_list = [s.shape for s in flat]
        else:
            shape_list = _flatten_up_to(spec, padded_shapes, "padded_shapes")
        if padding_values is None:
            value_list = [None] * len(flat)
        else:
            value_list = _flatten_up_to(spec, padding_values, "padding_values")
        size = _int64(batch_size, "batch_size")
        drop = convert_to_tensor(drop_remainder, dtype=dtypes.bool, name="drop_remainder")
        dim = _static_int(size) if constant_value(drop) is not None and bool(constant_value(drop)) else None
        shape_tensors, value_tensors, out = [], [], []
        for i, (s, padded, value) in enumerate(zip(flat, shape_list, value_list)):
            tensor, static = _padded_shape(padded, i)
            if s.shape.ndims is None and static.ndims is None:
                raise ValueError(f"The padded shape of component {i} needs a known rank")
            if not static.is_compatible_with(s.shape) and s.shape.ndims is not None:
                if static.ndims != s.shape.ndims or any(
                    p is not None and e is not None and e > p for p, e in zip(static.as_tuple(), s.shape.as_tuple())
                ):
                    raise ValueError(
                        f"The padded shape {static} is not compatible with the corresponding input component shape "
                        f"{s.shape}."
                    )
            shape_tensors.append(tensor)
            value_tensors.append(_padding_value(value, s.dtype, i))
            out.append(TensorSpec(s.dtype, TensorShape([dim]).concatenate(static)))
        return _Unary(
            "PaddedBatchDataset",
            self,
            structure.pack_as(spec, out),
            inputs=[size, drop, *shape_tensors, *value_tensors],
            attrs={"num_components": len(flat)},
        )

    def shuffle(self, buffer_size: Any, seed: Any = None, reshuffle_each_iteration: Any = None) -> DatasetV1:
        """The elements in a random order, drawn from a buffer of ``buffer_size`` (TF's algorithm); with
        ``reshuffle_each_iteration`` (default) every pass, e.g. every ``repeat`` epoch, has its own order.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     Dataset.range(10).shuffle(10, seed=1).output_types
            tf.int64
        """
        seed1, seed2 = get_seed(seed)
        inputs = [_int64(buffer_size, "buffer_size"), _int64(seed1 or 0, "seed"), _int64(seed2 or 0, "seed2")]
        reshuffle = True if reshuffle_each_iteration is None else bool(reshuffle_each_iteration)
        return _Unary("ShuffleDataset", self, self._element_structure, inputs=inputs, attrs={"reshuffle": reshuffle})

    def repeat(self, count: Any = None) -> DatasetV1:
        """This dataset ``count`` times (forever when None or -1).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     Dataset.range(2).repeat(3).output_types
            tf.int64
        """
        return _Unary("RepeatDataset", self, self._element_structure, [_int64(-1 if count is None else count, "count")])

    def prefetch(self, buffer_size: Any) -> DatasetV1:
        """Keeps up to ``buffer_size`` elements ready on a background thread (``AUTOTUNE``: a few per CPU).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     Dataset.range(2).prefetch(1).output_types
            tf.int64
        """
        return _Unary("PrefetchDataset", self, self._element_structure, [_int64(buffer_size, "buffer_size")])

    def cache(self, filename: Any = "") -> DatasetV1:
        """The elements of the first complete pass, kept in memory (``""``) or in the file ``filename`` (this
        library's format, ``<filename>.dtf-cache``), read back by later passes.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     Dataset.range(2).cache().output_types
            tf.int64
        """
        name = convert_to_tensor(filename, dtype=dtypes.string, name="filename")
        return _Unary("CacheDataset", self, self._element_structure, [name])

    def take(self, count: Any) -> DatasetV1:
        """The first ``count`` elements (all when -1).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     Dataset.range(10).take(3).output_types
            tf.int64
        """
        return _Unary("TakeDataset", self, self._element_structure, [_int64(count, "count")])

    def skip(self, count: Any) -> DatasetV1:
        """All but the first ``count`` elements (none when -1).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     Dataset.range(10).skip(3).output_types
            tf.int64
        """
        return _Unary("SkipDataset", self, self._element_structure, [_int64(count, "count")])

    def shard(self, num_shards: Any, index: Any) -> DatasetV1:
        """Every ``num_shards``-th element starting at ``index`` (one worker's share).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     Dataset.range(10).shard(2, 1).output_types
            tf.int64
        """
        inputs = [_int64(num_shards, "num_shards"), _int64(index, "index")]
        return _Unary("ShardDataset", self, self._element_structure, inputs)

    def apply(self, transformation_func: Callable[[DatasetV1], DatasetV1]) -> DatasetV1:
        """``transformation_func(self)``, which must return a dataset (``tf.data.experimental`` transformations).

        Raises:
            TypeError: it returned something else.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     Dataset.range(5).apply(lambda ds: ds.take(2)).output_types
            tf.int64
        """
        result = transformation_func(self)
        if not isinstance(result, DatasetV1):
            raise TypeError(f"`transformation_func` must return a `tf.data.Dataset` object. Got {type(result)}.")
        return result

    def ignore_errors(self) -> DatasetV1:
        """The elements, skipping those whose computation failed (``tf.data.experimental.ignore_errors``).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     Dataset.from_tensor_slices(["1", "x"]).map(tf.strings.to_number).ignore_errors().output_types
            tf.float32
        """
        return _Unary("IgnoreErrorsDataset", self, self._element_structure)

    # ---- iterators ----------------------------------------------------------------------------------------------
    def make_one_shot_iterator(self) -> Any:
        """An iterator that initialises itself on first use and can be read once (no initializer to run).

        Raises:
            ValueError: the dataset captures a placeholder or a stateful op (use an initializable iterator).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     x = Dataset.range(2).make_one_shot_iterator().get_next()
            ...     with tf.Session() as sess:
            ...         print(sess.run(x), sess.run(x))
            0 1
        """
        from dtf_notebook.data.iterator_ops import make_one_shot_iterator

        return make_one_shot_iterator(self)

    def make_initializable_iterator(self, shared_name: str | None = None) -> Any:
        """An iterator that starts a pass each time its ``initializer`` runs (placeholders are fed then).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     n = tf.placeholder(tf.int64, [])
            ...     it = Dataset.range(n).make_initializable_iterator()
            ...     x = it.get_next()
            ...     with tf.Session() as sess:
            ...         sess.run(it.initializer, {n: 3})
            ...         print(sess.run(x), sess.run(x), sess.run(x))
            0 1 2
        """
        from dtf_notebook.data.iterator_ops import make_initializable_iterator

        return make_initializable_iterator(self, shared_name)


Dataset = DatasetV1


# ---- dataset kinds -------------------------------------------------------------------------------------------------
class _Source(DatasetV1):
    def __init__(self, op: str, inputs: list[Tensor], spec: Any, attrs: dict[str, Any] | None = None) -> None:
        super().__init__(spec)
        self._op, self._inputs, self._attrs = op, list(inputs), dict(attrs or {})

    def _build(self, builder: PipelineBuilder) -> dict[str, Any]:
        return builder.add(self._op, self._inputs, attrs=self._attrs)


class _Zip(DatasetV1):
    def __init__(self, datasets: list[DatasetV1], spec: Any) -> None:
        super().__init__(spec)
        self._datasets = datasets

    def _build(self, builder: PipelineBuilder) -> dict[str, Any]:
        return builder.add("ZipDataset", children=self._datasets)


class _Unary(DatasetV1):
    """A transformation of one input dataset (plus, for ``concatenate``, a second)."""

    def __init__(
        self,
        op: str,
        source: DatasetV1,
        spec: Any,
        inputs: list[Tensor] | None = None,
        attrs: dict[str, Any] | None = None,
        functions: dict[str, TracedFunction] | None = None,
        extra_children: list[DatasetV1] | None = None,
    ) -> None:
        super().__init__(spec)
        self._op, self._source = op, source
        self._inputs, self._attrs = list(inputs or ()), dict(attrs or {})
        self._functions = dict(functions or {})
        self._children = [source, *(extra_children or ())]

    def _build(self, builder: PipelineBuilder) -> dict[str, Any]:
        return builder.add(self._op, self._inputs, self._children, self._attrs, self._functions)


class _Map(_Unary):
    def __init__(self, source: DatasetV1, fn: TracedFunction, num_parallel_calls: int) -> None:
        super().__init__(
            "MapDataset", source, fn.output_spec, attrs={"num_parallel_calls": num_parallel_calls}, functions={"f": fn}
        )
        self.fn = fn


class _Batch(_Unary):
    """``batch``; over a ``map`` it becomes ``MapAndBatchDataset`` (with the vectorized function when there is
    one)."""

    def __init__(self, source: DatasetV1, spec: Any, size: Tensor, drop: Tensor) -> None:
        attrs = {"sparse": structure.sparse_slots(source._element_structure)}
        super().__init__("BatchDataset", source, spec, inputs=[size, drop], attrs=attrs)

    def _build(self, builder: PipelineBuilder) -> dict[str, Any]:
        source = self._source
        if not isinstance(source, _Map):
            return super()._build(builder)
        from dtf_notebook.data.vectorize import vectorize

        functions: dict[str, Any] = {"f": source.fn}
        attrs: dict[str, Any] = dict(self._attrs)
        batched = vectorize(source.fn)
        if batched is not None:
            spec, batched_outputs = batched
            functions["batched"] = {**spec, "capture_inputs": [builder.input(t) for t in source.fn.captured]}
            attrs["batched_outputs"] = batched_outputs
        return builder.add("MapAndBatchDataset", self._inputs, [source._source], attrs, functions)


# ---- helpers ---------------------------------------------------------------------------------------------------
def _serialize_result(dataset: DatasetV1, graph: Graph) -> tuple[list[Tensor], dict[str, Any]]:
    """A function's returned dataset as a pipeline whose inputs are tensors of the function graph."""
    pipeline, inputs = serialize(dataset, graph)
    return inputs, pipeline


def _as_structure(value: Any) -> Any:
    """``output_types``/``output_shapes`` as a structure: lists are tuples there (TF's nest for these)."""
    if isinstance(value, list):
        return tuple(_as_structure(v) for v in value)
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_as_structure(v) for v in value)
    if isinstance(value, Mapping):
        return type(value)((k, _as_structure(v)) for k, v in value.items())
    return value


def _shapes_like(types: Any, shapes: Any) -> Any:
    """``shapes`` (a structure of shapes, lists being shapes) as TensorShapes laid out like ``types``."""
    flat_types = structure.flatten(types)
    if not structure.is_structure(types):
        return as_shape(shapes)
    flat = _flatten_up_to(types, shapes, "output_shapes")
    if len(flat) != len(flat_types):
        raise ValueError(f"output_shapes {shapes!r} does not match the structure of output_types {types!r}")
    return structure.pack_as(types, [as_shape(s) for s in flat])


def _flatten_up_to(template: Any, value: Any, what: str) -> list[Any]:
    """``value``'s leaves at ``template``'s leaves (a list in ``value`` counts as a tuple where ``template`` has
    structure, and as one leaf where it has a leaf)."""
    if not structure.is_structure(template):
        return [value]
    if isinstance(template, Mapping):
        if not isinstance(value, Mapping) or sorted(value) != sorted(template):
            raise ValueError(f"{what} {value!r} does not match the element structure {template!r}")
        out: list[Any] = []
        for k in sorted(template):
            out.extend(_flatten_up_to(template[k], value[k], what))
        return out
    if not isinstance(value, tuple | list) or len(value) != len(template):
        raise ValueError(f"{what} {value!r} does not match the element structure {template!r}")
    out = []
    for t, v in zip(template, value):
        out.extend(_flatten_up_to(t, v, what))
    return out


def _plain_structure(types: Any) -> Any:
    """The dtype structure as plain data (namedtuples become tuples) for a graph attr."""
    if isinstance(types, Mapping):
        return {str(k): _plain_structure(v) for k, v in types.items()}
    if isinstance(types, tuple):
        return tuple(_plain_structure(v) for v in types)
    return types


def _padded_shape(padded: Any, component: int) -> tuple[Tensor, TensorShape]:
    """A padded shape as an int64 vector (-1 for "the longest") and as the static shape it gives."""
    if isinstance(padded, Tensor):
        tensor = padded if padded.dtype is dtypes.int64 else convert_to_tensor(padded, dtype=dtypes.int64)
        value = constant_value(tensor)
        if value is not None:
            static = TensorShape([None if int(d) < 0 else int(d) for d in np.asarray(value).reshape(-1)])
        else:
            n = tensor.shape[0].value if tensor.shape.ndims == 1 else None
            static = TensorShape(None) if n is None else TensorShape([None] * n)
        return tensor, static
    static = as_shape(padded)
    if static.ndims is None:
        raise ValueError(f"The padded shape of component {component} needs a known rank, got {padded!r}")
    dims = [-1 if d is None else int(d) for d in static.as_tuple()]
    tensor = convert_to_tensor(np.array(dims, dtype=np.int64), name="padded_shapes")
    return tensor, TensorShape([None if d < 0 else d for d in dims])


def _padding_value(value: Any, dtype: dtypes.DType, component: int) -> Tensor:
    if value is None:
        value = b"" if dtype.is_string else np.zeros((), dtype=dtype.np_dtype)
        return convert_to_tensor(value, dtype=dtype, name="padding_value")
    if isinstance(value, Tensor):
        if value.dtype is not dtype:
            raise TypeError(
                f"Padding value for component {component} has dtype {value.dtype.name}, but the component is "
                f"{dtype.name}"
            )
        if not value.shape.is_compatible_with([]):
            raise ValueError(f"Padding value for component {component} must be a scalar, got shape {value.shape}")
        return value
    return convert_to_tensor(value, dtype=dtype, name="padding_value")
