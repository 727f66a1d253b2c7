"""``Einsum`` (``tf.einsum``, with ``...`` broadcasting) and TF's composite ``tensordot``.

The gradient of an einsum input is another einsum: the output gradient contracted with the other inputs onto the
input's labels. Labels that appear in that input alone (summed away) are broadcast back, a label repeated in it (a
diagonal) is spread back with identity matrices, and axes stretched by ``...`` broadcasting are summed back.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(einsum("ij,jk->ik", [[1.0, 2.0]], [[3.0], [4.0]])))
    [[11.]]
"""

from __future__ import annotations

import string
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, broadcast_shapes, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.math._common import REAL, array_ops, dense
from dtf_notebook.ops.op_helpers import check_dtype, make_op

__all__ = ["einsum", "tensordot"]


# ---- parsing ----------------------------------------------------------------------------------------------------
def _split(equation: str, n_inputs: int) -> tuple[list[str], str | None]:
    equation = equation.replace(" ", "")
    lhs, _, rhs = equation.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != n_inputs:
        raise ValueError(f"Einsum equation {equation!r} names {len(inputs)} inputs but {n_inputs} were given")
    for part in inputs + [rhs]:
        letters = part.replace("...", "")
        if not all(c in string.ascii_letters for c in letters) or "." in letters:
            raise ValueError(f"Invalid einsum equation {equation!r}: subscripts must be letters or '...'")
    return inputs, (rhs if "->" in equation else None)


def _implicit_output(inputs: Sequence[str]) -> str:
    """NumPy's implicit output: ``...`` (if any) and then the labels used once, in alphabetical order."""
    counts: dict[str, int] = {}
    for part in inputs:
        for c in part.replace("...", ""):
            counts[c] = counts.get(c, 0) + 1
    ellipsis = "..." if any("..." in p for p in inputs) else ""
    return ellipsis + "".join(sorted(c for c, k in counts.items() if k == 1))


def _expand_ellipses(inputs: Sequence[str], output: str, ranks: Sequence[int]) -> tuple[list[str], str]:
    """The equation with ``...`` replaced by unused letters (right-aligned, as broadcasting aligns axes)."""
    used = set("".join(inputs) + output)
    spare = [c for c in string.ascii_letters if c not in used]
    widths = [r - len(p.replace("...", "")) if "..." in p else 0 for p, r in zip(inputs, ranks)]
    width = max(widths, default=0)
    letters = "".join(spare[:width])
    expanded = [p.replace("...", letters[width - w :]) for p, w in zip(inputs, widths)]
    return expanded, output.replace("...", letters)


# ---- the op -----------------------------------------------------------------------------------------------------
def _einsum_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    equation = op.get_attr("equation")
    inputs, output = _split(equation, len(op.inputs))
    output = _implicit_output(inputs) if output is None else output
    x = op.inputs[0]
    if any(t.shape.ndims is None for t in op.inputs):
        return [(x.dtype, unknown_shape())]
    ranks = [t.shape.ndims for t in op.inputs]
    for part, rank, t in zip(inputs, ranks, op.inputs):
        n = len(part.replace("...", ""))
        if ("..." in part and rank < n) or ("..." not in part and rank != n):
            raise ValueError(f"Einsum '{op.name}': subscripts {part!r} do not fit input {t.name} of rank {rank}")
    ellipsis_shape = TensorShape([])
    dims: dict[str, int | None] = {}
    for part, t in zip(inputs, op.inputs):
        shape = t.shape.as_list()
        if "..." in part:
            before, after = part.split("...")
            middle = shape[len(before) : len(shape) - len(after)]
            ellipsis_shape = broadcast_shapes(ellipsis_shape, TensorShape(middle))
            labels = list(before) + [None] * len(middle) + list(after)
        else:
            labels = list(part)
        for label, d in zip(labels, shape):
            if label is None:
                continue
            known = dims.get(label)
            if known is not None and d is not None and known != d and 1 not in (known, d):
                raise ValueError(f"Einsum '{op.name}': label {label!r} has sizes {known} and {d}")
            if known is None or known == 1:
                dims[label] = d
    if "..." in output:
        before, after = output.split("...")
        out = [dims.get(c) for c in before] + ellipsis_shape.as_list() + [dims.get(c) for c in after]
    else:
        out = [dims.get(c) for c in output]
    return [(x.dtype, TensorShape(out))]


def _einsum_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    equation = op.get_attr("equation").replace(" ", "")
    return lambda *values: torch.einsum(equation, *values)


def _einsum_grad(op: Operation, grad: Any) -> list[Any]:
    grad = dense(grad)
    inputs, output = _split(op.get_attr("equation"), len(op.inputs))
    output = _implicit_output(inputs) if output is None else output
    ranks = [t.shape.ndims for t in op.inputs]
    if any(r is None for r in ranks):
        raise ValueError(f"The gradient of Einsum '{op.name}' needs inputs of known rank")
    subs, out_subs = _expand_ellipses(inputs, output, ranks)
    return [_input_grad(op, i, subs, out_subs, grad) for i in range(len(op.inputs))]


def _input_grad(op: Operation, i: int, subs: list[str], out_subs: str, grad: Tensor) -> Tensor:
    from dtf_notebook.ops.array.matrix_diag import eye
    from dtf_notebook.ops.math.broadcast import unbroadcast

    ao = array_ops()
    x = op.inputs[i]
    own = subs[i]
    unique = "".join(dict.fromkeys(own))
    others = [(s, t) for j, (s, t) in enumerate(zip(subs, op.inputs)) if j != i]
    available = set(out_subs).union(*[set(s) for s, _ in others])
    kept = "".join(c for c in unique if c in available)
    equation = ",".join([out_subs] + [s for s, _ in others]) + "->" + kept
    g = einsum(equation, grad, *[t for _, t in others])
    x_shape = ao.shape(x)
    sizes = {c: x_shape[own.index(c)] for c in unique}
    if kept != unique:
        # Labels summed within this input alone: their gradient is the same for every index.
        for k, c in enumerate(unique):
            if c not in kept:
                g = ao.expand_dims(g, k)
        g = ao.broadcast_to(g, ao.stack([sizes[c] for c in unique]))
    if own != unique:
        # A repeated label is a diagonal: the gradient sits on it, spread by identity matrices.
        spare = iter(c for c in string.ascii_letters if c not in "".join(subs) + out_subs)
        target, factors, seen = [], [], set()
        for c in own:
            if c in seen:
                fresh = next(spare)
                factors.append((c + fresh, eye(sizes[c], dtype=grad.dtype)))
                target.append(fresh)
            else:
                seen.add(c)
                target.append(c)
        equation = ",".join([unique] + [s for s, _ in factors]) + "->" + "".join(target)
        g = einsum(equation, g, *[t for _, t in factors])
    # Axes that ``...`` broadcasting stretched are summed back to this input's size.
    return unbroadcast(g, x, g.shape)


op_registry.register_op("Einsum", infer=_einsum_infer, kernel=_einsum_kernel, grad=_einsum_grad)


def einsum(equation: str, *inputs: Any, **kwargs: Any) -> Tensor:
    """Einstein summation: ``equation`` names each input's axes with letters (``...`` for broadcast axes); labels
    missing from the output (after ``->``, or numpy's implicit output) are summed over.

    Raises:
        ValueError: the equation does not fit the inputs; TypeError: an unknown keyword argument.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.einsum("...i,...i->...", [[1.0, 2.0], [3.0, 4.0]], [1.0, 1.0])))
        [3. 7.]
    """
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"Invalid keyword arguments for einsum: {', '.join(kwargs)}")
    with name_scope(name, "einsum", list(inputs)):
        tensors = [convert_to_tensor(x, name="inputs") for x in inputs]
        for t in tensors:
            check_dtype(t, REAL, "Einsum", "inputs")
        _split(equation, len(tensors))
        attrs = {"equation": equation.replace(" ", ""), "N": len(tensors)}
        return make_op("Einsum", tensors, attrs, name="Einsum").outputs[0]


# ---- tensordot (TF's composite) ---------------------------------------------------------------------------------
def _tensordot_axes(a: Tensor, axes: Any) -> tuple[Any, Any]:
    if isinstance(axes, int | np.integer):
        if axes < 0:
            raise ValueError(f"'axes' must be at least 0, received: {axes}.")
        rank = a.shape.ndims
        if rank is None:
            ao = array_ops()
            from dtf_notebook.ops.math_ops import range as math_range

            return math_range(ao.rank(a) - axes, ao.rank(a)), math_range(axes)
        if axes > rank:
            raise ValueError(f"'axes' must not be larger than the number of dimensions of tensor {a}: {axes} > {rank}")
        return list(range(rank - axes, rank)), list(range(axes))
    if isinstance(axes, list | tuple):
        if len(axes) != 2:
            raise ValueError(f"'axes' must be an integer or have length 2, received {axes}.")
        a_axes, b_axes = axes
        if isinstance(a_axes, int | np.integer) and isinstance(b_axes, int | np.integer):
            a_axes, b_axes = [a_axes], [b_axes]
        a_axes, b_axes = list(a_axes), list(b_axes)
        if len(a_axes) != len(b_axes):
            raise ValueError(f"Different number of contraction axes 'a' and 'b', {len(a_axes)} != {len(b_axes)}.")
        return a_axes, b_axes
    raise ValueError(f"'axes' must be an integer or a pair of axis lists, received {axes}.")


def _tensordot_reshape(a: Tensor, axes: Any, flipped: bool) -> tuple[Tensor, Any]:
    """``a`` transposed and reshaped to a matrix whose columns (rows if ``flipped``) run over ``axes``; and the
    sizes of its other axes (a list when known while building, else a tensor)."""
    ao = array_ops()
    if a.shape.is_fully_defined() and isinstance(axes, list):
        shape = a.shape.as_list()
        rank = len(shape)
        axes = [i if i >= 0 else i + rank for i in axes]
        free = [i for i in range(rank) if i not in axes]
        free_dims = [shape[i] for i in free]
        prod_free = int(np.prod(free_dims, dtype=np.int64))
        prod_axes = int(np.prod([shape[i] for i in axes], dtype=np.int64))
        perm = axes + free if flipped else free + axes
        new_shape = [prod_axes, prod_free] if flipped else [prod_free, prod_axes]
        if perm != list(range(rank)):
            a = ao.transpose(a, perm)
        return (ao.reshape(a, new_shape) if a.shape.as_list() != new_shape else a), free_dims
    from dtf_notebook.ops import math_ops
    from dtf_notebook.ops.array.sets import setdiff1d

    shape_a = ao.shape(a)
    rank_a = ao.rank(a)
    axes_t = convert_to_tensor(axes, dtype=dtypes.int32, name="axes")
    axes_t = math_ops.add(math_ops.cast(math_ops.less(axes_t, 0), dtypes.int32) * rank_a, axes_t)
    free, _ = setdiff1d(math_ops.range(rank_a), axes_t)
    free_dims = ao.gather(shape_a, free)
    axes_dims = ao.gather(shape_a, axes_t)
    prod_free = math_ops.reduce_prod(free_dims)
    prod_axes = math_ops.reduce_prod(axes_dims)
    if flipped:
        perm = ao.concat([axes_t, free], 0)
        new_shape = ao.stack([prod_axes, prod_free])
    else:
        perm = ao.concat([free, axes_t], 0)
        new_shape = ao.stack([prod_free, prod_axes])
    return ao.reshape(ao.transpose(a, perm), new_shape), free_dims


def tensordot(a: Any, b: Any, axes: Any, name: str | None = None) -> Tensor:
    """Contracts ``a`` and ``b`` over ``axes``: an int ``n`` (the last ``n`` axes of ``a`` with the first ``n`` of
    ``b``) or a pair of axis lists; built as TF builds it, from transposes, reshapes and one ``matmul``.

    Raises:
        ValueError: ``axes`` is malformed or does not fit the ranks.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.tensordot([[1.0, 2.0], [3.0, 4.0]], [1.0, 1.0], axes=[[1], [0]])))
        [3. 7.]
    """
    from dtf_notebook.ops import math_ops

    ao = array_ops()
    with name_scope(name, "Tensordot", [a, b, axes]) as scope:
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b")
        a_axes, b_axes = _tensordot_axes(a, axes)
        a_matrix, a_free = _tensordot_reshape(a, a_axes, flipped=False)
        b_matrix, b_free = _tensordot_reshape(b, b_axes, flipped=True)
        product = math_ops.matmul(a_matrix, b_matrix)
        if isinstance(a_free, list) and isinstance(b_free, list):
            if product.shape.is_fully_defined() and product.shape.as_list() == a_free + b_free:
                return product
            return ao.reshape(product, a_free + b_free, name=scope)
        a_free = convert_to_tensor(a_free, dtype=dtypes.int32)
        b_free = convert_to_tensor(b_free, dtype=dtypes.int32)
        return ao.reshape(product, ao.concat([a_free, b_free], 0), name=scope)
