"""Tracing the user functions of ``tf.data`` (``map``, ``filter``, ``flat_map``, ...) into graph functions.

TF traces such a function into a ``FunctionDef``. Here it is traced into a :class:`FuncGraph`, a graph of its own
whose placeholders stand for the element's components; tensors of enclosing graphs that the function uses are
*captured*: each becomes one more placeholder, and the enclosing tensor becomes an input of the dataset that owns
the function (evaluated when the iterator is initialised, as TF does). The traced function travels as plain data,
``{"graph": graph_def, "args", "captures", "outputs"}`` (tensor names), so it reaches whichever task runs the
iterator; that task compiles it into a :class:`~dtf_notebook.runtime.executor.Plan` of its own (see
:mod:`dtf_notebook.data.kernels.functions`).

Example:
    >>> import dtf_notebook as tf
    >>> from dtf_notebook.data.structure import TensorSpec
    >>> with tf.Graph().as_default():
    ...     scale = tf.constant(3, tf.int64, name="scale")
    ...     fn = trace(lambda x: x * scale, TensorSpec(tf.int64, []), "map")
    >>> [t.op.type for t in fn.captured], fn.output_spec
    (['Const'], TensorSpec(shape=(), dtype=tf.int64))
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from dtf_notebook.data import structure
from dtf_notebook.framework import dtypes
from dtf_notebook.framework.graph import Graph, get_default_graph
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor

__all__ = ["FuncGraph", "TracedFunction", "trace", "capture_into"]


class FuncGraph(Graph):
    """The graph a dataset function is traced into; tensors of enclosing graphs it uses are captured.

    Args:
        name: What the function is, for messages (``"map"``, ``"filter"``, ...).
        outer_graph: The graph the owning dataset was built in (a FuncGraph itself when datasets nest).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default() as outer:
        ...     two = tf.constant(2.0)
        >>> g = FuncGraph("map", outer)
        >>> with g.as_default():
        ...     y = two * 3.0
        >>> y.graph is g, [t.op.type for t in g.captured]
        (True, ['Const'])
    """

    #: Ops built while this graph is the default one belong to it, whatever graph their inputs come from.
    building_function = True

    def __init__(self, name: str, outer_graph: Graph) -> None:
        super().__init__()
        self.name = name
        self.outer_graph = outer_graph
        self.seed = outer_graph.seed
        self._captures: dict[Tensor, Tensor] = {}  # outer tensor -> its placeholder here
        self._outer_of: dict[Tensor, Tensor] = {}  # placeholder -> what the owner supplies for it

    @property
    def captured(self) -> list[Tensor]:
        """The captured tensors of enclosing graphs, in the order of their placeholders."""
        return list(self._captures)

    @property
    def capture_placeholders(self) -> list[Tensor]:
        """The placeholders standing for :attr:`captured`, in the same order."""
        return list(self._captures.values())

    def encloses(self, graph: Graph) -> bool:
        """Whether ``graph`` is this graph or one it is nested in."""
        g: Any = self
        while g is not None:
            if g is graph:
                return True
            g = getattr(g, "outer_graph", None)
        return False

    def capture(self, tensor: Tensor) -> Tensor:
        """The tensor of this graph that stands for ``tensor`` (itself when it is already here).

        Raises:
            ValueError: ``tensor`` belongs to a graph that does not enclose this function.
        """
        if tensor.graph is self:
            return tensor
        found = self._captures.get(tensor)
        if found is not None:
            return found
        outer = self.outer_graph
        if tensor.graph is not outer:
            if not (isinstance(outer, FuncGraph) and outer.encloses(tensor.graph)):
                raise ValueError(
                    f"Tensor {tensor.name!r} used in the {self.name} function comes from a graph that does not "
                    "enclose the dataset; build the dataset and its functions in one graph"
                )
            outer_value = outer.capture(tensor)
        else:
            outer_value = tensor
        with _top_level(self):
            placeholder = (
                super()
                .create_op(
                    "Placeholder",
                    [],
                    {"dtype": tensor.dtype, "shape": tensor.shape.as_tuple()},
                    name="captured_" + _last_name(tensor.op.name),
                )
                .outputs[0]
            )
        # Keyed by the tensor the caller used, so a second use finds it; the owner's input is ``outer_value``.
        self._captures[tensor] = placeholder
        self._outer_of[placeholder] = outer_value
        return placeholder

    def outer_inputs(self) -> list[Tensor]:
        """The enclosing graph's tensors the owning dataset must supply, one per capture placeholder."""
        return [self._outer_of[p] for p in self._captures.values()]

    def create_op(
        self,
        op_type: str,
        inputs: list[Tensor],
        attrs: dict[str, Any] | None = None,
        name: str | None = None,
        control_inputs: list[Operation] | None = None,
        compute_device: bool = True,
    ) -> Operation:
        """Graph's ``create_op``, with inputs from enclosing graphs captured first (their control inputs dropped:
        the captured value is computed before the function runs)."""
        inputs = [self.capture(t) if isinstance(t, Tensor) and t.graph is not self else t for t in inputs]
        control_inputs = [c for c in control_inputs or () if getattr(c, "graph", self) is self]
        return super().create_op(op_type, inputs, attrs, name, control_inputs, compute_device)


def _last_name(name: str) -> str:
    return name.rsplit("/", 1)[-1].split(":")[0] or "input"


@contextlib.contextmanager
def _top_level(graph: Graph) -> Iterator[None]:
    """No name scope, control dependencies or control-flow context: a capture belongs to the whole function."""
    saved = (graph._name_stack, graph._control_dependencies_stack, graph._control_flow_context)
    graph._name_stack, graph._control_dependencies_stack, graph._control_flow_context = "", [], None
    try:
        yield
    finally:
        graph._name_stack, graph._control_dependencies_stack, graph._control_flow_context = saved


def capture_into(graph: Graph, tensor: Tensor) -> Tensor:
    """``tensor`` as a tensor of ``graph``: captured when ``graph`` is a function graph and ``tensor`` is outside.

    Raises:
        ValueError: ``tensor`` belongs to an unrelated graph.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default() as g:
        ...     c = tf.constant(1)
        >>> capture_into(g, c) is c
        True
    """
    if tensor.graph is graph:
        return tensor
    if isinstance(graph, FuncGraph):
        return graph.capture(tensor)
    raise ValueError(f"Tensor {tensor.name!r} must be from the same graph as the dataset that uses it")


class TracedFunction:
    """A traced dataset function: its graph, argument placeholders, outputs and captured tensors.

    Attributes:
        graph: The :class:`FuncGraph`.
        kind: What it is for (``"map"``, ``"filter"``, ``"flat_map"``, ...).
        args: One placeholder per component of the input element (three per SparseTensor, see
            :func:`~dtf_notebook.data.structure.components`).
        input_spec: The input element's spec structure.
        outputs: The flat output components (for a function returning a dataset: that dataset's inputs).
        output_spec: The spec structure of the result (None for a function returning a dataset).
        dataset: The dataset the function returns (flat_map, interleave), else None.
        pipeline: That dataset as a serialized pipeline, its inputs being :attr:`outputs`.
        captured: The enclosing graph's tensors the function uses, in capture order.

    Example:
        >>> import dtf_notebook as tf
        >>> from dtf_notebook.data.structure import TensorSpec
        >>> with tf.Graph().as_default():
        ...     fn = trace(lambda a, b: a + b, (TensorSpec(tf.int32, []), TensorSpec(tf.int32, [])), "map")
        >>> sorted(fn.to_spec()), fn.to_spec()["args"]
        (['args', 'captures', 'graph', 'outputs'], ['arg0:0', 'arg1:0'])
    """

    def __init__(
        self,
        graph: FuncGraph,
        kind: str,
        args: list[Tensor],
        input_spec: Any,
        outputs: list[Tensor],
        output_spec: Any,
        dataset: Any = None,
        pipeline: dict[str, Any] | None = None,
    ) -> None:
        self.graph = graph
        self.kind = kind
        self.args = args
        self.input_spec = input_spec
        self.outputs = outputs
        self.output_spec = output_spec
        self.dataset = dataset
        self.pipeline = pipeline
        self.captured = graph.outer_inputs()
        self._spec: dict[str, Any] | None = None

    def to_spec(self) -> dict[str, Any]:
        """The function as plain data: graph def and tensor names (the owner adds where captures come from)."""
        if self._spec is None:
            spec: dict[str, Any] = {
                "graph": self.graph.as_graph_def_dict(),
                "args": [t.name for t in self.args],
                "captures": [t.name for t in self.graph.capture_placeholders],
                "outputs": [t.name for t in self.outputs],
            }
            if self.pipeline is not None:
                spec["dataset"] = self.pipeline
            self._spec = spec
        return self._spec


def trace(
    fn: Callable[..., Any],
    input_spec: Any,
    kind: str,
    returns_dataset: Callable[[Any, FuncGraph], tuple[list[Tensor], dict[str, Any]]] | None = None,
    outer_graph: Graph | None = None,
) -> TracedFunction:
    """Traces ``fn`` on placeholders for an element of ``input_spec``.

    A tuple element is passed as positional arguments (``fn(*element)``), anything else as one argument, as in TF.

    Args:
        fn: The user function.
        input_spec: The spec structure of the elements it takes.
        kind: ``"map"``, ``"filter"``, ... (names the function graph and messages).
        returns_dataset: For functions that must return a dataset: ``serialize(dataset, graph) -> (inputs, pipeline)``.
        outer_graph: The graph the owning dataset lives in (default: the default graph).

    Raises:
        TypeError: ``fn`` returned something that is not a dataset where one is needed, or a value that cannot be
            converted to tensors.

    Example:
        >>> import dtf_notebook as tf
        >>> from dtf_notebook.data.structure import TensorSpec
        >>> with tf.Graph().as_default():
        ...     fn = trace(lambda x: {"double": x * 2, "text": "a"}, TensorSpec(tf.float32, [3]), "map")
        >>> fn.output_spec
        {'double': TensorSpec(shape=(3,), dtype=tf.float32), 'text': TensorSpec(shape=(), dtype=tf.string)}
    """
    outer = outer_graph if outer_graph is not None else get_default_graph()
    graph = FuncGraph(kind, outer)
    with graph.as_default():
        args = [
            graph.create_op("Placeholder", [], {"dtype": s.dtype, "shape": s.shape.as_tuple()}, name=f"arg{i}").outputs[
                0
            ]
            for i, s in enumerate(structure.components(input_spec))
        ]
        element = structure.from_components(input_spec, list(args))
        result = fn(*element) if type(element) is tuple else fn(element)
        if returns_dataset is not None:
            if not hasattr(result, "_element_structure"):
                raise TypeError(f"The function given to `{kind}` must return a `Dataset` object, got {result!r}")
            outputs, pipeline = returns_dataset(result, graph)
            _check_no_variables(graph)
            return TracedFunction(graph, kind, args, input_spec, outputs, None, result, pipeline)
        if result is None:
            raise TypeError(f"The function given to `{kind}` returned None; it must return tensors")
        element_out = structure.normalize_element(result, name=kind + "_output", lists_are_tuples=True)
        outputs = [graph.capture(t) if t.graph is not graph else t for t in structure.to_components(element_out)]
        output_spec = structure.spec_of(element_out)
    _check_no_variables(graph)
    for t in outputs:
        if t.dtype is dtypes.resource:
            raise TypeError(f"The `{kind}` function returned a resource handle ({t.name}); it must return values")
    return TracedFunction(graph, kind, args, input_spec, outputs, output_spec)


_VARIABLE_OPS = frozenset({"VariableV2", "Variable", "VarHandleOp"})


def _check_no_variables(graph: FuncGraph) -> None:
    for op in graph.get_operations():
        if op.type in _VARIABLE_OPS:
            raise ValueError(
                f"Creating variables inside a tf.data function is not supported (the {graph.name} function creates "
                f"{op.name!r}); create it outside the function and use it there"
            )
