"""The argument layout of each fused update op, and what follows from it: building, inference, registration.

An op is registered once with its argument names (``"var accum lr grad"``), how many of them are
refs (the variable and its slots, first) and which are scalars. From that layout :func:`build`
converts a builder's arguments, :func:`infer` applies TF's shape function (with TF's messages),
and the kernels find their inputs by name.

Example:
    >>> import dtf_notebook  # registers every op
    >>> spec = SPECS["ApplyMomentum"]
    >>> spec.refs, spec.scalars, spec.grad, spec.sparse
    (('var', 'accum'), ('lr', 'momentum'), 'grad', False)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.ops.op_helpers import check_dtype, make_op

FLOAT_TYPES = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
INDEX_TYPES = (dtypes.int32, dtypes.int64)


class Spec:
    """Argument layout of one op: ref args, scalar args, the grad arg and (sparse ops) the indices arg.

    Example:
        >>> spec = Spec(["var", "accum", "lr", "grad", "indices"], ["var", "accum"], ["lr"], sparse=True)
        >>> spec.grad, spec.pos["indices"]
        ('grad', 4)
    """

    def __init__(self, args: Sequence[str], refs: Sequence[str], scalars: Sequence[str], sparse: bool) -> None:
        self.args = tuple(args)
        self.refs = tuple(refs)
        self.scalars = tuple(scalars)
        self.sparse = sparse
        self.pos = {a: i for i, a in enumerate(args)}
        self.grad = "delta" if "delta" in self.pos else "grad"


#: op type -> its argument layout, filled by :func:`register`.
SPECS: dict[str, Spec] = {}


def register(op_type: str, args: str, refs: int, scalars: str, kernel: Callable[[Any, Any], Callable[..., Any]]):
    """Registers ``op_type`` with its arguments (space-separated, the first ``refs`` by reference), and its
    ``Resource`` variant (:func:`register_resource_variant`).

    Example:
        >>> import dtf_notebook  # registers every update op through this function
        >>> SPECS["ApplyGradientDescent"].args, SPECS["ApplyGradientDescent"].refs
        (('var', 'alpha', 'delta'), ('var',))
    """
    arg_list = args.split()
    SPECS[op_type] = Spec(arg_list, arg_list[:refs], scalars.split(), "indices" in arg_list)
    op_registry.register_op(
        op_type,
        infer=infer,
        kernel=kernel,
        grad=op_registry.NOT_DIFFERENTIABLE,
        ref_inputs=range(refs),
        ref_outputs=(0,),
        stateful=True,
    )
    register_resource_variant(op_type)


def register_resource_variant(op_type: str) -> None:
    """Registers ``Resource<op_type>`` (TF's op on resource variables): the arguments of ``op_type`` with variable
    handles in place of references, its kernel, and no output.

    Example:
        >>> import dtf_notebook  # registers every update op and its resource variant
        >>> op_registry.get("ResourceApplyAdam").ref_inputs == op_registry.get("ApplyAdam").ref_inputs
        True
    """
    spec = SPECS[op_type]
    name = "Resource" + op_type
    SPECS[name] = spec
    op_registry.register_op(
        name,
        infer=_resource_infer,
        kernel=op_registry.get(op_type).kernel,
        grad=op_registry.NOT_DIFFERENTIABLE,
        ref_inputs=range(len(spec.refs)),
        stateful=True,
    )


def _resource_infer(op: Any) -> list:
    spec = SPECS[op.type]
    for arg in spec.scalars:
        _with_rank(op, op.inputs[spec.pos[arg]].shape, 0)
    return []


# ---- building ---------------------------------------------------------------------------------
def _mismatch(arg: str, op_type: str, dtype: dtypes.DType, var_dtype: dtypes.DType) -> TypeError:
    return TypeError(
        f"Input '{arg}' of '{op_type}' Op has type {dtype.name} that does not match "
        f"type {var_dtype.name} of argument 'var'."
    )


def _ref_input(value: Any, op_type: str, arg: str) -> Tensor:
    t = convert_to_tensor(value, as_ref=True)
    if not t.is_ref:
        raise TypeError(f"'{op_type}' Op requires that input '{arg}' be a mutable tensor (e.g.: a tf.Variable)")
    return t


def _value_input(value: Any, dtype: dtypes.DType, op_type: str, arg: str) -> Tensor:
    if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
        t = convert_to_tensor(value)
        if t.dtype is not dtype:
            raise _mismatch(arg, op_type, t.dtype, dtype)
        return t
    return convert_to_tensor(value, dtype=dtype, name=arg)


def build(op_type: str, values: Sequence[Any], attrs: dict[str, Any], name: str | None) -> Tensor:
    """Creates ``op_type`` from its arguments' ``values`` in the registered order (refs first).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable([1.0, 2.0])
        ...     step = build("ApplyGradientDescent", [w, 0.5, [2.0, 2.0]], {"use_locking": False}, None)
        ...     with tf.Session() as sess:
        ...         _ = sess.run(w.initializer)
        ...         print(sess.run(step))
        [0. 1.]
    """
    spec = SPECS[op_type]
    n_refs = len(spec.refs)
    refs = [_ref_input(v, op_type, arg) for arg, v in zip(spec.refs, values[:n_refs])]
    check_dtype(refs[0], FLOAT_TYPES, op_type, "var")
    dtype = refs[0].dtype
    inputs = list(refs)
    for arg, v in zip(spec.args[n_refs:], values[n_refs:]):
        if arg == "indices":
            t = convert_to_tensor(v, name="indices")
            check_dtype(t, INDEX_TYPES, op_type, "indices")
            inputs.append(t)
        elif arg == "global_step":  # AdagradDA's step counter: an int64 scalar whatever the variable's dtype
            inputs.append(_value_input(v, dtypes.int64, op_type, arg))
        else:
            inputs.append(_value_input(v, dtype, op_type, arg))
    return make_op(op_type, inputs, attrs, name=name or op_type).outputs[0]


# ---- output inference: TF's shape functions --------------------------------------------------
def _shape_str(s: TensorShape) -> str:
    """A shape as TF's shape functions print it: ``[2,?]``, ``?`` when the rank is unknown."""
    if s.ndims is None:
        return "?"
    return "[" + ",".join("?" if d is None else str(d) for d in s.as_list()) + "]"


def _shape_error(op: Any, message: str) -> ValueError:
    shapes = ", ".join(_shape_str(t.shape) for t in op.inputs)
    return ValueError(f"{message} for '{op.name}' (op: '{op.type}') with input shapes: {shapes}.")


def _merge(op: Any, a: TensorShape, b: TensorShape) -> TensorShape:
    if a.ndims is not None and b.ndims is not None:
        if a.ndims != b.ndims:
            raise _shape_error(op, f"Shapes must be equal rank, but are {a.ndims} and {b.ndims}")
        for i, (x, y) in enumerate(zip(a.as_list(), b.as_list())):
            if x is not None and y is not None and x != y:
                raise _shape_error(
                    op,
                    f"Dimension {i} in both shapes must be equal, but are {x} and {y}. "
                    f"Shapes are {_shape_str(a)} and {_shape_str(b)}.",
                )
    return a.merge_with(b)


def _with_rank(op: Any, s: TensorShape, rank: int) -> None:
    if s.ndims is not None and s.ndims != rank:
        raise _shape_error(op, f"Shape must be rank {rank} but is rank {s.ndims}")


def infer(op: Any) -> list[tuple[dtypes.DType, TensorShape]]:
    """TF's shape function of the update ops: one output, the variable's reference.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable([[1.0, 2.0]])
        ...     step = build("ApplyGradientDescent", [w, 0.1, [[1.0, 1.0]]], {"use_locking": False}, None)
        ...     infer(step.op)
        [(tf.float32, TensorShape([1, 2]))]
    """
    spec = SPECS[op.type]
    inputs = op.inputs
    var = inputs[0]
    for arg, t in zip(spec.args, inputs):
        if arg not in ("indices", "global_step") and t.dtype is not var.dtype:
            raise _mismatch(arg, op.type, t.dtype, var.dtype)
    shape = var.shape
    for arg in spec.refs[1:]:
        shape = _merge(op, shape, inputs[spec.pos[arg]].shape)
    for arg in spec.scalars:
        _with_rank(op, inputs[spec.pos[arg]].shape, 0)
    grad = inputs[spec.pos[spec.grad]].shape
    if not spec.sparse:
        shape = _merge(op, shape, grad)
    else:
        indices = inputs[spec.pos["indices"]].shape
        _with_rank(op, indices, 1)
        if grad.ndims is not None and grad.ndims < 1:
            raise _shape_error(op, f"Shape must be at least rank 1 but is rank {grad.ndims}")
        if grad.ndims is not None and indices.ndims is not None:
            _merge(op, TensorShape(grad.as_list()[:1]), indices)
        if grad.ndims is not None and shape.ndims is not None:
            _merge(op, TensorShape(shape.as_list()[1:]), TensorShape(grad.as_list()[1:]))
    return [(var.dtype, shape)]
