"""The op registry: one entry per op type, holding everything about that op.

An entry (:class:`OpDef`) has the output inference (dtypes and static shapes
from the op's inputs and attrs), the kernel factory the runtime calls to get a
torch function for a placed node, and the gradient function the symbolic
``gradients`` builder calls. The executor, placer and gradient builder only
look ops up here: adding an op never means editing them.

Kernel factories have the signature ``kernel(op, ctx) -> run`` where ``run``
takes the input values (torch tensors, numpy string arrays, or resources for
ref inputs) and returns the output value (one output), a tuple (several) or
None (none). Binding attrs in the factory keeps the per-step path short.

Example:
    >>> from dtf_notebook.framework import op_registry
    >>> op_registry.get("Identity").type   # doctest: +SKIP
    'Identity'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from dtf_notebook import errors

#: Marks an op whose outputs have no gradient (shape queries, comparisons, ...).
NOT_DIFFERENTIABLE: Any = object()


@dataclass(frozen=True)
class OpDef:
    """Everything the system knows about one op type.

    Attributes:
        type: The op type name, e.g. ``"MatMul"``.
        infer: ``infer(op) -> [(DType, TensorShape), ...]`` giving each output's type and static shape.
        kernel: ``kernel(op, ctx) -> run`` factory (None for ops that never execute).
        grad: ``grad(op, *output_grads) -> [input_grad or None, ...]``, ``NOT_DIFFERENTIABLE``,
            or None (no gradient defined).
        ref_inputs: Input positions taken by reference (the variable itself, not its value).
        ref_outputs: Output positions that are references to a variable.
        stateful: The op has side effects or reads state (never folded or deduplicated).
        cpu_only: The op has no GPU kernel (soft placement moves it to the CPU).
        needs_step: ``run`` takes the step context as its first argument.
        may_block: ``run`` may wait (on a queue, a peer): the executor runs it on a thread of its own, so that
            it never keeps other ready ops from running.

    Example:
        >>> op_def = get("VariableV2")
        >>> op_def.type, op_def.stateful, sorted(op_def.ref_outputs)
        ('VariableV2', True, [0])
    """

    type: str
    infer: Callable[[Any], list[tuple[Any, Any]]]
    kernel: Callable[[Any, Any], Callable[..., Any]] | None = None
    grad: Any = None
    ref_inputs: frozenset[int] = field(default_factory=frozenset)
    ref_outputs: frozenset[int] = field(default_factory=frozenset)
    stateful: bool = False
    cpu_only: bool = False
    needs_step: bool = False
    may_block: bool = False


_REGISTRY: dict[str, OpDef] = {}


def register_op(
    op_type: str,
    *,
    infer: Callable[[Any], list[tuple[Any, Any]]],
    kernel: Callable[[Any, Any], Callable[..., Any]] | None = None,
    grad: Any = None,
    ref_inputs: Iterable[int] = (),
    ref_outputs: Iterable[int] = (),
    stateful: bool = False,
    cpu_only: bool = False,
    needs_step: bool = False,
    may_block: bool | None = None,
) -> OpDef:
    """Registers an op type; raises if the type is already registered.

    ``may_block`` defaults to ``needs_step`` (a kernel that takes the step context usually waits on it).

    Example:
        >>> register_op("MyIdentity", infer=lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)],
        ...             kernel=lambda op, ctx: (lambda x: x), grad=lambda op, g: [g])  # doctest: +SKIP
    """
    if op_type in _REGISTRY:
        raise KeyError(f"Op type {op_type!r} is already registered")
    op_def = OpDef(
        op_type,
        infer,
        kernel,
        grad,
        frozenset(ref_inputs),
        frozenset(ref_outputs),
        stateful,
        cpu_only,
        needs_step,
        needs_step if may_block is None else may_block,
    )
    _REGISTRY[op_type] = op_def
    return op_def


def register_gradient(op_type: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator that sets the gradient function of an already registered op.

    Example:
        >>> @register_gradient("MyIdentity")  # doctest: +SKIP
        ... def _grad(op, grad):
        ...     return [grad]
    """

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        op_def = get(op_type)
        _REGISTRY[op_type] = OpDef(**{**op_def.__dict__, "grad": fn})
        return fn

    return decorate


def get(op_type: str) -> OpDef:
    """Returns the OpDef for a type.

    Raises:
        NotFoundError: no op of that type is registered.

    Example:
        >>> get("MatMul").type
        'MatMul'
        >>> get("NoSuchOp")
        Traceback (most recent call last):
        ...
        dtf_notebook.errors.NotFoundError: Op type not registered 'NoSuchOp'
    """
    try:
        return _REGISTRY[op_type]
    except KeyError:
        raise errors.NotFoundError(None, None, f"Op type not registered '{op_type}'") from None


def registered_types() -> list[str]:
    """All registered op type names, sorted.

    Example:
        >>> names = registered_types()
        >>> "MatMul" in names, names == sorted(names)
        (True, True)
    """
    return sorted(_REGISTRY)


class _Builders:
    """Op-building functions (and op modules) that higher layers register for lower ones to call.

    The graph API sits below the ops, yet builds a few of them itself (a sum of gradients, an IndexedSlices made
    dense), and some op families call each other's builders in gradients. A lower module never imports a higher
    one for that: the higher one registers what it offers (``dtf_notebook.ops`` does, once every op module is
    imported) and the lower one looks it up when it runs, as the executor finds kernels in this registry.

    Example:
        >>> builders.add_n.__name__, builders.array_ops.__name__
        ('add_n', 'dtf_notebook.ops.array_ops')
        >>> builders.no_such_builder
        Traceback (most recent call last):
        ...
        AttributeError: No op builder 'no_such_builder' is registered (dtf_notebook.ops registers them)
    """

    def __init__(self) -> None:
        self._registered: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_registered"][name]
        except KeyError:
            raise AttributeError(f"No op builder {name!r} is registered (dtf_notebook.ops registers them)") from None


#: The registered builders: ``builders.add_n(...)``, ``builders.array_ops.reshape(...)``.
builders = _Builders()


def register_builders(**named: Any) -> None:
    """Registers op-building functions (or modules of them) under names lower modules look up in ``builders``.

    Example:
        >>> register_builders(my_identity=lambda x: x)  # doctest: +SKIP
        >>> builders.my_identity(1)  # doctest: +SKIP
        1
    """
    builders._registered.update(named)
