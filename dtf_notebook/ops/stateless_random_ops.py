"""Stateless random ops: ``tf.random.stateless_uniform``, ``stateless_normal``, ``stateless_truncated_normal``,
``stateless_categorical``/``stateless_multinomial``, ``stateless_parameterized_truncated_normal``, ``split``,
``fold_in`` and ``create_rng_state``.

A stateless op's values are a pure function of its ``seed`` (a shape ``[2]`` int32/int64 tensor) and shape: the
same seed gives the same values in every run, session and process. They are TF's values: the kernels run TF's
Philox4x32-10 stream and TF's conversions (:mod:`.philox`, :mod:`.philox_samplers`), so uniforms and integers are
bit for bit TF's, normals within an ulp or two of float math, and categorical draws TF's whenever TF's CPU kernel
runs the batch in one shard. ``alg`` may be ``"philox"`` or ``"auto_select"`` (Philox on CPU and GPU, as TF
selects); ``"threefry"`` is refused. ``stateless_parameterized_truncated_normal`` is the exception: its
values come from its own inverse-CDF sampler on the Philox stream (deterministic and exactly distributed, but not
TF's numbers, whose rejection sampler depends on TF's sharding).

The graph is TF1's layout with TF's V1 kernels (``StatelessRandomUniform(shape, seed)``, ...) in place of TF 2's
``StatelessRandomGetKeyCounter`` + V2 pair, which compute the same values.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(tf.random.stateless_uniform([3], seed=[1, 2])))
    [0.8440604  0.19204533 0.9962232 ]
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.op_helpers import check_dtype, constant_value, make_op, shape_from_tensor
from dtf_notebook.ops.random_ops import _dims_reader, _shape_tensor

__all__ = [
    "Algorithm",
    "create_rng_state",
    "fold_in",
    "split",
    "stateless_categorical",
    "stateless_multinomial",
    "stateless_parameterized_truncated_normal",
    "stateless_random_normal",
    "stateless_random_uniform",
    "stateless_truncated_normal",
]

_FLOATS = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
_INTS = (dtypes.int32, dtypes.int64)
_NOT_DIFF = op_registry.NOT_DIFFERENTIABLE


class Algorithm(enum.Enum):
    """TF's random-number algorithms (``tf.random.Algorithm``); the ops here run ``PHILOX`` (``AUTO_SELECT``'s choice
    on CPU and GPU).

    Example:
        >>> Algorithm.PHILOX.value, Algorithm.AUTO_SELECT.value
        (1, 3)
    """

    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


def _alg_value(alg: Any) -> int:
    """TF's ``convert_alg_to_int``; only Philox (and auto-select, which picks it) is run here."""
    if isinstance(alg, Algorithm):
        value = alg.value
    elif isinstance(alg, int):
        value = alg
    elif isinstance(alg, str):
        canon = alg.strip().lower().replace("-", "").replace("_", "")
        value = {"philox": 1, "threefry": 2, "autoselect": 3}.get(canon, -1)
    elif alg is None:
        value = 3
    else:
        raise TypeError(f"Can't convert argument `alg` (of value {alg} and type {type(alg)}) to int.")
    if value not in (1, 2, 3):
        raise ValueError(
            f"Argument `alg` got unsupported value {alg}. Supported values are philox for the Philox algorithm, "
            "threefry for the ThreeFry algorithm, and auto_select for auto-selection."
        )
    return value


def _philox_only(alg: Any) -> None:
    if _alg_value(alg) == Algorithm.THREEFRY.value:
        raise ValueError("alg='threefry' is not supported here: the stateless ops run Philox (TF's auto_select)")


def seed_tensor(seed: Any) -> Tensor:
    """``seed`` as an int32/int64 tensor of static shape ``[2]`` where known (TF's checks and messages).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     seed_tensor([1, 2]).dtype.name
        'int32'
    """
    t = convert_to_tensor(seed, name="seed")
    check_dtype(t, _INTS, "StatelessRandom", "seed")
    shape = t.shape
    if shape.ndims is not None and shape.ndims != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {shape.ndims} for the seed {t.name}")
    if shape.ndims == 1 and shape[0].value is not None and shape[0].value != 2:
        raise ValueError(f"Dimension must be 2 but is {shape[0].value} for the seed {t.name}")
    return t


def key_counter(op: Any, seed: Any) -> tuple[tuple[int, int], tuple[int, int, int, int]]:
    """The Philox key and counter of a seed value (kernel side; TF's ``GenerateKey``)."""
    from dtf_notebook.ops import philox

    values = [int(v) for v in seed.reshape(-1).tolist()]
    if len(values) != 2 or seed.ndim != 1:
        raise errors.InvalidArgumentError(None, op, f"seed must have shape [2], not {list(seed.shape)}")
    return philox.key_counter_from_seed(values[0], values[1])


def _torch_name(dtype: dtypes.DType) -> str:
    return dtype.name


# ---- kernels ---------------------------------------------------------------------------------------------------
def _fixed_kernel(kind: str) -> Callable[[Any, Any], Callable[..., Any]]:
    def factory(op: Any, ctx: Any) -> Callable[..., Any]:
        from dtf_notebook.ops import philox_samplers

        dims, device, dtype = _dims_reader(op), ctx.device, _torch_name(op.get_attr("dtype"))

        def run(shape: Any, seed: Any) -> torch.Tensor:
            size = dims(shape)
            n = int(np.prod(size))
            if n == 0:
                return torch.zeros(size, dtype=getattr(torch, dtype), device=device)
            key, counter = key_counter(op, seed)
            if kind == "truncated":
                values = philox_samplers.truncated_normal(key, counter, n, dtype, device)
            else:
                values = philox_samplers.fixed(kind, key, counter, n, dtype, device)
            return values.reshape(size)

        return run

    return factory


def _uniform_int_kernel(op: Any, ctx: Any) -> Callable[..., Any]:
    from dtf_notebook.ops import philox_samplers

    dims, device, dtype = _dims_reader(op), ctx.device, _torch_name(op.get_attr("dtype"))

    def run(shape: Any, seed: Any, minval: Any, maxval: Any) -> torch.Tensor:
        size = dims(shape)
        lo, hi = int(minval), int(maxval)
        if lo >= hi:
            raise errors.InvalidArgumentError(None, op, f"Need minval < maxval, got {lo} >= {hi}")
        n = int(np.prod(size))
        if n == 0:
            return torch.zeros(size, dtype=getattr(torch, dtype), device=device)
        key, counter = key_counter(op, seed)
        return philox_samplers.uniform_int(key, counter, n, lo, hi, dtype, device).reshape(size)

    return run


def _multinomial_kernel(op: Any, ctx: Any) -> Callable[..., Any]:
    from dtf_notebook.ops import philox_samplers

    out_dtype = getattr(torch, op.get_attr("output_dtype").name)

    def run(logits: Any, num_samples: Any, seed: Any) -> torch.Tensor:
        n = int(num_samples)
        if n < 0:
            raise errors.InvalidArgumentError(None, op, f"num_samples should be non-negative, got {n}")
        if logits.shape[1] == 0:
            raise errors.InvalidArgumentError(None, op, "num_classes should be positive, got 0")
        if n == 0 or logits.shape[0] == 0:
            return torch.zeros((logits.shape[0], n), dtype=out_dtype, device=logits.device)
        key, counter = key_counter(op, seed)
        return philox_samplers.multinomial(key, counter, logits, n).to(out_dtype)

    return run


def _ptn_kernel(op: Any, ctx: Any) -> Callable[..., Any]:
    from dtf_notebook.ops import philox

    dims, device = _dims_reader(op), ctx.device

    def run(shape: Any, seed: Any, means: Any, stddevs: Any, minvals: Any, maxvals: Any) -> torch.Tensor:
        size = dims(shape)
        params = torch.broadcast_tensors(*(t.double() for t in (means, stddevs, minvals, maxvals)))
        try:
            mean, std, lo, hi = (p.expand(size) for p in params)
        except RuntimeError:
            raise errors.InvalidArgumentError(
                None, op, f"The parameters' shape {list(params[0].shape)} does not broadcast to the shape {list(size)}"
            ) from None
        n = int(np.prod(size))
        if n == 0:
            return torch.zeros(size, dtype=means.dtype, device=device)
        bad = ~((std > 0) & (lo < hi) & (torch.isfinite(lo) | torch.isfinite(hi)))
        if bool(bad.any()):
            raise errors.InvalidArgumentError(None, op, "Invalid parameters")
        key, counter = key_counter(op, seed)
        # One float64 uniform per output (2 words each), then the inverse CDF of the normal between the bounds,
        # mirrored into the lower tail where that side's CDF is the better resolved one.
        words = philox.blocks(key, counter, -(-2 * n // 4), device=device).reshape(-1)[: 2 * n]
        u = philox.uniform(words, "float64").reshape(size)
        a, b = (lo - mean) / std, (hi - mean) / std
        flip = a > 0
        a, b = torch.where(flip, -b, a), torch.where(flip, -a, b)
        pa, pb = torch.special.ndtr(a), torch.special.ndtr(b)
        z = torch.special.ndtri(pa + u * (pb - pa))
        z = torch.minimum(torch.maximum(z, a), b)
        z = torch.where(flip, -z, z)
        return (mean + std * z).to(means.dtype)

    return run


# ---- inference ----------------------------------------------------------------------------------------------------
def _shape_seed_infer(dtype_attr: str = "dtype") -> Callable[[Any], list[tuple[dtypes.DType, TensorShape]]]:
    def infer(op: Any) -> list[tuple[dtypes.DType, TensorShape]]:
        shape = op.inputs[0]
        if shape.shape.ndims not in (None, 1):
            raise ValueError(f"Shape must be rank 1 but is rank {shape.shape.ndims} for '{op.name}'")
        return [(op.get_attr(dtype_attr), shape_from_tensor(shape))]

    return infer


def _uniform_int_infer(op: Any) -> list[tuple[dtypes.DType, TensorShape]]:
    for t, what in zip(op.inputs[2:], ("minval", "maxval")):
        if t.shape.ndims not in (None, 0):
            raise ValueError(f"{what} must be a scalar; got a tensor of shape {t.shape} for '{op.name}'")
    return _shape_seed_infer()(op)


def _multinomial_infer(op: Any) -> list[tuple[dtypes.DType, TensorShape]]:
    logits, num_samples = op.inputs[0], op.inputs[1]
    if logits.shape.ndims not in (None, 2):
        raise ValueError(f"logits should be a matrix, got shape {logits.shape} for '{op.name}'")
    batch = logits.shape[0].value if logits.shape.ndims == 2 else None
    n = constant_value(num_samples)
    return [(op.get_attr("output_dtype"), TensorShape([batch, None if n is None else int(n)]))]


for _type, _kind in (
    ("StatelessRandomUniform", "uniform"),
    ("StatelessRandomNormal", "normal"),
    ("StatelessTruncatedNormal", "truncated"),
    ("StatelessRandomUniformFullInt", "bits"),
):
    op_registry.register_op(_type, infer=_shape_seed_infer(), kernel=_fixed_kernel(_kind), grad=_NOT_DIFF)
op_registry.register_op(
    "StatelessRandomUniformInt", infer=_uniform_int_infer, kernel=_uniform_int_kernel, grad=_NOT_DIFF
)
op_registry.register_op("StatelessMultinomial", infer=_multinomial_infer, kernel=_multinomial_kernel, grad=_NOT_DIFF)
op_registry.register_op(
    "StatelessParameterizedTruncatedNormal", infer=_shape_seed_infer(), kernel=_ptn_kernel, grad=_NOT_DIFF
)


# ---- builders -----------------------------------------------------------------------------------------------------
def _attrs(dtype: dtypes.DType, shape: Tensor, seed: Tensor) -> dict[str, Any]:
    return {"dtype": dtype, "T": shape.dtype, "Tseed": seed.dtype}


def stateless_random_uniform(
    shape: Any,
    seed: Any,
    minval: Any = 0,
    maxval: Any = None,
    dtype: Any = dtypes.float32,
    name: str | None = None,
    alg: Any = "auto_select",
) -> Tensor:
    """Deterministic uniform values in ``[minval, maxval)`` from ``seed`` (TF's values; see the module docstring).

    Floats default to ``[0, 1)``; integer dtypes need both bounds, or neither for the full range of the type.

    Args:
        shape: 1-D int32/int64 tensor or Python list: the output shape.
        seed: Shape ``[2]`` int32/int64 tensor.
        minval: Lower bound (a scalar for integers), or None with ``maxval`` None for full-range integers.
        maxval: Upper bound, excluded.
        dtype: float16, bfloat16, float32, float64, int32 or int64.
        name: Name scope (default ``"stateless_random_uniform"``).
        alg: ``"philox"`` or ``"auto_select"`` (the same here); ``"threefry"`` is refused.

    Raises:
        ValueError: a bad dtype, one integer bound missing, or ``alg="threefry"``.
        InvalidArgumentError: (when run) integer ``minval >= maxval``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.random.stateless_uniform([4], [7, 17], minval=0, maxval=10, dtype=tf.int32)))
        [5 8 2 8]
    """
    dtype = dtypes.as_dtype(dtype)
    accepted = _FLOATS + _INTS
    if dtype not in accepted:
        raise ValueError(f"Argument `dtype` got invalid value {dtype}. Accepted dtypes are {accepted}.")
    if dtype.is_integer and (minval is None) != (maxval is None):
        raise ValueError(
            f"For integer `dtype` argument {dtype}, argument `minval` and `maxval` must be both None or not None. "
            f"Got `minval`={minval} and `maxval`={maxval}."
        )
    if not dtype.is_integer and maxval is None:
        maxval = 1
    _philox_only(alg)
    with name_scope(name, "stateless_random_uniform", [shape, seed, minval, maxval]) as scope:
        shape_t = _shape_tensor(shape)
        if dtype.is_integer and minval is None:
            seed_t = seed_tensor(seed)
            attrs = _attrs(dtype, shape_t, seed_t)
            return make_op("StatelessRandomUniformFullInt", [shape_t, seed_t], attrs, name=scope).outputs[0]
        min_t = convert_to_tensor(minval, dtype=dtype, name="min")
        max_t = convert_to_tensor(maxval, dtype=dtype, name="max")
        seed_t = seed_tensor(seed)
        attrs = _attrs(dtype, shape_t, seed_t)
        if dtype.is_integer:
            return make_op("StatelessRandomUniformInt", [shape_t, seed_t, min_t, max_t], attrs, name=scope).outputs[0]
        rnd = make_op("StatelessRandomUniform", [shape_t, seed_t], attrs, name="StatelessRandomUniform").outputs[0]
        span = math_ops.subtract(max_t, min_t, name="sub")
        return math_ops.add(math_ops.multiply(rnd, span, name="mul"), min_t, name=scope)


def _normal_like(
    op_type: str, scope_name: str, shape: Any, seed: Any, mean: Any, stddev: Any, dtype: Any, name: Any, alg: Any
) -> Tensor:
    dtype = dtypes.as_dtype(dtype)
    _philox_only(alg)
    with name_scope(name, scope_name, [shape, seed, mean, stddev]) as scope:
        shape_t = _shape_tensor(shape)
        mean_t = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev_t = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        seed_t = seed_tensor(seed)
        if dtype not in _FLOATS:
            names = ", ".join(d.name for d in _FLOATS)
            raise TypeError(
                f"Value passed to parameter 'dtype' has DataType {dtype.name} not in list of allowed values: {names}"
            )
        rnd = make_op(op_type, [shape_t, seed_t], _attrs(dtype, shape_t, seed_t), name=op_type).outputs[0]
        return math_ops.add(math_ops.multiply(rnd, stddev_t, name="mul"), mean_t, name=scope)


def stateless_random_normal(
    shape: Any,
    seed: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = dtypes.float32,
    name: str | None = None,
    alg: Any = "auto_select",
) -> Tensor:
    """Deterministic normal values from ``seed`` (TF's Box-Muller on TF's Philox stream).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.random.stateless_normal([3], seed=[1105988140, 1738052849])).round(4))
        [-0.5984 -0.9579  0.9003]
    """
    return _normal_like("StatelessRandomNormal", "stateless_random_normal", shape, seed, mean, stddev, dtype, name, alg)


def stateless_truncated_normal(
    shape: Any,
    seed: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = dtypes.float32,
    name: str | None = None,
    alg: Any = "auto_select",
) -> Tensor:
    """Deterministic normal values from ``seed``, redrawn beyond two standard deviations (TF's values).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     v = sess.run(tf.random.stateless_truncated_normal([1000], seed=[3, 4], stddev=2.0))
        >>> bool(abs(v).max() < 4.0)
        True
    """
    return _normal_like(
        "StatelessTruncatedNormal", "stateless_truncated_normal", shape, seed, mean, stddev, dtype, name, alg
    )


def _multinomial(logits: Any, num_samples: Any, seed: Any, dtype: Any) -> Tensor:
    logits_t = convert_to_tensor(logits, name="logits")
    out_dtype = dtypes.as_dtype(dtype) if dtype else dtypes.int64
    if out_dtype not in _INTS:
        raise ValueError(f"Argument `dtype` got invalid value {out_dtype}. Accepted dtypes are {_INTS}.")
    check_dtype(logits_t, _FLOATS, "StatelessMultinomial", "logits")
    num_t = convert_to_tensor(num_samples, dtype=dtypes.int32, name="num_samples")
    seed_t = seed_tensor(seed)
    attrs = {"T": logits_t.dtype, "Tseed": seed_t.dtype, "output_dtype": out_dtype}
    return make_op("StatelessMultinomial", [logits_t, num_t, seed_t], attrs, name="StatelessMultinomial").outputs[0]


def stateless_multinomial(
    logits: Any, num_samples: Any, seed: Any, output_dtype: Any = dtypes.int64, name: str | None = None
) -> Tensor:
    """Deterministic class indices ``[batch, num_samples]`` drawn from unnormalised log-probabilities ``logits``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.random.stateless_multinomial([[-1e9, 0.0]], 3, seed=[7, 17])))
        [[1 1 1]]
    """
    with name_scope(name, "stateless_multinomial", [logits, seed]):
        return _multinomial(logits, num_samples, seed, output_dtype)


def stateless_categorical(
    logits: Any, num_samples: Any, seed: Any, dtype: Any = dtypes.int64, name: str | None = None
) -> Tensor:
    """``stateless_multinomial`` with TF2's argument name ``dtype``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.random.stateless_categorical([[0.0, -1e9]], 2, seed=[1, 2], dtype=tf.int32)))
        [[0 0]]
    """
    with name_scope(name, "stateless_categorical", [logits, seed]):
        return _multinomial(logits, num_samples, seed, dtype)


def stateless_parameterized_truncated_normal(
    shape: Any,
    seed: Any,
    means: Any = 0.0,
    stddevs: Any = 1.0,
    minvals: Any = -2.0,
    maxvals: Any = 2.0,
    name: str | None = None,
) -> Tensor:
    """Deterministic normal values cut to ``[minvals, maxvals]``, the four parameters broadcasting to ``shape``.

    Values come from an inverse-CDF sampler on the Philox stream (exactly the truncated distribution, but not TF's
    numbers: see the module docstring).

    Raises:
        InvalidArgumentError: (when run) a ``stddevs <= 0``, ``minvals >= maxvals`` or both bounds infinite.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     y = sess.run(tf.random.stateless_parameterized_truncated_normal(
        ...         [1000, 2], seed=[7, 17], means=[0.0, 5.0], minvals=[-1.0, 5.0], maxvals=[1.0, 9.0]))
        >>> bool(y[:, 0].min() >= -1 and y[:, 0].max() <= 1 and y[:, 1].min() >= 5)
        True
    """
    with name_scope(name, "stateless_parameterized_truncated_normal", [shape, means, stddevs, minvals, maxvals]):
        shape_t = _shape_tensor(shape)
        means_t = convert_to_tensor(means, name="means")
        check_dtype(means_t, (dtypes.float16, dtypes.float32, dtypes.float64), "StatelessParameterizedTruncatedNormal")
        params = [means_t] + [
            convert_to_tensor(v, dtype=means_t.dtype, name=n)
            for v, n in ((stddevs, "stddevs"), (minvals, "minvals"), (maxvals, "maxvals"))
        ]
        seed_t = seed_tensor(seed)
        attrs = {"S": shape_t.dtype, "Tseed": seed_t.dtype, "dtype": means_t.dtype}
        op_type = "StatelessParameterizedTruncatedNormal"
        return make_op(op_type, [shape_t, seed_t, *params], attrs, name=op_type).outputs[0]


def split(seed: Any, num: Any = 2, alg: Any = "auto_select") -> Tensor:
    """``num`` new seeds ``[num, 2]`` from ``seed`` (full-range stateless integers of the seed's dtype), TF's values.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.random.split([1, 2], num=3)))
        [[1105988140 1738052849]
         [-335576002  370444179]
         [  10670227 -246211131]]
    """
    seed_t = convert_to_tensor(seed)
    return stateless_random_uniform([num, 2], seed_t, minval=None, maxval=None, dtype=seed_t.dtype, alg=alg)


def fold_in(seed: Any, data: Any, alg: Any = "auto_select") -> Tensor:
    """A new seed ``[stateless_int(seed), data]`` mixing ``data`` (an int scalar) into ``seed``, as TF's.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.random.fold_in([1, 2], 3)))
        [1105988140          3]
    """
    data_t = convert_to_tensor(data)
    seed1 = stateless_random_uniform([], seed, minval=None, maxval=None, dtype=data_t.dtype, alg=alg)
    return array_ops.stack([seed1, data_t])


def create_rng_state(seed: Any, alg: Any) -> Tensor:
    """TF's RNG state vector for ``seed`` (an int or 1-D int array): int64, 3 words for Philox (``auto_select``
    too), 2 for ThreeFry; an int is split into 64-bit words, low first, and the vector is left-padded with zeros.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.random.create_rng_state(1234, "philox")))
        [1234    0    0]
    """
    size = 2 if _alg_value(alg) == Algorithm.THREEFRY.value else 3
    if isinstance(seed, int):
        words = []
        for _ in range(size):
            words.append(seed & 0xFFFFFFFFFFFFFFFF)
            seed >>= 64
        seed = words
    if isinstance(seed, list | tuple | np.ndarray):
        flat = [int(v) for v in np.asarray(seed, dtype=object).reshape(-1)]
        flat = [v - 2**64 if v > 2**63 - 1 else v for v in flat][:size]
        return convert_to_tensor(np.array([0] * (size - len(flat)) + flat, np.int64))
    t = math_ops.cast(seed, dtypes.int64)
    t = array_ops.reshape(t, [-1])[0:size]
    padding = math_ops.maximum(size - array_ops.shape(t)[0], 0)
    out = array_ops.concat([array_ops.zeros(array_ops.reshape(padding, [1]), dtypes.int64), t], axis=0)
    out.set_shape([size])
    return out
