"""Vectorizing a ``map`` function so that ``map(f).batch(n)`` runs ``f`` once per batch.

Running the traced function once per element costs one ``Plan.run`` each (several microseconds of Python), which
would make the pipeline, not the model, the bottleneck of a small model's training. :func:`vectorize` rewrites the
function's graph into one that takes the *stacked* components of a batch and gives the stacked results, op by op,
with rules that keep the per-element meaning exactly (TF's ``pfor`` in small):

* ops whose inputs do not depend on the element (constants, captured tensors) are copied as they are;
* element-wise ops (casts, arithmetic, comparisons, string conversions, ...) take batched operands as they are,
  when every batched operand has the same element rank and every other operand a rank no larger (broadcasting then
  lines up from the right, below the batch dimension);
* ops with axes or shapes (``Reshape``, ``ExpandDims``, ``Squeeze``, reductions, ``Transpose``, slices,
  ``OneHot``, ``Pack``, ``ConcatV2``, ``DecodeRaw``) get their constant axes shifted past the batch dimension;
* ``parse_single_example`` (``ParseExampleV2`` on one record) parses the batch's records at once when its
  features are dense and of fixed shape.

Anything else (an op without a rule, a stateful op such as a random op, control flow, a control dependency, an axis
or shape that is not a constant) leaves the function per element. At run time a batched run that fails or gives
another batch size falls back to the per-element map (see ``MapAndBatchDataset``), so errors stay TF's.

Example:
    >>> import dtf_notebook as tf
    >>> from dtf_notebook.data.function import trace
    >>> from dtf_notebook.data.structure import TensorSpec
    >>> with tf.Graph().as_default():
    ...     fn = trace(lambda x: tf.reshape(tf.cast(x, tf.float32) / 255.0, [2, 2]), TensorSpec(tf.uint8, [4]), "map")
    ...     spec, batched = vectorize(fn)
    >>> [n["op"] for n in spec["graph"]["node"]][:3], batched
    (['Placeholder', 'Cast', 'Const'], [True])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook.data import structure
from dtf_notebook.data.function import TracedFunction
from dtf_notebook.framework import dtypes
from dtf_notebook.framework.graph import Graph
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops.op_helpers import constant_value

__all__ = ["vectorize", "ELEMENTWISE"]

#: Ops that act on each scalar (with numpy broadcasting between their operands): a batch is just more scalars.
ELEMENTWISE = frozenset(
    {
        "Identity",
        "StopGradient",
        "Cast",
        "Neg",
        "Abs",
        "Sqrt",
        "Rsqrt",
        "Exp",
        "Expm1",
        "Log",
        "Log1p",
        "Square",
        "Sigmoid",
        "Tanh",
        "Relu",
        "Relu6",
        "Elu",
        "Selu",
        "Softplus",
        "Softsign",
        "Floor",
        "Ceil",
        "Round",
        "Rint",
        "Sign",
        "Reciprocal",
        "Inv",
        "Sin",
        "Cos",
        "Tan",
        "Erf",
        "Erfc",
        "IsNan",
        "IsInf",
        "IsFinite",
        "LogicalNot",
        "ZerosLike",
        "OnesLike",
        "Add",
        "AddV2",
        "Sub",
        "Mul",
        "RealDiv",
        "Div",
        "FloorDiv",
        "FloorMod",
        "Mod",
        "TruncateDiv",
        "TruncateMod",
        "Maximum",
        "Minimum",
        "Pow",
        "SquaredDifference",
        "Equal",
        "NotEqual",
        "Less",
        "LessEqual",
        "Greater",
        "GreaterEqual",
        "LogicalAnd",
        "LogicalOr",
        "DivNoNan",
        "Atan2",
        "SelectV2",
        "ClipByValue",
        "StringToNumber",
        "StringLength",
        "StringStrip",
        "StringLower",
        "StringUpper",
        "AsString",
        "StringToHashBucketFast",
        "StringToHashBucketStrong",
        "StringToHashBucket",
        "RegexReplace",
        "RegexFullMatch",
        "DecodeBase64",
        "EncodeBase64",
    }
)

_REDUCTIONS = frozenset({"Sum", "Mean", "Max", "Min", "Prod", "All", "Any", "EuclideanNorm"})


class _NotVectorizableError(Exception):
    """The function cannot be vectorized (it stays per element)."""


class _Value:
    __slots__ = ("tensor", "batched")

    def __init__(self, tensor: Tensor, batched: bool) -> None:
        self.tensor, self.batched = tensor, batched


def _rank(t: Tensor) -> int:
    rank = t.shape.ndims
    if rank is None:
        raise _NotVectorizableError(f"{t.name} has an unknown rank")
    return rank


def _ints(t: Tensor) -> list[int]:
    value = constant_value(t)
    if value is None:
        raise _NotVectorizableError(f"{t.name} is not a constant")
    return [int(v) for v in np.asarray(value).reshape(-1)]


class _Rewriter:
    def __init__(self, fn: TracedFunction) -> None:
        self.fn = fn
        self.graph = Graph()
        self.values: dict[Tensor, _Value] = {}

    def const(self, value: Any, dtype: dtypes.DType, name: str) -> Tensor:
        array = np.asarray(value, dtype=dtype.np_dtype)
        return self.graph.create_op("Const", [], {"value": array, "dtype": dtype}, name=name).outputs[0]

    def copy(self, op: Operation, inputs: list[Tensor], attrs: dict[str, Any] | None = None) -> Operation:
        return self.graph.create_op(op.type, inputs, {**op._attrs, **(attrs or {})}, name=op.name)

    def run(self) -> tuple[dict[str, Any], list[bool]]:
        fn = self.fn
        args = set(fn.args)
        for op in fn.graph.get_operations():
            if op.control_inputs:
                raise _NotVectorizableError(f"{op.name} has control inputs")
            if op.type == "Placeholder":
                out = op.outputs[0]
                batched = out in args
                shape = out.shape.as_tuple()
                if batched and shape is None:
                    raise _NotVectorizableError("an argument has an unknown rank")
                new_shape = (None, *shape) if batched else shape
                attrs = {"dtype": out.dtype, "shape": new_shape}
                new = self.graph.create_op("Placeholder", [], attrs, name=op.name).outputs[0]
                self.values[out] = _Value(new, batched)
                continue
            if op.op_def.stateful:
                raise _NotVectorizableError(f"{op.name} ({op.type}) is stateful")
            ins = [self.values[t] for t in op.inputs]
            if not any(v.batched for v in ins):
                new_op = self.copy(op, [v.tensor for v in ins])
                for old, new in zip(op.outputs, new_op.outputs):
                    self.values[old] = _Value(new, False)
                continue
            rule = _RULES.get(op.type)
            if rule is None and op.type in ELEMENTWISE:
                rule = _elementwise
            if rule is None:
                raise _NotVectorizableError(f"no batching rule for {op.type}")
            new_op = rule(self, op, ins)
            for old, new in zip(op.outputs, new_op.outputs):
                self.values[old] = _Value(new, True)
        outputs = [self.values[t] for t in fn.outputs]
        placeholders = {t: self.values[t].tensor for t in [*fn.args, *fn.graph.capture_placeholders]}
        spec = {
            "graph": self.graph.as_graph_def_dict(),
            "args": [placeholders[t].name for t in fn.args],
            "captures": [placeholders[t].name for t in fn.graph.capture_placeholders],
            "outputs": [v.tensor.name for v in outputs],
        }
        return spec, [v.batched for v in outputs]


def _elementwise(rw: _Rewriter, op: Operation, ins: list[_Value]) -> Operation:
    ranks = {_rank(t) for t, v in zip(op.inputs, ins) if v.batched}
    if len(ranks) != 1:
        raise _NotVectorizableError(f"{op.name}: batched operands of different ranks")
    (rank,) = ranks
    if any(_rank(t) > rank for t, v in zip(op.inputs, ins) if not v.batched):
        raise _NotVectorizableError(f"{op.name}: an operand of higher rank than the element")
    return rw.copy(op, [v.tensor for v in ins])


def _only_first_batched(op: Operation, ins: list[_Value]) -> None:
    if any(v.batched for v in ins[1:]):
        raise _NotVectorizableError(f"{op.name}: a batched shape or axis")


def _shift_axes(axes: list[int]) -> list[int]:
    return [a + 1 if a >= 0 else a for a in axes]


def _reshape(rw: _Rewriter, op: Operation, ins: list[_Value]) -> Operation:
    _only_first_batched(op, ins)
    dims = _ints(op.inputs[1])
    if -1 in dims:
        size = op.inputs[0].shape.num_elements()
        known = int(np.prod([d for d in dims if d != -1])) if len(dims) > 1 else 1
        if size is None or known == 0:
            raise _NotVectorizableError(f"{op.name}: -1 in the shape of an element of unknown size")
        dims = [size // known if d == -1 else d for d in dims]
    shape = rw.const([-1, *dims], op.inputs[1].dtype, op.name + "/batched_shape")
    return rw.copy(op, [ins[0].tensor, shape])


def _axis_op(rw: _Rewriter, op: Operation, ins: list[_Value]) -> Operation:
    """ExpandDims, reductions, ArgMax/ArgMin: the axis input (1) shifted past the batch dimension."""
    _only_first_batched(op, ins)
    axis_in = op.inputs[1]
    axes = _ints(axis_in)
    shifted = np.asarray(_shift_axes(axes)).reshape(np.asarray(constant_value(axis_in)).shape)
    axis = rw.const(shifted, axis_in.dtype, op.name + "/batched_axis")
    return rw.copy(op, [ins[0].tensor, axis, *[v.tensor for v in ins[2:]]])


def _squeeze(rw: _Rewriter, op: Operation, ins: list[_Value]) -> Operation:
    axes = list(op.get_attr("squeeze_dims") or [])
    if not axes:
        dims = op.inputs[0].shape.as_tuple()
        if dims is None or any(d is None for d in dims):
            raise _NotVectorizableError(f"{op.name}: squeezing every size-1 dim of an element of unknown shape")
        axes = [i for i, d in enumerate(dims) if d == 1]
        if not axes:
            return rw.graph.create_op("Identity", [ins[0].tensor], {}, name=op.name)
    return rw.copy(op, [ins[0].tensor], {"squeeze_dims": _shift_axes(axes)})


def _transpose(rw: _Rewriter, op: Operation, ins: list[_Value]) -> Operation:
    _only_first_batched(op, ins)
    perm = [0, *[p + 1 for p in _ints(op.inputs[1])]]
    return rw.copy(op, [ins[0].tensor, rw.const(perm, op.inputs[1].dtype, op.name + "/batched_perm")])


def _strided_slice(rw: _Rewriter, op: Operation, ins: list[_Value]) -> Operation:
    _only_first_batched(op, ins)
    begin, end, strides = (_ints(t) for t in op.inputs[1:4])
    dtype = op.inputs[1].dtype
    masks = {k: int(op.get_attr(k)) << 1 for k in ("ellipsis_mask", "new_axis_mask", "shrink_axis_mask")}
    masks["begin_mask"] = (int(op.get_attr("begin_mask")) << 1) | 1
    masks["end_mask"] = (int(op.get_attr("end_mask")) << 1) | 1
    consts = [
        rw.const([0, *begin], dtype, op.name + "/batched_begin"),
        rw.const([0, *end], dtype, op.name + "/batched_end"),
        rw.const([1, *strides], dtype, op.name + "/batched_strides"),
    ]
    return rw.copy(op, [ins[0].tensor, *consts], masks)


def _slice(rw: _Rewriter, op: Operation, ins: list[_Value]) -> Operation:
    _only_first_batched(op, ins)
    begin, size = _ints(op.inputs[1]), _ints(op.inputs[2])
    return rw.copy(
        op,
        [
            ins[0].tensor,
            rw.const([0, *begin], op.inputs[1].dtype, op.name + "/batched_begin"),
            rw.const([-1, *size], op.inputs[2].dtype, op.name + "/batched_size"),
        ],
    )


def _one_hot(rw: _Rewriter, op: Operation, ins: list[_Value]) -> Operation:
    _only_first_batched(op, ins)
    axis = int(op.get_attr("axis"))
    return rw.copy(op, [v.tensor for v in ins], {"axis": axis + 1 if axis >= 0 else axis})


def _all_batched(op: Operation, ins: list[_Value], count: int) -> None:
    if not all(v.batched for v in ins[:count]):
        raise _NotVectorizableError(f"{op.name}: batched and unbatched values stacked together")
    if len({_rank(t) for t in op.inputs[:count]}) != 1:
        raise _NotVectorizableError(f"{op.name}: values of different ranks")


def _pack(rw: _Rewriter, op: Operation, ins: list[_Value]) -> Operation:
    _all_batched(op, ins, len(ins))
    axis = int(op.get_attr("axis"))
    return rw.copy(op, [v.tensor for v in ins], {"axis": axis + 1 if axis >= 0 else axis})


def _concat(rw: _Rewriter, op: Operation, ins: list[_Value]) -> Operation:
    if ins[-1].batched:
        raise _NotVectorizableError(f"{op.name}: a batched axis")
    _all_batched(op, ins, len(ins) - 1)
    (axis,) = _ints(op.inputs[-1])
    new_axis = rw.const(axis + 1 if axis >= 0 else axis, op.inputs[-1].dtype, op.name + "/batched_axis")
    return rw.copy(op, [*[v.tensor for v in ins[:-1]], new_axis])


def _decode_raw(rw: _Rewriter, op: Operation, ins: list[_Value]) -> Operation:
    return rw.copy(op, [v.tensor for v in ins])


def _parse_example(rw: _Rewriter, op: Operation, ins: list[_Value]) -> Operation:
    """``parse_single_example`` (ParseExampleV2 on a scalar) over a vector of records: each dense feature gains the
    batch dimension. Sparse features (their indices would gain a column) and variable-length dense features (a batch
    would pad them) stay per element."""
    _only_first_batched(op, ins)
    if _rank(op.inputs[0]) != 0:
        raise _NotVectorizableError(f"{op.name}: a batch of records per element")
    if op.get_attr("num_sparse"):
        raise _NotVectorizableError(f"{op.name}: sparse features")
    for shape in op.get_attr("dense_shapes"):
        if shape is None or any(d is None or d < 0 for d in shape):
            raise _NotVectorizableError(f"{op.name}: a dense feature of variable length")
    return rw.copy(op, [v.tensor for v in ins])


_RULES: dict[str, Callable[[_Rewriter, Operation, list[_Value]], Operation]] = {
    "Reshape": _reshape,
    "ExpandDims": _axis_op,
    "ArgMax": _axis_op,
    "ArgMin": _axis_op,
    **{name: _axis_op for name in _REDUCTIONS},
    "Squeeze": _squeeze,
    "Transpose": _transpose,
    "StridedSlice": _strided_slice,
    "Slice": _slice,
    "OneHot": _one_hot,
    "Pack": _pack,
    "ConcatV2": _concat,
    "DecodeRaw": _decode_raw,
    "ParseExampleV2": _parse_example,
}


def vectorize(fn: TracedFunction) -> tuple[dict[str, Any], list[bool]] | None:
    """The batched form of ``fn`` as plain data, and which of its outputs have the batch dimension; None when
    ``fn`` cannot be vectorized.

    The batched function's captures are ``fn``'s, in the same order.

    Example:
        >>> import dtf_notebook as tf
        >>> from dtf_notebook.data.function import trace
        >>> from dtf_notebook.data.structure import TensorSpec
        >>> with tf.Graph().as_default():
        ...     vectorize(trace(lambda x: x + tf.random_uniform([]), TensorSpec(tf.float32, []), "map")) is None
        True
    """
    if fn.pipeline is not None or structure.sparse_slots(fn.input_spec) or structure.sparse_slots(fn.output_spec):
        return None  # a batch of SparseTensors is not a stack of their components: map them one by one
    try:
        return _Rewriter(fn).run()
    except (_NotVectorizableError, ValueError, TypeError):
        return None
