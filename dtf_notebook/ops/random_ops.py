"""Random ops: ``random_normal``, ``truncated_normal``, ``random_uniform``, ``random_shuffle``, ``multinomial``.

Each random op carries ``seed``/``seed2`` attrs from :func:`random_seed.get_seed`.
Its kernel takes the node's persistent torch generator from the runtime once,
when the kernel is built, so successive runs of one session continue one
sequence, two fresh sessions of a seeded graph draw the same values, and
unseeded ops differ from session to session. As in TF, scaling and shifting
are separate ``Mul``/``Add`` ops around a standard-distribution op.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.random_uniform([2, 3], -1.0, 1.0, seed=1)
    ...     with tf.Session() as sess:
    ...         v = sess.run(x)
    >>> v.shape, bool(((v >= -1) & (v < 1)).all())
    ((2, 3), True)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry, random_seed
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, dimension_value
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.op_helpers import constant_value, make_op, same_as_input, shape_from_tensor
from dtf_notebook.runtime.values import torch_dtype

__all__ = ["random_normal", "truncated_normal", "random_uniform", "random_shuffle", "multinomial"]

_FLOATS = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
_UNIFORM_DTYPES = _FLOATS + (dtypes.int32, dtypes.int64)
_SHAPE_DTYPES = (dtypes.int32, dtypes.int64)
_INT32_MAX = 2**31 - 1


# ---- argument handling ------------------------------------------------------------------------
def _allowed(dtype: dtypes.DType, allowed: tuple[dtypes.DType, ...], param: str) -> None:
    if dtype not in allowed:
        names = ", ".join(d.name for d in allowed)
        raise TypeError(
            f"Value passed to parameter '{param}' has DataType {dtype.name} not in list of allowed values: {names}"
        )


def _shape_tensor(shape: Any) -> Tensor:
    """The 1-D int32/int64 tensor for a shape given as a tensor, TensorShape, list or tuple (TF's ``shape_tensor``)."""
    if isinstance(shape, TensorShape):
        if not shape.is_fully_defined():
            raise ValueError(f"Cannot convert a partially known TensorShape {shape} to a Tensor.")
        shape = shape.as_list()
    if isinstance(shape, list | tuple):
        shape = [dimension_value(d) for d in shape]  # TF1 code often passes `x.shape[1]` (a Dimension)
    if isinstance(shape, list) and any(hasattr(d, "graph") for d in shape):
        # A shape mixing Python ints and scalar tensors (e.g. [batch, 10]) is packed into one tensor.
        t = array_ops.stack([convert_to_tensor(d, dtype=dtypes.int32) for d in shape], name="shape")
    elif isinstance(shape, Tensor) or hasattr(shape, "_as_graph_element"):
        t = convert_to_tensor(shape)
    else:
        arr = np.asarray(shape)
        if isinstance(shape, np.ndarray | np.generic) or (arr.dtype.kind not in "iu" and arr.size):
            # numpy keeps its integer type; non-integer values are rejected below with TF's message.
            t = convert_to_tensor(shape, name="shape")
        else:
            big = arr.size and (int(arr.max()) > _INT32_MAX or int(arr.min()) < -_INT32_MAX - 1)
            t = constant(arr.astype(np.int64 if big else np.int32), name="shape")
    _allowed(t.dtype, _SHAPE_DTYPES, "shape")
    return t


def _attrs(dtype: dtypes.DType, shape: Tensor, seed: int | None) -> dict[str, Any]:
    seed1, seed2 = random_seed.get_seed(seed)
    return {"seed": seed1 or 0, "seed2": seed2 or 0, "dtype": dtype, "T": shape.dtype}


# ---- kernels ----------------------------------------------------------------------------------
def _static_dims(shape: Tensor) -> tuple[int, ...] | None:
    """The shape's value when it is known while building, so kernels need not read the input each run."""
    value = constant_value(shape)
    if value is None:
        return None
    dims = tuple(int(d) for d in np.asarray(value).reshape(-1))
    return dims if all(d >= 0 for d in dims) else None


def _dims_reader(op: Any) -> Callable[[Any], tuple[int, ...]]:
    static = _static_dims(op.inputs[0])
    if static is not None:
        return lambda shape: static

    def read(shape: Any) -> tuple[int, ...]:
        dims = tuple(int(d) for d in shape.reshape(-1).tolist())
        if any(d < 0 for d in dims):
            raise errors.InvalidArgumentError(None, op, f"Shape {list(dims)} must not have negative dimensions")
        return dims

    return read


def _generator(op: Any, ctx: Any) -> torch.Generator:
    # The runtime keeps one generator per node across plans: fetched once here, advanced by every run.
    return ctx.generator(op.get_attr("seed"), op.get_attr("seed2"))


def _work_dtype(dtype: torch.dtype) -> torch.dtype:
    """16-bit floats are sampled in float32 and rounded, which keeps the tails of the distribution."""
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def _standard_normal_kernel(op: Any, ctx: Any):
    gen, device, dims = _generator(op, ctx), ctx.device, _dims_reader(op)
    dtype = torch_dtype(op.get_attr("dtype"))
    work = _work_dtype(dtype)
    if work is dtype:
        return lambda shape: torch.randn(dims(shape), generator=gen, dtype=dtype, device=device)
    return lambda shape: torch.randn(dims(shape), generator=gen, dtype=work, device=device).to(dtype)


def _truncated_normal_kernel(op: Any, ctx: Any):
    gen, device, dims = _generator(op, ctx), ctx.device, _dims_reader(op)
    dtype = torch_dtype(op.get_attr("dtype"))
    work = _work_dtype(dtype)

    def run(shape: Any) -> torch.Tensor:
        x = torch.randn(dims(shape), generator=gen, dtype=work, device=device)
        flat = x.view(-1)
        # Resample only the draws beyond two standard deviations, as TF does, until none is left.
        idx = (flat.abs() > 2).nonzero().squeeze(1)
        while idx.numel():
            fresh = torch.randn(idx.numel(), generator=gen, dtype=work, device=device)
            flat[idx] = fresh
            idx = idx[fresh.abs() > 2]
        return x if work is dtype else x.to(dtype)

    return run


def _uniform_kernel(op: Any, ctx: Any):
    gen, device, dims = _generator(op, ctx), ctx.device, _dims_reader(op)
    dtype = torch_dtype(op.get_attr("dtype"))
    work = _work_dtype(dtype)
    if work is dtype:
        return lambda shape: torch.rand(dims(shape), generator=gen, dtype=dtype, device=device)
    # Rounding a float32 draw to 16 bits can give 1.0; clamp to keep TF's half-open range [0, 1).
    below_one = torch.nextafter(torch.tensor(1.0, dtype=dtype), torch.tensor(0.0, dtype=dtype)).item()

    def run(shape: Any) -> torch.Tensor:
        return torch.rand(dims(shape), generator=gen, dtype=work, device=device).to(dtype).clamp_(max=below_one)

    return run


def _uniform_int_kernel(op: Any, ctx: Any):
    gen, device, dims = _generator(op, ctx), ctx.device, _dims_reader(op)
    dtype = torch_dtype(op.get_attr("Tout"))

    def run(shape: Any, minval: Any, maxval: Any) -> torch.Tensor:
        lo, hi = int(minval), int(maxval)
        if lo >= hi:
            raise errors.InvalidArgumentError(None, op, f"Need minval < maxval, got {lo} >= {hi}")
        return torch.randint(lo, hi, dims(shape), generator=gen, dtype=dtype, device=device)

    return run


def _shuffle_kernel(op: Any, ctx: Any):
    gen, device = _generator(op, ctx), ctx.device

    def run(value: Any) -> Any:
        if value.ndim == 0 or value.shape[0] <= 1:
            return value
        if isinstance(value, np.ndarray):  # strings are numpy object arrays
            return value[torch.randperm(value.shape[0], generator=gen, device=device).cpu().numpy()]
        return value[torch.randperm(value.shape[0], generator=gen, device=device)]

    return run


def _multinomial_kernel(op: Any, ctx: Any):
    gen = _generator(op, ctx)
    out_dtype = torch_dtype(op.get_attr("output_dtype"))

    def run(logits: Any, num_samples: Any) -> torch.Tensor:
        n = int(num_samples)
        if n < 0:
            raise errors.InvalidArgumentError(None, op, f"num_samples should be nonnegative, got {n}")
        if n == 0 or logits.shape[0] == 0:
            return torch.zeros((logits.shape[0], n), dtype=out_dtype, device=logits.device)
        probs = torch.softmax(logits.to(_work_dtype(logits.dtype)), dim=-1)
        return torch.multinomial(probs, n, replacement=True, generator=gen).to(out_dtype)

    return run


# ---- inference ----------------------------------------------------------------------------------
def _shape_input_infer(dtype_attr: str):
    def infer(op: Any) -> list[tuple[dtypes.DType, TensorShape]]:
        shape = op.inputs[0]
        if shape.shape.ndims not in (None, 1):
            raise ValueError(f"Shape must be rank 1 but is rank {shape.shape.ndims}")
        return [(op.get_attr(dtype_attr), shape_from_tensor(shape))]

    return infer


def _uniform_int_infer(op: Any) -> list[tuple[dtypes.DType, TensorShape]]:
    for t, what in zip(op.inputs[1:], ("minval", "maxval")):
        if t.shape.ndims not in (None, 0):
            raise ValueError(f"{what} must be 0-D, got shape {t.shape}")
    return _shape_input_infer("Tout")(op)


def _multinomial_infer(op: Any) -> list[tuple[dtypes.DType, TensorShape]]:
    logits, num_samples = op.inputs
    if logits.shape.ndims not in (None, 2):
        raise ValueError(f"logits should be a matrix, got shape {logits.shape}")
    batch = logits.shape[0].value if logits.shape.ndims == 2 else None
    n = constant_value(num_samples)
    return [(op.get_attr("output_dtype"), TensorShape([batch, None if n is None else int(n)]))]


_NOT_DIFF = op_registry.NOT_DIFFERENTIABLE
op_registry.register_op(
    "RandomStandardNormal",
    infer=_shape_input_infer("dtype"),
    kernel=_standard_normal_kernel,
    grad=_NOT_DIFF,
    stateful=True,
)
op_registry.register_op(
    "TruncatedNormal", infer=_shape_input_infer("dtype"), kernel=_truncated_normal_kernel, grad=_NOT_DIFF, stateful=True
)
op_registry.register_op(
    "RandomUniform", infer=_shape_input_infer("dtype"), kernel=_uniform_kernel, grad=_NOT_DIFF, stateful=True
)
op_registry.register_op(
    "RandomUniformInt", infer=_uniform_int_infer, kernel=_uniform_int_kernel, grad=_NOT_DIFF, stateful=True
)
op_registry.register_op("RandomShuffle", infer=same_as_input, kernel=_shuffle_kernel, grad=_NOT_DIFF, stateful=True)
op_registry.register_op(
    "Multinomial", infer=_multinomial_infer, kernel=_multinomial_kernel, grad=_NOT_DIFF, stateful=True
)


# ---- public builders ---------------------------------------------------------------------------
def _scaled(
    op_type: str,
    scope: str,
    shape: Any,
    mean: Any,
    stddev: Any,
    dtype: dtypes.DType,
    seed: int | None,
    name: str | None,
) -> Tensor:
    """``op_type(shape) * stddev + mean`` under one name scope, the result named after the scope (TF's layout)."""
    with name_scope(name, scope, [shape, mean, stddev]) as scope_name:
        shape_t = _shape_tensor(shape)
        mean_t = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev_t = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        rnd = make_op(op_type, [shape_t], _attrs(dtype, shape_t, seed), name=op_type).outputs[0]
        mul = math_ops.multiply(rnd, stddev_t, name="mul")
        return math_ops.add(mul, mean_t, name=scope_name)


def random_normal(
    shape: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = dtypes.float32,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    """Samples from a normal distribution (``RandomStandardNormal * stddev + mean``).

    Args:
        shape: 1-D int32/int64 tensor or Python list/tuple: the output shape.
        mean: Scalar or tensor (broadcast) mean.
        stddev: Scalar or tensor (broadcast) standard deviation.
        dtype: A floating type.
        seed: Op seed (see ``tf.set_random_seed``).
        name: Name scope of the ops (default ``"random_normal"``).

    Raises:
        TypeError: ``dtype`` is not floating, or ``shape`` is not integral.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.random_normal([1000], mean=5.0, stddev=0.1, seed=3)
        ...     with tf.Session() as sess:
        ...         print(round(float(sess.run(x).mean())))
        5
    """
    dtype = dtypes.as_dtype(dtype)
    _allowed(dtype, _FLOATS, "dtype")
    return _scaled("RandomStandardNormal", "random_normal", shape, mean, stddev, dtype, seed, name)


def truncated_normal(
    shape: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = dtypes.float32,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    """Samples from a normal distribution, redrawing values more than two ``stddev`` from ``mean``.

    Args:
        shape: 1-D int32/int64 tensor or Python list/tuple: the output shape.
        mean: Mean of the (untruncated) normal distribution.
        stddev: Standard deviation of the (untruncated) normal distribution.
        dtype: A floating type.
        seed: Op seed.
        name: Name scope of the ops (default ``"truncated_normal"``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.truncated_normal([10000], stddev=3.0, seed=1)
        ...     with tf.Session() as sess:
        ...         print(float(abs(sess.run(x)).max()) <= 6.0)
        True
    """
    dtype = dtypes.as_dtype(dtype)
    _allowed(dtype, _FLOATS, "dtype")
    return _scaled("TruncatedNormal", "truncated_normal", shape, mean, stddev, dtype, seed, name)


def random_uniform(
    shape: Any,
    minval: Any = 0,
    maxval: Any = None,
    dtype: Any = dtypes.float32,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    """Samples uniformly from ``[minval, maxval)``.

    Floats: ``RandomUniform`` in [0, 1) scaled (``maxval`` defaults to 1).
    Integers (int32/int64): ``RandomUniformInt``, ``maxval`` required.

    Raises:
        ValueError: ``dtype`` is not a float, int32 or int64, or an integer ``dtype`` lacks ``maxval``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     dice = tf.random_uniform([5], 1, 7, dtype=tf.int32, seed=2)
        ...     with tf.Session() as sess:
        ...         d = sess.run(dice)
        >>> d.dtype, bool(((d >= 1) & (d <= 6)).all())
        (dtype('int32'), True)
    """
    dtype = dtypes.as_dtype(dtype)
    if dtype not in _UNIFORM_DTYPES:
        raise ValueError(f"Argument `dtype` got invalid value {dtype}. Accepted dtypes are {_UNIFORM_DTYPES}.")
    if maxval is None:
        if dtype.is_integer:
            raise ValueError(f"Must specify maxval for integer dtype {dtype!r}")
        maxval = 1
    with name_scope(name, "random_uniform", [shape, minval, maxval]) as scope_name:
        shape_t = _shape_tensor(shape)
        # [0, 1) needs no scaling ops; `type(...) is int` mirrors TF's check, which ignores 0.0 and 1.0.
        minval_is_zero = type(minval) is int and minval == 0
        maxval_is_one = type(maxval) is int and maxval == 1
        if not minval_is_zero or not maxval_is_one or dtype.is_integer:
            minval = convert_to_tensor(minval, dtype=dtype, name="min")
            maxval = convert_to_tensor(maxval, dtype=dtype, name="max")
        attrs = _attrs(dtype, shape_t, seed)
        if dtype.is_integer:
            attrs["Tout"] = attrs.pop("dtype")
            return make_op("RandomUniformInt", [shape_t, minval, maxval], attrs, name=scope_name).outputs[0]
        rnd = make_op("RandomUniform", [shape_t], attrs, name="RandomUniform").outputs[0]
        if minval_is_zero:
            return rnd if maxval_is_one else math_ops.multiply(rnd, maxval, name="Mul")
        span = math_ops.subtract(maxval, minval, name="sub")
        return math_ops.add(math_ops.multiply(rnd, span, name="mul"), minval, name=scope_name)


def random_shuffle(value: Any, seed: int | None = None, name: str | None = None) -> Tensor:
    """Randomly permutes ``value`` along its first dimension.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     s = tf.random_shuffle(tf.constant([1, 2, 3, 4]), seed=5)
        ...     with tf.Session() as sess:
        ...         print(sorted(sess.run(s).tolist()))
        [1, 2, 3, 4]
    """
    value_t = convert_to_tensor(value, name="value")
    seed1, seed2 = random_seed.get_seed(seed)
    attrs = {"seed": seed1 or 0, "seed2": seed2 or 0, "T": value_t.dtype}
    return make_op("RandomShuffle", [value_t], attrs, name=name or "RandomShuffle").outputs[0]


def multinomial(
    logits: Any, num_samples: Any, seed: int | None = None, name: str | None = None, output_dtype: Any = None
) -> Tensor:
    """Draws ``num_samples`` class indices per row of ``logits`` (unnormalised log-probabilities).

    Args:
        logits: ``[batch_size, num_classes]`` float tensor.
        num_samples: Scalar int: samples per row.
        seed: Op seed.
        name: Name scope (default ``"multinomial"``).
        output_dtype: int32 or int64 (default int64).

    Raises:
        ValueError: ``output_dtype`` is not int32 or int64.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     m = tf.multinomial([[-1e9, 0.0]], 3, seed=4)
        ...     with tf.Session() as sess:
        ...         print(sess.run(m))
        [[1 1 1]]
    """
    return categorical(logits, num_samples, output_dtype, seed, name, scope="multinomial")


def categorical(
    logits: Any,
    num_samples: Any,
    dtype: Any = None,
    seed: int | None = None,
    name: str | None = None,
    scope: str = "categorical",
) -> Tensor:
    """``tf.random.categorical``: :func:`multinomial` with its TF2 argument order.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     categorical([[0.0, 0.0]], 4, seed=1).shape.as_list()
        [1, 4]
    """
    out_dtype = dtypes.as_dtype(dtype) if dtype else dtypes.int64
    accepted = (dtypes.int32, dtypes.int64)
    if out_dtype not in accepted:
        raise ValueError(f"Argument `dtype` got invalid value {out_dtype}. Accepted dtypes are {accepted}.")
    with name_scope(name, scope, [logits]):
        logits_t = convert_to_tensor(logits, name="logits")
        _allowed(logits_t.dtype, _FLOATS, "logits")
        seed1, seed2 = random_seed.get_seed(seed)
        attrs = {"seed": seed1 or 0, "seed2": seed2 or 0, "T": logits_t.dtype, "output_dtype": out_dtype}
        with name_scope("Multinomial") as op_scope:
            num_t = convert_to_tensor(num_samples, dtype=dtypes.int32, name="num_samples")
            return make_op("Multinomial", [logits_t, num_t], attrs, name=op_scope).outputs[0]
