"""Gamma, Poisson and binomial sampling: ``tf.random_gamma``/``tf.random.gamma``, ``tf.random_poisson``/
``tf.random.poisson`` and the stateless ``tf.random.stateless_gamma``, ``stateless_poisson``, ``stateless_binomial``.

All run TF's samplers on Philox streams (:mod:`.philox_samplers`): Marsaglia-Tsang for gamma, Knuth's and Hormann's
methods for Poisson, inversion and BTRS for binomial, one stream per output as TF's kernels read them. The stateless
ops therefore draw TF's values (bar a last-bit difference of ``log``/``lgamma`` flipping a rare acceptance test).
The stateful ops (``RandomGamma``, ``RandomPoissonV2``) take each run's Philox key and counter from the node's
seeded generator, like the other stateful random ops here: a seeded graph repeats its sequence in a new session,
an unseeded one differs, and the values are not TF's.

Gamma samples are differentiable in ``alpha`` (and ``beta``) by implicit differentiation, as in TF (Figurnov et
al., 2018): ``d sample / d alpha = -(d igamma(alpha, x) / d alpha) / density(x)``.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(tf.random.stateless_poisson([2, 2], seed=[12, 34], lam=[5.0, 15.0])))
    [[ 8 14]
     [ 8  8]]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry, random_seed
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import control_dependencies, name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.array.array_extras import broadcast_dynamic_shape
from dtf_notebook.ops.math.special import lgamma
from dtf_notebook.ops.op_helpers import check_dtype, make_op, shape_from_tensor
from dtf_notebook.ops.random_ops import _dims_reader, _shape_tensor
from dtf_notebook.ops.stateless_random_ops import key_counter, seed_tensor

__all__ = [
    "random_gamma",
    "random_poisson",
    "random_poisson_v2",
    "stateless_random_binomial",
    "stateless_random_gamma",
    "stateless_random_poisson",
]

_GAMMA_DTYPES = (dtypes.float16, dtypes.float32, dtypes.float64)
_POISSON_RATES = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64)
_TINY = {"float16": 6.103515625e-05, "bfloat16": 1.1754943508222875e-38, "float32": 1.1754943508222875e-38}
_TINY["float64"] = 2.2250738585072014e-308


# ---- kernels ------------------------------------------------------------------------------------------------------
def _stateful_key_counter(op: Any, ctx: Any) -> Callable[[], tuple[tuple[int, ...], tuple[int, ...]]]:
    """Each run's Philox key and counter, drawn from the node's generator (seeded by the op's seeds)."""
    gen, device = ctx.generator(op.get_attr("seed"), op.get_attr("seed2")), ctx.device

    def draw() -> tuple[tuple[int, ...], tuple[int, ...]]:
        words = torch.randint(0, 2**32, (6,), generator=gen, dtype=torch.int64, device=device).tolist()
        return tuple(words[:2]), tuple(words[2:])

    return draw


def _param_count(op: Any, what: str, param: Any) -> int:
    count = int(param.numel())
    if count == 0:
        raise errors.InvalidArgumentError(None, op, f"Input {what} should have non-zero element count, got: 0")
    return count


def _ends_with(op: Any, size: tuple[int, ...], tail: tuple[int, ...]) -> None:
    if len(tail) > len(size) or tuple(size[len(size) - len(tail) :]) != tuple(tail):
        raise errors.InvalidArgumentError(None, op, "Shape passed in must end with broadcasted shape.")


def _gamma_kernel(stateless: bool) -> Callable[[Any, Any], Callable[..., Any]]:
    def factory(op: Any, ctx: Any) -> Callable[..., Any]:
        from dtf_notebook.ops import philox_samplers

        dims = _dims_reader(op)
        draw = None if stateless else _stateful_key_counter(op, ctx)

        def sample(size: tuple[int, ...], alpha: Any, key: Any, counter: Any) -> torch.Tensor:
            n = int(np.prod(size))
            if n == 0:
                return torch.zeros(size, dtype=alpha.dtype, device=alpha.device)
            count = _param_count(op, "alpha", alpha)
            values = philox_samplers.gamma(key, counter, alpha, n // count)
            return values.reshape(size).to(alpha.dtype)

        if stateless:

            def run(shape: Any, seed: Any, alpha: Any) -> torch.Tensor:
                size = dims(shape)
                _ends_with(op, size, tuple(alpha.shape))
                return sample(size, alpha, *key_counter(op, seed))

        else:

            def run(shape: Any, alpha: Any) -> torch.Tensor:
                size = dims(shape) + tuple(alpha.shape)
                if int(np.prod(size)) == 0:
                    return torch.zeros(size, dtype=alpha.dtype, device=alpha.device)
                return sample(size, alpha, *draw())

        return run

    return factory


def _poisson_kernel(stateless: bool) -> Callable[[Any, Any], Callable[..., Any]]:
    def factory(op: Any, ctx: Any) -> Callable[..., Any]:
        from dtf_notebook.ops import philox_samplers

        dims, out_dtype = _dims_reader(op), getattr(torch, op.get_attr("dtype").name)
        draw = None if stateless else _stateful_key_counter(op, ctx)

        def sample(size: tuple[int, ...], rate: Any, key: Any, counter: Any) -> torch.Tensor:
            n = int(np.prod(size))
            if n == 0:
                return torch.zeros(size, dtype=out_dtype, device=rate.device)
            count = _param_count(op, "rate", rate)
            values = philox_samplers.poisson(key, counter, rate, n // count)
            return values.reshape(size).to(out_dtype)

        if stateless:

            def run(shape: Any, seed: Any, lam: Any) -> torch.Tensor:
                size = dims(shape)
                _ends_with(op, size, tuple(lam.shape))
                return sample(size, lam, *key_counter(op, seed))

        else:

            def run(shape: Any, rate: Any) -> torch.Tensor:
                size = dims(shape) + tuple(rate.shape)
                if int(np.prod(size)) == 0:
                    return torch.zeros(size, dtype=out_dtype, device=rate.device)
                return sample(size, rate, *draw())

        return run

    return factory


def _binomial_kernel(op: Any, ctx: Any) -> Callable[..., Any]:
    from dtf_notebook.ops import philox_samplers

    dims, out_dtype = _dims_reader(op), getattr(torch, op.get_attr("dtype").name)

    def run(shape: Any, seed: Any, counts: Any, probs: Any) -> torch.Tensor:
        size = dims(shape)
        try:
            batch = tuple(torch.broadcast_shapes(counts.shape, probs.shape))
        except RuntimeError:
            raise errors.InvalidArgumentError(
                None,
                op,
                f"counts and probs must have compatible batch dimensions: {list(counts.shape)} vs. {list(probs.shape)}",
            ) from None
        _ends_with(op, size, batch)
        n = int(np.prod(size))
        if n == 0:
            return torch.zeros(size, dtype=out_dtype, device=counts.device)
        key, counter = key_counter(op, seed)
        values = philox_samplers.binomial(key, counter, counts, probs, n // max(int(np.prod(batch)), 1))
        return values.reshape(size).to(out_dtype)

    return run


# ---- inference ----------------------------------------------------------------------------------------------------
def _samples_then_params_infer(dtype_of: Callable[[Any], dtypes.DType]) -> Callable[[Any], list]:
    """Stateful ops: ``shape`` followed by the parameter's shape."""

    def infer(op: Any) -> list[tuple[dtypes.DType, TensorShape]]:
        samples = shape_from_tensor(op.inputs[0])
        return [(dtype_of(op), samples.concatenate(op.inputs[1].shape))]

    return infer


def _shape_infer(dtype_of: Callable[[Any], dtypes.DType]) -> Callable[[Any], list]:
    def infer(op: Any) -> list[tuple[dtypes.DType, TensorShape]]:
        return [(dtype_of(op), shape_from_tensor(op.inputs[0]))]

    return infer


# ---- gradients ----------------------------------------------------------------------------------------------------
def _gamma_sample_grad(alpha: Tensor, sample: Tensor) -> Tensor:
    """``d sample / d alpha`` for Gamma(alpha, 1) samples (TF's ``RandomGammaGrad``), from the derivative of the
    regularized incomplete gamma function in ``alpha`` over the density."""
    partial_igamma = make_op("IgammaGradA", [alpha, sample], name="IgammaGradA").outputs[0]
    log_density = math_ops.subtract(
        math_ops.subtract(math_ops.multiply(math_ops.subtract(alpha, 1.0), math_ops.log(sample)), sample),
        lgamma(alpha),
    )
    return math_ops.negative(math_ops.multiply(partial_igamma, math_ops.exp(math_ops.negative(log_density))))


def _leading_units(x: Tensor, count: Tensor) -> Tensor:
    ones = array_ops.ones(array_ops.reshape(count, [1]), dtype=dtypes.int32)
    return array_ops.reshape(x, array_ops.concat([ones, array_ops.shape(x)], 0))


def _gamma_grad_alpha(sample_dims: Tensor, alpha: Tensor, sample: Tensor, grad: Tensor) -> Tensor:
    partial_a = _gamma_sample_grad(_leading_units(alpha, sample_dims), sample)
    return math_ops.reduce_sum(math_ops.multiply(grad, partial_a), axis=math_ops.range(sample_dims))


def _random_gamma_grad(op: Any, grad: Any) -> list[Any]:
    shape, alpha = op.inputs
    with control_dependencies([grad]):
        return [None, _gamma_grad_alpha(array_ops.shape(shape)[0], alpha, op.outputs[0], grad)]


def _stateless_gamma_grad(op: Any, grad: Any) -> list[Any]:
    shape, _, alpha = op.inputs
    with control_dependencies([grad]):
        dims = math_ops.subtract(array_ops.shape(shape)[0], array_ops.rank(alpha))
        return [None, None, _gamma_grad_alpha(dims, alpha, op.outputs[0], grad)]


_NOT_DIFF = op_registry.NOT_DIFFERENTIABLE
op_registry.register_op(
    "RandomGamma",
    infer=_samples_then_params_infer(lambda op: op.inputs[1].dtype),
    kernel=_gamma_kernel(stateless=False),
    grad=_random_gamma_grad,
    stateful=True,
)
op_registry.register_op(
    "RandomPoissonV2",
    infer=_samples_then_params_infer(lambda op: op.get_attr("dtype")),
    kernel=_poisson_kernel(stateless=False),
    grad=_NOT_DIFF,
    stateful=True,
)
op_registry.register_op(
    "StatelessRandomGammaV2",
    infer=_shape_infer(lambda op: op.inputs[2].dtype),
    kernel=_gamma_kernel(stateless=True),
    grad=_stateless_gamma_grad,
)
op_registry.register_op(
    "StatelessRandomPoisson",
    infer=_shape_infer(lambda op: op.get_attr("dtype")),
    kernel=_poisson_kernel(stateless=True),
    grad=_NOT_DIFF,
)
op_registry.register_op(
    "StatelessRandomBinomial",
    infer=_shape_infer(lambda op: op.get_attr("dtype")),
    kernel=_binomial_kernel,
    grad=_NOT_DIFF,
)


# ---- builders -----------------------------------------------------------------------------------------------------
def _gamma_params(alpha: Any, beta: Any, dtype: Any) -> tuple[Tensor, Tensor, Tensor]:
    dtype = dtypes.as_dtype(dtype)
    alpha_t = convert_to_tensor(alpha, name="alpha", dtype=dtype)
    beta_t = convert_to_tensor(beta if beta is not None else 1, name="beta", dtype=dtype)
    check_dtype(alpha_t, _GAMMA_DTYPES, "RandomGamma", "alpha")
    broadcast = broadcast_dynamic_shape(array_ops.shape(alpha_t), array_ops.shape(beta_t))
    return alpha_t, beta_t, array_ops.broadcast_to(alpha_t, broadcast)


def random_gamma(
    shape: Any,
    alpha: Any,
    beta: Any = None,
    dtype: Any = dtypes.float32,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    """Draws ``shape`` samples from each Gamma(alpha, beta) distribution: ``[*shape, *broadcast(alpha, beta)]``.

    ``alpha`` is the concentration and ``beta`` the inverse scale (default 1). The samples are differentiable in
    both (implicit reparameterization); a zero draw is raised to the dtype's smallest normal number, as in TF.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     s = tf.random_gamma([4000], [0.5, 4.0], seed=1)
        ...     print(s.shape.as_list(), abs(sess.run(tf.reduce_mean(s, 0)) - [0.5, 4.0]).max() < 0.2)
        [4000, 2] True
    """
    with name_scope(name, "random_gamma", [shape, alpha, beta]):
        shape_t = convert_to_tensor(shape, name="shape", dtype=dtypes.int32)
        alpha_t, beta_t, alpha_b = _gamma_params(alpha, beta, dtype)
        seed1, seed2 = random_seed.get_seed(seed)
        attrs = {"seed": seed1 or 0, "seed2": seed2 or 0, "S": shape_t.dtype, "T": alpha_t.dtype}
        rnd = make_op("RandomGamma", [shape_t, alpha_b], attrs, name="RandomGamma").outputs[0]
        return math_ops.maximum(_TINY[alpha_t.dtype.name], math_ops.realdiv(rnd, beta_t))


def random_poisson_v2(
    shape: Any, lam: Any, dtype: Any = dtypes.float32, seed: int | None = None, name: str | None = None
) -> Tensor:
    """Draws ``shape`` samples from each Poisson(lam) distribution: ``[*shape, *lam.shape]`` of ``dtype``
    (TF2's argument order; ``random_poisson`` is TF1's).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     s = random_poisson_v2([2000], [1.0, 30.0], dtype=tf.int32, seed=3)
        ...     print(s.dtype.name, sess.run(tf.reduce_mean(tf.cast(s, tf.float32), 0)).round())
        int32 [ 1. 30.]
    """
    with name_scope(name, "random_poisson", [lam, shape]):
        shape_t = convert_to_tensor(shape, name="shape", dtype=dtypes.int32)
        lam_t = convert_to_tensor(lam, name="rate")
        check_dtype(lam_t, _POISSON_RATES, "RandomPoissonV2", "rate")
        out_dtype = dtypes.as_dtype(dtype)
        _check_dtype_attr(out_dtype, _POISSON_RATES, "dtype")
        seed1, seed2 = random_seed.get_seed(seed)
        attrs = {"seed": seed1 or 0, "seed2": seed2 or 0, "S": shape_t.dtype, "R": lam_t.dtype, "dtype": out_dtype}
        return make_op("RandomPoissonV2", [shape_t, lam_t], attrs, name="RandomPoissonV2").outputs[0]


def random_poisson(
    lam: Any, shape: Any, dtype: Any = dtypes.float32, seed: int | None = None, name: str | None = None
) -> Tensor:
    """TF1's ``tf.random_poisson(lam, shape, ...)``: :func:`random_poisson_v2` with ``lam`` first.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     tf.random_poisson([0.5, 1.5], [10]).shape.as_list()
        [10, 2]
    """
    return random_poisson_v2(shape, lam, dtype, seed, name)


def _check_dtype_attr(dtype: dtypes.DType, allowed: tuple[dtypes.DType, ...], param: str) -> None:
    if dtype not in allowed:
        names = ", ".join(d.name for d in allowed)
        raise TypeError(
            f"Value passed to parameter '{param}' has DataType {dtype.name} not in list of allowed values: {names}"
        )


def stateless_random_gamma(
    shape: Any, seed: Any, alpha: Any, beta: Any = None, dtype: Any = dtypes.float32, name: str | None = None
) -> Tensor:
    """Deterministic Gamma(alpha, beta) samples of ``shape``, which must end with ``broadcast(alpha, beta)``'s shape
    (TF's values; differentiable in ``alpha`` and ``beta``).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.random.stateless_gamma([2, 2], seed=[12, 34], alpha=[0.5, 1.5])).round(4))
        [[0.1942 0.4938]
         [0.1042 3.5704]]
    """
    with name_scope(name, "stateless_random_gamma", [shape, seed, alpha, beta]):
        shape_t = _shape_tensor(shape)
        alpha_t, beta_t, alpha_b = _gamma_params(alpha, beta, dtype)
        seed_t = seed_tensor(seed)
        attrs = {"dtype": alpha_t.dtype, "T": shape_t.dtype, "Tseed": seed_t.dtype}
        rnd = make_op("StatelessRandomGammaV2", [shape_t, seed_t, alpha_b], attrs, name="StatelessRandomGammaV2")
        return math_ops.maximum(_TINY[alpha_t.dtype.name], math_ops.realdiv(rnd.outputs[0], beta_t))


def stateless_random_poisson(
    shape: Any, seed: Any, lam: Any, dtype: Any = dtypes.int32, name: str | None = None
) -> Tensor:
    """Deterministic Poisson(lam) samples of ``shape``, which must end with ``lam``'s shape (TF's values).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.random.stateless_poisson([3], seed=[1, 2], lam=100.0, dtype=tf.float32)))
        [112. 107. 115.]
    """
    with name_scope(name, "stateless_random_poisson", [shape, seed, lam]):
        shape_t = _shape_tensor(shape)
        seed_t = seed_tensor(seed)
        lam_t = convert_to_tensor(lam, name="lam")
        check_dtype(lam_t, _POISSON_RATES, "StatelessRandomPoisson", "lam")
        out_dtype = dtypes.as_dtype(dtype)
        _check_dtype_attr(out_dtype, _POISSON_RATES, "dtype")
        attrs = {"Rtype": lam_t.dtype, "dtype": out_dtype, "T": shape_t.dtype, "Tseed": seed_t.dtype}
        op = make_op("StatelessRandomPoisson", [shape_t, seed_t, lam_t], attrs, name="StatelessRandomPoisson")
        return op.outputs[0]


def stateless_random_binomial(
    shape: Any, seed: Any, counts: Any, probs: Any, output_dtype: Any = dtypes.int32, name: str | None = None
) -> Tensor:
    """Deterministic Binomial(counts, probs) samples of ``shape``, which must end with ``broadcast(counts, probs)``'s
    shape (TF's values).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.random.stateless_binomial([2], seed=[123, 456], counts=[10.0, 20.0], probs=[0.8])))
        [ 5 16]
    """
    with name_scope(name, "stateless_random_binomial", [shape, seed, counts, probs]):
        shape_t = _shape_tensor(shape)
        probs_t = convert_to_tensor(probs, name="probs", preferred_dtype=dtypes.float32)
        counts_t = convert_to_tensor(counts, name="counts", preferred_dtype=probs_t.dtype)
        seed_t = seed_tensor(seed)
        check_dtype(counts_t, _POISSON_RATES, "StatelessRandomBinomial", "counts")
        if probs_t.dtype is not counts_t.dtype:
            raise TypeError(
                f"Input 'probs' of 'StatelessRandomBinomial' Op has type {probs_t.dtype.name} that does not match "
                f"type {counts_t.dtype.name} of argument 'counts'."
            )
        out_dtype = dtypes.as_dtype(output_dtype)
        _check_dtype_attr(out_dtype, _POISSON_RATES, "dtype")
        attrs = {"S": shape_t.dtype, "Tseed": seed_t.dtype, "T": counts_t.dtype, "dtype": out_dtype}
        op = make_op(
            "StatelessRandomBinomial", [shape_t, seed_t, counts_t, probs_t], attrs, name="StatelessRandomBinomial"
        )
        return op.outputs[0]
