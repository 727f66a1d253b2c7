"""TF1's dataset iterators (``tf.data.Iterator``) and the ops behind them.

* ``IteratorV2`` makes (or finds) the :class:`~.kernels.resource.IteratorResource` in its task's containers and
  outputs a ``resource`` handle taken by reference, so every op using it (``MakeIterator``, ``IteratorGetNext``,
  ``IteratorToStringHandle``) is placed with it: the pipeline runs, and reads its files, on the iterator's task.
* ``MakeIterator`` carries the pipeline (plain data) and takes the tensors the dataset was built from as inputs,
  evaluated (feeds included) each time the initializer runs.
* ``OneShotIterator`` carries the pipeline and a copy of the ops that compute its inputs (TF's ``dataset_factory``)
  and starts its pass on first use.
* ``IteratorGetNext`` hands out the next element, ``OutOfRangeError`` ("End of sequence") at the end.
* ``IteratorFromStringHandleV2`` finds an iterator from the string ``Iterator.string_handle()`` gave (a feedable
  iterator), on its own device.
* ``DatasetToSingleElement`` (``tf.data.experimental.get_single_element``) runs a pipeline to its only element.

Example:
    >>> import dtf_notebook as tf
    >>> from dtf_notebook.data.dataset_ops import Dataset
    >>> with tf.Graph().as_default():
    ...     it = Iterator.from_structure(tf.int64, tf.TensorShape([]))
    ...     x = it.get_next()
    ...     small, big = it.make_initializer(Dataset.range(2)), it.make_initializer(Dataset.range(10, 12))
    ...     with tf.Session() as sess:
    ...         sess.run(small); a = [int(sess.run(x)), int(sess.run(x))]
    ...         sess.run(big); b = [int(sess.run(x)), int(sess.run(x))]
    >>> a, b
    ([0, 1], [10, 11])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook import errors
from dtf_notebook.data import structure
from dtf_notebook.data.pipeline_spec import factory_graph, serialize
from dtf_notebook.data.structure import TensorSpec
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import get_default_graph
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.sparse_tensor import SparseTensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, as_shape, scalar
from dtf_notebook.ops.op_helpers import make_op

__all__ = ["Iterator", "make_one_shot_iterator", "make_initializable_iterator", "get_single_element"]

_HANDLE = (dtypes.resource, scalar())
_ONE_SHOT_HINT = (
    ": A likely cause of this error is that the dataset for which you are calling `make_one_shot_iterator()` "
    "captures a stateful object, such as a `tf.Variable` or a placeholder, which is not supported. Use "
    "`make_initializable_iterator()` instead."
)


# ---- the Python API ------------------------------------------------------------------------------------------------
class Iterator:
    """An iterator over a dataset's elements (TF1's ``tf.data.Iterator``); its position lives on the device of its
    op and persists across ``Session.run`` calls.

    Make one with ``Dataset.make_one_shot_iterator``, ``Dataset.make_initializable_iterator``,
    :meth:`from_structure` (reinitializable from several datasets) or :meth:`from_string_handle` (feedable).

    Example:
        >>> import dtf_notebook as tf
        >>> from dtf_notebook.data.dataset_ops import Dataset
        >>> with tf.Graph().as_default():
        ...     it = Dataset.from_tensor_slices(([1, 2], ["a", "b"])).make_initializable_iterator()
        ...     it.output_types, it.initializer.type
        ((tf.int32, tf.string), 'MakeIterator')
    """

    def __init__(
        self,
        iterator_resource: Tensor,
        initializer: Operation | None,
        output_types: Any,
        output_shapes: Any,
        output_classes: Any = None,
    ) -> None:
        self._iterator_resource = iterator_resource
        self._initializer = initializer
        self._spec = _spec_of(output_types, output_shapes, output_classes)

    @staticmethod
    def from_structure(
        output_types: Any, output_shapes: Any = None, shared_name: str | None = None, output_classes: Any = None
    ) -> Iterator:
        """A reinitializable iterator for elements of this structure: ``make_initializer(dataset)`` points it at a
        dataset (types and classes equal, shapes compatible). ``output_classes`` says which leaves are
        ``SparseTensor`` (default: none).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     it = Iterator.from_structure((tf.int64, tf.string), (tf.TensorShape([]), tf.TensorShape([2])))
            ...     it.output_shapes
            (TensorShape([]), TensorShape([2]))
        """
        types, shapes, classes = _types_shapes_classes(output_types, output_shapes, output_classes)
        spec = _spec_of(types, shapes, classes)
        attrs = {"shared_name": shared_name or "", "container": "", **_component_attrs(spec)}
        resource = make_op("IteratorV2", [], attrs, name="Iterator").outputs[0]
        return Iterator(resource, None, types, shapes, classes)

    @staticmethod
    def from_string_handle(
        string_handle: Any, output_types: Any, output_shapes: Any = None, output_classes: Any = None
    ) -> Iterator:
        """A feedable iterator: it reads from whichever iterator ``string_handle`` (a string tensor, usually a
        placeholder fed with ``sess.run(other.string_handle())``) names. It must run on that iterator's device.

        Example:
            >>> import dtf_notebook as tf
            >>> from dtf_notebook.data.dataset_ops import Dataset
            >>> with tf.Graph().as_default():
            ...     handle = tf.placeholder(tf.string, [])
            ...     feedable = Iterator.from_string_handle(handle, tf.int64, tf.TensorShape([]))
            ...     x = feedable.get_next()
            ...     train, test = Dataset.range(3), Dataset.range(100, 103)
            ...     train_it, test_it = train.make_one_shot_iterator(), test.make_one_shot_iterator()
            ...     with tf.Session() as sess:
            ...         h_train, h_test = sess.run([train_it.string_handle(), test_it.string_handle()])
            ...         print(sess.run(x, {handle: h_train}), sess.run(x, {handle: h_test}),
            ...               sess.run(x, {handle: h_train}))
            0 100 1
        """
        types, shapes, classes = _types_shapes_classes(output_types, output_shapes, output_classes)
        handle = convert_to_tensor(string_handle, dtype=dtypes.string)
        attrs = _component_attrs(_spec_of(types, shapes, classes))
        resource = make_op("IteratorFromStringHandleV2", [handle], attrs, name="IteratorFromStringHandleV2")
        return Iterator(resource.outputs[0], None, types, shapes, classes)

    @property
    def initializer(self) -> Operation:
        """The op that starts a pass (``MakeIterator``).

        Raises:
            ValueError: the iterator has none (one-shot, from_structure, from_string_handle).
        """
        if self._initializer is None:
            raise ValueError(
                "The iterator does not have an initializer. This means it was likely created using "
                "`tf.data.Dataset.make_one_shot_iterator()`. For an initializable iterator, use "
                "`tf.data.Dataset.make_initializable_iterator()` instead."
            )
        return self._initializer

    def make_initializer(self, dataset: Any, name: str | None = None) -> Operation:
        """An op that starts a pass of this iterator over ``dataset``.

        Raises:
            ValueError: the dataset's nesting is not the iterator's.
            TypeError: its classes, types or shapes do not fit the iterator's (TF's messages).
        """
        spec = dataset._element_structure
        if not structure.same_nesting(self._spec, spec):
            raise ValueError(
                "The two structures don't have the same nested structure.\n\n"
                f"First structure: {self.output_types!r}\n\nSecond structure: {dataset.output_types!r}"
            )
        mine, theirs = structure.flatten(self._spec), structure.flatten(spec)
        if any(type(a) is not type(b) for a, b in zip(mine, theirs)):
            raise TypeError(
                f"Expected output classes {_show(self.output_classes)} but got dataset with output classes "
                f"{_show(dataset.output_classes)}."
            )
        if any(a.dtype is not b.dtype for a, b in zip(mine, theirs)):
            raise TypeError(
                f"Expected output types {_show(self.output_types)} but got dataset with output types "
                f"{_show(dataset.output_types)}."
            )
        if any(not a.shape.is_compatible_with(b.shape) for a, b in zip(mine, theirs)):
            raise TypeError(
                f"Expected output shapes compatible with {_show(self.output_shapes)} but got dataset with output "
                f"shapes {_show(dataset.output_shapes)}."
            )
        graph = self._iterator_resource.graph
        with graph.as_default():
            pipeline, inputs = serialize(dataset, graph)
            return make_op(
                "MakeIterator", [self._iterator_resource, *inputs], {"dataset": pipeline}, name=name or "MakeIterator"
            )

    def get_next(self, name: str | None = None) -> Any:
        """The next element: tensors (and SparseTensors) in the element's structure, each with the iterator's
        static shape. Running it past the end raises ``OutOfRangeError``.

        Example:
            >>> import dtf_notebook as tf
            >>> from dtf_notebook.data.dataset_ops import Dataset
            >>> with tf.Graph().as_default():
            ...     x = Dataset.range(1).make_one_shot_iterator().get_next()
            ...     with tf.Session() as sess:
            ...         _ = sess.run(x)
            ...         try:
            ...             sess.run(x)
            ...         except tf.errors.OutOfRangeError as e:
            ...             print(e.message.splitlines()[0])
            End of sequence
        """
        attrs = _component_attrs(self._spec)
        op = make_op("IteratorGetNext", [self._iterator_resource], attrs, name=name or "IteratorGetNext")
        return structure.from_components(self._spec, op.outputs)

    def string_handle(self, name: str | None = None) -> Tensor:
        """A string naming this iterator, for :meth:`from_string_handle`."""
        return make_op(
            "IteratorToStringHandle", [self._iterator_resource], name=name or "IteratorToStringHandle"
        ).outputs[0]

    @property
    def output_types(self) -> Any:
        """The dtype structure of the elements."""
        return structure.types_of(self._spec)

    @property
    def output_shapes(self) -> Any:
        """The static shape structure of the elements."""
        return structure.shapes_of(self._spec)

    @property
    def output_classes(self) -> Any:
        """The class of every component (``Tensor`` or ``SparseTensor``)."""
        return structure.classes_of(self._spec)

    @property
    def element_spec(self) -> Any:
        """The :class:`~dtf_notebook.data.structure.TensorSpec` structure of the elements."""
        return self._spec


def _show(value: Any) -> str:
    return repr(value)


def _types_shapes_classes(output_types: Any, output_shapes: Any, output_classes: Any) -> tuple[Any, Any, Any]:
    from dtf_notebook.data.dataset_ops import _as_structure, _flatten_up_to, _shapes_like

    types = structure.map_structure(dtypes.as_dtype, _as_structure(output_types))
    if output_shapes is None:
        shapes = structure.map_structure(lambda _: TensorShape(None), types)
    else:
        shapes = _shapes_like(types, output_shapes)
    if output_classes is None:
        classes = structure.map_structure(lambda _: Tensor, types)
    else:
        classes = structure.pack_as(types, _flatten_up_to(types, _as_structure(output_classes), "output_classes"))
    return types, shapes, classes


def _spec_of(types: Any, shapes: Any, classes: Any) -> Any:
    """The spec structure of ``types`` with ``shapes``, a leaf whose class is ``SparseTensor`` being sparse."""
    flat_types, flat_shapes = structure.flatten(types), structure.flatten(shapes)
    flat_classes = [Tensor] * len(flat_types) if classes is None else structure.flatten(classes)
    leaves = []
    for t, s, c in zip(flat_types, flat_shapes, flat_classes):
        if isinstance(c, type) and issubclass(c, SparseTensor):
            leaves.append(structure.SparseTensorSpec(s, t))
        elif c is Tensor or (isinstance(c, type) and issubclass(c, Tensor)):
            leaves.append(TensorSpec(t, s))
        else:
            raise TypeError(f"An output class must be Tensor or SparseTensor, got {c!r}")
    return structure.pack_as(types, leaves)


def _component_attrs(spec: Any) -> dict[str, Any]:
    """The ``output_types``/``output_shapes`` attrs of an op handing out elements of ``spec`` (dense components)."""
    flat = structure.components(spec)
    return {"output_types": [s.dtype for s in flat], "output_shapes": [s.shape for s in flat]}


def make_initializable_iterator(dataset: Any, shared_name: str | None = None) -> Iterator:
    """``dataset.make_initializable_iterator()`` (``tf.data.make_initializable_iterator``).

    Example:
        >>> import dtf_notebook as tf
        >>> from dtf_notebook.data.dataset_ops import Dataset
        >>> with tf.Graph().as_default():
        ...     make_initializable_iterator(Dataset.range(3)).initializer.type
        'MakeIterator'
    """
    spec = dataset._element_structure
    graph = get_default_graph()
    attrs = {"shared_name": shared_name or "", "container": "", **_component_attrs(spec)}
    resource = make_op("IteratorV2", [], attrs, name="Iterator").outputs[0]
    iterator = Iterator(resource, None, *_public_structures(spec))
    with graph.colocate_with(resource.op):
        iterator._initializer = iterator.make_initializer(dataset)
    return iterator


def _public_structures(spec: Any) -> tuple[Any, Any, Any]:
    return structure.types_of(spec), structure.shapes_of(spec), structure.classes_of(spec)


def make_one_shot_iterator(dataset: Any) -> Iterator:
    """``dataset.make_one_shot_iterator()`` (``tf.data.make_one_shot_iterator``).

    Raises:
        ValueError: the dataset captures a placeholder or a stateful op (TF's message).

    Example:
        >>> import dtf_notebook as tf
        >>> from dtf_notebook.data.dataset_ops import Dataset
        >>> with tf.Graph().as_default():
        ...     make_one_shot_iterator(Dataset.range(3))._iterator_resource.op.type
        'OneShotIterator'
    """
    spec = dataset._element_structure
    graph = get_default_graph()
    pipeline, inputs = serialize(dataset, graph)
    factory = {"graph": factory_graph(inputs, _ONE_SHOT_HINT), "outputs": [t.name for t in inputs]}
    attrs = {
        "dataset_factory": {"pipeline": pipeline, "factory": factory},
        "shared_name": "",
        "container": "",
        **_component_attrs(spec),
    }
    resource = make_op("OneShotIterator", [], attrs, name="OneShotIterator").outputs[0]
    return Iterator(resource, None, *_public_structures(spec))


def get_single_element(dataset: Any) -> Any:
    """The only element of ``dataset`` as tensors (``tf.data.experimental.get_single_element``); running it
    raises ``InvalidArgumentError`` when the dataset is empty or has more than one element.

    Example:
        >>> import dtf_notebook as tf
        >>> from dtf_notebook.data.dataset_ops import Dataset
        >>> with tf.Graph().as_default():
        ...     x = get_single_element(Dataset.range(5).skip(4))
        ...     with tf.Session() as sess:
        ...         print(sess.run(x))
        4
    """
    spec = dataset._element_structure
    graph = get_default_graph()
    pipeline, inputs = serialize(dataset, graph)
    attrs = {"dataset": pipeline, **_component_attrs(spec)}
    op = make_op("DatasetToSingleElement", inputs, attrs, name="DatasetToSingleElement")
    return structure.from_components(spec, op.outputs)


# ---- op registrations ------------------------------------------------------------------------------------------
def _element_specs(op: Any) -> list[tuple[Any, Any]]:
    types, shapes = op.get_attr("output_types"), op.get_attr("output_shapes")
    if len(types) != len(shapes):
        raise ValueError(f"{op.type} '{op.name}' has {len(types)} output types but {len(shapes)} output shapes")
    return [(dtypes.as_dtype(t), as_shape(s)) for t, s in zip(types, shapes)]


def _resource_name(op: Any, ctx: Any) -> str:
    name = op.get_attr("shared_name")
    if name:
        return name
    return f"{op.name}@{ctx.state.session}" if ctx.state.session else op.name


def _lookup_iterator(op: Any, ctx: Any) -> Callable[[], Any]:
    from dtf_notebook.data.kernels.resource import IteratorResource

    container, name = op.get_attr("container"), _resource_name(op, ctx)
    mgr, device = ctx.resources, ctx.device_name
    types = [dtypes.as_dtype(t) for t in op.get_attr("output_types")]
    shapes = [as_shape(s) for s in op.get_attr("output_shapes")]
    checked: list[Any] = [None]

    def resource() -> Any:
        found = mgr.lookup_or_create(
            container, name, lambda: IteratorResource(name, container, mgr, device, types, shapes)
        )
        if found is not checked[0]:
            if not isinstance(found, IteratorResource) or found.types != types:
                raise errors.InvalidArgumentError(
                    None, op, f"Resource {container}/{name} is not an iterator of {[t.name for t in types]}"
                )
            checked[0] = found
        return found

    return resource


def _iterator_kernel(op: Any, ctx: Any) -> Callable[[], Any]:
    return _lookup_iterator(op, ctx)


def _env(ctx: Any, resource: Any) -> Any:
    from dtf_notebook.data.kernels.common import Env

    return Env(ctx.device, ctx.state.files, resource.registered, ctx.state)


def _one_shot_kernel(op: Any, ctx: Any) -> Callable[[], Any]:
    from dtf_notebook.data.kernels.functions import CompiledFunction
    from dtf_notebook.data.kernels.pipeline import CompiledPipeline

    lookup = _lookup_iterator(op, ctx)
    spec = op.get_attr("dataset_factory")
    compiled: list[Any] = []

    def run() -> Any:
        resource = lookup()

        def make() -> Any:
            if not compiled:
                factory = spec["factory"]
                fn = CompiledFunction(
                    {"graph": factory["graph"], "args": [], "captures": [], "outputs": factory["outputs"]},
                    ctx.local_device,
                    ctx.state,
                )
                compiled.append((fn, CompiledPipeline(spec["pipeline"], ctx.local_device, ctx.state)))
            fn, pipeline = compiled[0]
            inputs = fn.bind([])([])
            return pipeline.instantiate(inputs, _env(ctx, resource)).iterator()

        resource.initialize_once(make)
        return resource

    return run


def _expect_iterator(op: Any, resource: Any) -> Any:
    from dtf_notebook.data.kernels.resource import IteratorResource

    if not isinstance(resource, IteratorResource):
        raise errors.InvalidArgumentError(None, op, f"{op.type} '{op.name}' needs an iterator, got {resource!r}")
    return resource


def _private_copies(tensors: Any) -> Callable[[Any], list[Any]]:
    """Copies the input values that may share a buffer with a variable (anything but a constant): a pass keeps the
    values it was initialised with, even when the variable is assigned in place later."""
    import torch

    copy = [t.op.type != "Const" for t in tensors]

    def private(values: Any) -> list[Any]:
        return [v.clone() if c and isinstance(v, torch.Tensor) else v for v, c in zip(values, copy)]

    return private


def _make_iterator_kernel(op: Any, ctx: Any) -> Callable[..., None]:
    from dtf_notebook.data.kernels.pipeline import CompiledPipeline

    pipeline = CompiledPipeline(op.get_attr("dataset"), ctx.local_device, ctx.state)
    types = [dtypes.as_dtype(t) for t in op.get_attr("dataset")["types"]]
    private = _private_copies(op.inputs[1:])

    def run(resource: Any, *inputs: Any) -> None:
        inputs = private(inputs)
        resource = _expect_iterator(op, resource)
        if resource.types != types:
            raise errors.InvalidArgumentError(
                None,
                op,
                f"The dataset gives {[t.name for t in types]}, but the iterator holds "
                f"{[t.name for t in resource.types]}",
            )
        resource.reset(pipeline.instantiate(inputs, _env(ctx, resource)).iterator())

    return run


def _get_next_kernel(op: Any, ctx: Any) -> Callable[..., Any]:
    single = len(op.get_attr("output_types")) == 1

    def run(step: Any, resource: Any) -> Any:
        element = _expect_iterator(op, resource).get_next(step)
        return element[0] if single else element

    return run


def _to_string_handle_kernel(op: Any, ctx: Any) -> Callable[[Any], Any]:
    from dtf_notebook.data.kernels.common import string_scalar

    return lambda resource: string_scalar(_expect_iterator(op, resource).string_handle())


def _from_string_handle_kernel(op: Any, ctx: Any) -> Callable[[Any], Any]:
    from dtf_notebook.data.kernels.common import string_list
    from dtf_notebook.data.kernels.resource import parse_string_handle

    types = [dtypes.as_dtype(t) for t in op.get_attr("output_types")]
    mgr, here = ctx.resources, ctx.device_name

    def run(handle: Any) -> Any:
        names = string_list(handle)
        if len(names) != 1:
            raise errors.InvalidArgumentError(None, op, "The string handle must be a scalar string")
        device, container, name = parse_string_handle(names[0])
        if device != here:
            raise errors.InvalidArgumentError(
                None,
                op,
                f"The iterator of this string handle lives on {device}, but {op.name} runs on {here}: place the "
                "feedable iterator on the device of the iterators it reads",
            )
        resource = _expect_iterator(op, mgr.lookup(container, name))
        if resource.types != types:
            raise errors.InvalidArgumentError(
                None,
                op,
                f"The iterator of this string handle gives {[t.name for t in resource.types]}, but this feedable "
                f"iterator expects {[t.name for t in types]}",
            )
        return resource

    return run


def _single_element_kernel(op: Any, ctx: Any) -> Callable[..., Any]:
    from dtf_notebook.data.kernels.common import Env
    from dtf_notebook.data.kernels.pipeline import CompiledPipeline

    pipeline = CompiledPipeline(op.get_attr("dataset"), ctx.local_device, ctx.state)
    single = len(op.get_attr("output_types")) == 1

    private = _private_copies(op.inputs)

    def run(*inputs: Any) -> Any:
        env = Env(ctx.device, ctx.state.files, lambda: True, ctx.state)
        iterator = pipeline.instantiate(private(inputs), env).iterator()
        try:
            element = iterator.next(None)
            if element is None:
                raise errors.InvalidArgumentError(None, op, "Dataset was empty.")
            if iterator.next(None) is not None:
                raise errors.InvalidArgumentError(None, op, "Dataset had more than one element.")
        finally:
            iterator.close()
        return element[0] if single else element

    return run


def _register() -> None:
    never = op_registry.NOT_DIFFERENTIABLE
    for op_type, kernel in (("IteratorV2", _iterator_kernel), ("OneShotIterator", _one_shot_kernel)):
        op_registry.register_op(
            op_type,
            infer=lambda op: [_HANDLE],
            kernel=kernel,
            grad=never,
            ref_outputs=(0,),
            stateful=True,
            cpu_only=True,
        )
    op_registry.register_op(
        "IteratorFromStringHandleV2",
        infer=lambda op: [_HANDLE],
        kernel=_from_string_handle_kernel,
        grad=never,
        ref_outputs=(0,),
        stateful=True,
        cpu_only=True,
    )
    op_registry.register_op(
        "MakeIterator",
        infer=lambda op: [],
        kernel=_make_iterator_kernel,
        grad=never,
        ref_inputs=(0,),
        stateful=True,
        cpu_only=True,
    )
    # Waits only on its own pipeline (a prefetch thread), never on another op of the step: the plan can stay a
    # serial loop, while the step's deadline and cancellation still reach the wait.
    op_registry.register_op(
        "IteratorGetNext",
        infer=_element_specs,
        kernel=_get_next_kernel,
        grad=never,
        ref_inputs=(0,),
        stateful=True,
        cpu_only=True,
        needs_step=True,
        may_block=False,
    )
    op_registry.register_op(
        "IteratorToStringHandle",
        infer=lambda op: [(dtypes.string, scalar())],
        kernel=_to_string_handle_kernel,
        grad=never,
        ref_inputs=(0,),
        stateful=True,
        cpu_only=True,
    )
    op_registry.register_op(
        "DatasetToSingleElement",
        infer=_element_specs,
        kernel=_single_element_kernel,
        grad=never,
        stateful=True,
        cpu_only=True,
    )


_register()
