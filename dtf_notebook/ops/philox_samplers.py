"""TF's random samplers on Philox streams (kernel side): the fills of its stateless random ops, vectorised in torch.

Each function takes the Philox ``key`` and ``counter`` of a seed (:func:`philox.key_counter_from_seed`) and returns
what TF's CPU kernel writes, element for element:

* fixed-count distributions (uniform, normal, integers): element ``j`` from block ``j // per_block``;
* the truncated normal: groups of 4 (2 for float64) outputs, group ``g`` reading its own stream from block
  ``g * 256`` (``g * 128``) on, redrawing normals beyond two standard deviations;
* gamma, Poisson and binomial: one stream per output (``256`` blocks apart; ``42`` for small binomial means), read
  as TF's ``UNIFORM`` macro and ``SampleBuffer`` read them (the last value of a block first), the rejection loops
  run for all outputs at once with masks;
* the multinomial: one stream for the whole batch, rows one after the other (TF's result when its CPU kernel runs
  the batch as one shard, which it does unless rows times samples is large; a sharded run restarts each shard at
  its own offset, and those values depend on the machine's thread count).

Comparisons and products follow TF's precision (float64 for gamma, Poisson and binomial), so the integer samplers
match TF's draws except where a ``log`` or ``lgamma`` differing in the last bit flips an acceptance test.

Example:
    >>> from dtf_notebook.ops import philox
    >>> key, counter = philox.key_counter_from_seed(1, 2)
    >>> [round(float(v), 6) for v in fixed("uniform", key, counter, 3, "float32", None)]
    [0.84406, 0.192045, 0.996223]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import philox

__all__ = ["binomial", "fixed", "gamma", "multinomial", "poisson", "truncated_normal", "uniform_int"]

_HALF = ("float16", "bfloat16")


def _blocks_for(n: int, per_block: int) -> int:
    return -(-n // per_block)


def fixed(kind: str, key: Sequence[int], counter: Sequence[int], n: int, dtype: str, device: Any) -> torch.Tensor:
    """``n`` uniform (``kind="uniform"``), normal (``"normal"``) or full-range integer (``"bits"``) values of
    ``dtype`` (a torch dtype name), as TF's ``UniformDistribution``, ``NormalDistribution`` and
    ``UniformFullIntDistribution`` fill them.

    Example:
        >>> from dtf_notebook.ops import philox
        >>> key, counter = philox.key_counter_from_seed(7, 17)
        >>> fixed("normal", key, counter, 5, "float64", None).shape
        torch.Size([5])
    """
    wide = dtype in ("float64", "int64")
    per_block = 2 if wide else 4
    words = philox.blocks(key, counter, _blocks_for(n, per_block), device=device)
    if kind == "uniform":
        values = philox.uniform(words, dtype)
    elif kind == "normal":
        values = philox.box_muller(words, double=dtype == "float64")
        values = values.to(getattr(torch, dtype)) if dtype in _HALF else values
    elif kind == "bits":
        if dtype == "int64":
            values = words[:, 0::2] | (words[:, 1::2] << 32)  # wraps to int64 as TF's uint64 -> int64
        else:
            values = words.to(torch.int32)
    else:
        raise ValueError(f"unknown distribution {kind!r}")
    return values.reshape(-1)[:n]


def uniform_int(
    key: Sequence[int], counter: Sequence[int], n: int, lo: int, hi: int, dtype: str, device: Any
) -> torch.Tensor:
    """``n`` integers in ``[lo, hi)`` as TF's ``UniformDistribution<int32/int64>``: ``lo + bits % (hi - lo)`` with
    the range unsigned (32 bits from one word, 64 from two).

    Example:
        >>> from dtf_notebook.ops import philox
        >>> key, counter = philox.key_counter_from_seed(3, 4)
        >>> bool(((uniform_int(key, counter, 50, -5, 5, "int32", None) + 5) // 10 == 0).all())
        True
    """
    if dtype == "int32":
        words = philox.blocks(key, counter, _blocks_for(n, 4), device=device).reshape(-1)[:n]
        span = (hi - lo) & philox.MASK32
        return (lo + words % span).to(torch.int32)
    # 64-bit: the unsigned remainder needs uint64 arithmetic, which numpy has.
    words = philox.blocks(key, counter, _blocks_for(n, 2), device=device).cpu().numpy().astype(np.uint64)
    bits = (words[:, 0::2] | (words[:, 1::2] << np.uint64(32))).reshape(-1)[:n]
    span = np.uint64((hi - lo) % 2**64)
    values = (np.uint64(lo % 2**64) + bits % span).view(np.int64)  # lo + r < hi: exact after the wrap
    return torch.from_numpy(values).to(device)


def truncated_normal(key: Sequence[int], counter: Sequence[int], n: int, dtype: str, device: Any) -> torch.Tensor:
    """``n`` standard normals within ``(-2, 2)`` as TF's ``TruncatedNormalDistribution`` fills them (see the module
    docstring).

    Example:
        >>> from dtf_notebook.ops import philox
        >>> key, counter = philox.key_counter_from_seed(1, 2)
        >>> bool((truncated_normal(key, counter, 100, "float32", None).abs() < 2).all())
        True
    """
    double = dtype == "float64"
    per_group = 2 if double else 4
    skip_per_group = per_group * 256 // 4
    groups = _blocks_for(n, per_group)
    work = torch.float64 if double else torch.float32
    out = torch.zeros(groups, per_group, dtype=work, device=device)
    count = torch.zeros(groups, dtype=torch.int64, device=device)
    pending = torch.arange(groups, dtype=torch.int64, device=device)
    done, chunk = 0, 2  # blocks read so far by every pending group, blocks read per round
    while pending.numel():
        offsets = pending[:, None] * skip_per_group + done + torch.arange(chunk, device=device)
        words = philox.philox(philox.skip(counter, offsets), key).reshape(pending.numel(), -1)
        candidates = philox.box_muller(words, double)  # in TF's order: each pair's two normals
        accept = candidates.abs() < 2.0
        rank = count[pending, None] + torch.cumsum(accept, dim=1) - 1
        keep = accept & (rank < per_group)
        rows = pending[:, None].expand_as(rank)
        out[rows[keep], rank[keep]] = candidates[keep]
        count[pending] += accept.sum(dim=1)
        pending = pending[count[pending] < per_group]
        done += chunk
        chunk *= 2
    values = out.reshape(-1)[:n]
    return values.to(getattr(torch, dtype)) if dtype in _HALF else values


def multinomial(key: Sequence[int], counter: Sequence[int], logits: torch.Tensor, num_samples: int) -> torch.Tensor:
    """Class indices ``[batch, num_samples]`` as TF's CPU ``Multinomial`` kernel draws them in one shard: the rows'
    unnormalised CDFs in float64 over finite logits, one ``RandDouble`` per sample from a single stream.

    Example:
        >>> import torch
        >>> from dtf_notebook.ops import philox
        >>> key, counter = philox.key_counter_from_seed(7, 17)
        >>> multinomial(key, counter, torch.tensor([[-1e9, 0.0]]), 3).tolist()
        [[1, 1, 1]]
    """
    batch, classes = logits.shape
    x = logits.double()
    finite = torch.isfinite(x)
    lowest = torch.finfo(logits.dtype).min
    row_max = torch.where(finite, x, torch.full_like(x, -math.inf)).amax(dim=1, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.full_like(row_max, lowest))
    cdf = torch.cumsum(torch.where(finite, torch.exp(x - row_max), torch.zeros_like(x)), dim=1)
    draws = batch * num_samples
    words = philox.blocks(key, counter, _blocks_for(2 * draws, 4), device=logits.device).reshape(-1)[: 2 * draws]
    u = philox.uniform(words, "float64").reshape(batch, num_samples)
    to_find = u * cdf[:, -1:]
    return torch.searchsorted(cdf.contiguous(), to_find.contiguous(), right=True)


# ---- one stream per output -----------------------------------------------------------------------------------------
class _Streams:
    """Per-output Philox streams: output ``i`` reads blocks ``counter + first[i]``, ``+ first[i] + 1``, ..."""

    def __init__(self, key: Sequence[int], counter: Sequence[int], first: torch.Tensor) -> None:
        self.key, self.counter, self.next = key, counter, first.clone()

    def draw(self, idx: torch.Tensor) -> torch.Tensor:
        words = philox.philox(philox.skip(self.counter, self.next[idx]), self.key)
        self.next[idx] += 1
        return words


class _Buffer:
    """TF's ``UNIFORM`` macro and ``SampleBuffer``: one block's values, handed out from the last to the first."""

    def __init__(self, streams: _Streams, convert: Callable[[torch.Tensor], torch.Tensor], width: int) -> None:
        n, device = streams.next.numel(), streams.next.device
        self.streams, self.convert, self.width = streams, convert, width
        self.values = torch.zeros(n, width, dtype=torch.float64, device=device)
        self.left = torch.zeros(n, dtype=torch.int64, device=device)

    def take(self, idx: torch.Tensor) -> torch.Tensor:
        empty = idx[self.left[idx] == 0]
        if empty.numel():
            self.values[empty] = self.convert(self.streams.draw(empty)).to(self.values.dtype)
            self.left[empty] = self.width
        self.left[idx] -= 1
        return self.values[idx, self.left[idx]]


def _uniform_buffer(streams: _Streams, compute: str) -> _Buffer:
    width = 2 if compute == "float64" else 4
    return _Buffer(streams, lambda words: philox.uniform(words, compute), width)


def _stream_order(num_params: int, per_param: int, device: Any) -> torch.Tensor:
    """For each output position ``s * num_params + p`` (TF's layout), its stream index ``p * per_param + s``."""
    s = torch.arange(per_param, dtype=torch.int64, device=device)[:, None]
    p = torch.arange(num_params, dtype=torch.int64, device=device)[None, :]
    return (p * per_param + s).reshape(-1)


def gamma(key: Sequence[int], counter: Sequence[int], alpha: torch.Tensor, per_alpha: int) -> torch.Tensor:
    """Gamma(alpha, 1) samples ``[per_alpha, *alpha.shape]`` as TF's ``StatelessRandomGamma`` draws them:
    Marsaglia-Tsang in float64 from a normal and a uniform buffer sharing each output's stream (``alpha < 1`` boosted
    by ``u ** (1 / alpha)``, ``alpha == 1`` an exponential from one uniform).

    Example:
        >>> import torch
        >>> from dtf_notebook.ops import philox
        >>> key, counter = philox.key_counter_from_seed(12, 34)
        >>> gamma(key, counter, torch.tensor([0.5, 1.0, 3.0]), 4).shape
        torch.Size([4, 3])
    """
    device, num = alpha.device, alpha.numel()
    a = alpha.reshape(-1).double().repeat(per_alpha)  # position s * num + p holds alpha[p]
    order = _stream_order(num, per_alpha, device)
    streams = _Streams(key, counter, order * 256)
    normal = _Buffer(streams, lambda words: philox.box_muller(words, double=True), 2)
    uniform = _uniform_buffer(streams, "float64")
    out = torch.zeros_like(a)
    exponential = torch.nonzero(a == 1.0).reshape(-1)
    if exponential.numel():
        out[exponential] = -torch.log1p(-uniform.take(exponential))
    below_one = a < 1
    d = torch.where(below_one, a + 2.0 / 3, a - 1.0 / 3)  # two Python floats would make a float32 tensor
    c = 1.0 / 3 / torch.sqrt(d)
    active = torch.nonzero(a != 1.0).reshape(-1)
    while active.numel():
        x = normal.take(active)
        v = 1 + c[active] * x
        positive = v > 0
        idx, x, v = active[positive], x[positive], v[positive]
        v = v * v * v
        u = uniform.take(idx)
        dd = d[idx]
        accept = (u < 1 - 0.0331 * (x * x) * (x * x)) | (torch.log(u) < 0.5 * x * x + dd * (1 - v + torch.log(v)))
        done, res = idx[accept], dd[accept] * v[accept]
        boost = below_one[done]
        if boost.any():
            b = uniform.take(done[boost])
            res[boost] = res[boost] * torch.pow(b, 1 / a[done[boost]])
        out[done] = res
        finished = torch.zeros_like(a, dtype=torch.bool)
        finished[done] = True
        active = active[~finished[active]]
    return out.reshape(per_alpha, *alpha.shape)


def poisson(key: Sequence[int], counter: Sequence[int], rate: torch.Tensor, per_rate: int) -> torch.Tensor:
    """Poisson(rate) samples ``[per_rate, *rate.shape]`` (float64 counts) as TF's ``PoissonFunctor``: Knuth's
    product of uniforms below rate 10, Hormann's transformed rejection from 10 on, in float64 whatever the rate's
    dtype (TF's compute type).

    Example:
        >>> import torch
        >>> from dtf_notebook.ops import philox
        >>> key, counter = philox.key_counter_from_seed(12, 34)
        >>> bool((poisson(key, counter, torch.tensor([0.5, 15.0]), 6) >= 0).all())
        True
    """
    device, num = rate.device, rate.numel()
    compute, ct = "float64", torch.float64
    lam = rate.reshape(-1).to(ct).repeat(per_rate)
    streams = _Streams(key, counter, _stream_order(num, per_rate, device) * 256)
    uniform = _uniform_buffer(streams, compute)
    out = torch.zeros(lam.shape, dtype=torch.float64, device=device)
    out[torch.isnan(lam)] = math.nan  # TF's loop never ends on a NaN rate
    # Knuth: count uniforms until their product drops to exp(-rate).
    small = torch.nonzero(lam < 10).reshape(-1)
    exp_neg = torch.exp(-lam)
    prod = torch.ones_like(lam)
    count = torch.zeros_like(lam)
    active = small
    while active.numel():
        prod[active] = prod[active] * uniform.take(active).to(ct)
        stop = prod[active] <= exp_neg[active]
        out[active[stop]] = count[active[stop]].double()
        count[active[~stop]] += 1
        active = active[~stop]
    # Hormann's transformed rejection.
    active = torch.nonzero(lam >= 10).reshape(-1)
    log_rate = torch.log(lam)
    b = 0.931 + 2.53 * torch.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    while active.numel():
        u = uniform.take(active).to(ct) - 0.5
        v = uniform.take(active).to(ct)
        aa, bb, rr = a[active], b[active], lam[active]
        u_shifted = 0.5 - u.abs()
        k = torch.floor((2 * aa / u_shifted + bb) * u + rr + 0.43)
        quick = (u_shifted >= 0.07) & (v <= 0.9277 - 3.6224 / (bb - 2))
        reject = ~quick & ((k < 0) | ((u_shifted < 0.013) & (v > u_shifted)))
        s = torch.log(v * inv_alpha[active] / (aa / (u_shifted * u_shifted) + bb))
        t = -rr + k * log_rate[active] - torch.lgamma(k + 1)
        accept = quick | (~reject & (s <= t))
        out[active[accept]] = k[accept].double()
        active = active[~accept]
    return out.reshape(per_rate, *rate.shape)


_STIRLING_TAIL = (
    0.0810614667953272,
    0.0413406959554092,
    0.0276779256849983,
    0.02079067210376509,
    0.0166446911898211,
    0.0138761288230707,
    0.0118967099458917,
    0.0104112652619720,
    0.00925546218271273,
    0.00833056343336287,
)


def _stirling_approx_tail(k: torch.Tensor) -> torch.Tensor:
    table = torch.tensor(_STIRLING_TAIL, dtype=torch.float64, device=k.device)
    kp1sq = (k + 1) * (k + 1)
    tail = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    small = table[k.clamp(0, 9).long()]
    return torch.where(k <= 9, small, tail)


def binomial(
    key: Sequence[int], counter: Sequence[int], counts: torch.Tensor, probs: torch.Tensor, per_batch: int
) -> torch.Tensor:
    """Binomial(counts, probs) samples ``[per_batch, *batch_shape]`` (float64) as TF's ``RandomBinomialFunctor``:
    ``counts`` and ``probs`` broadcast to the batch shape; inversion (summed geometric draws, streams 42 blocks
    apart) where the mean ``count * min(p, 1 - p)`` is below 10, Hormann's BTRS (256 apart) from 10 on; ``p > 0.5``
    samples failures.

    Example:
        >>> import torch
        >>> from dtf_notebook.ops import philox
        >>> key, counter = philox.key_counter_from_seed(123, 456)
        >>> binomial(key, counter, torch.tensor([10.0, 40.0]), torch.tensor([0.8, 0.5]), 3).shape
        torch.Size([3, 2])
    """
    device = counts.device
    counts_b, probs_b = torch.broadcast_tensors(counts, probs)
    batch_shape, num = counts_b.shape, counts_b.numel()
    t = counts_b.dtype
    count_t = counts_b.reshape(-1).repeat(per_batch)
    prob_t = probs_b.reshape(-1).repeat(per_batch)
    order = _stream_order(num, per_batch, device)
    count = count_t.double()
    out = torch.full(count.shape, math.nan, dtype=torch.float64, device=device)
    zero = (count <= 0) | (prob_t <= 0)
    out[zero] = 0.0
    full = ~zero & (prob_t >= 1)
    out[full] = count[full]
    flip = ~zero & ~full & (prob_t > 0.5)
    lower = ~zero & ~full & (prob_t <= 0.5)
    q_t = torch.where(flip, 1 - prob_t, prob_t)  # in the parameters' dtype, as TF's ``T q = T(1) - prob``
    mean = (count_t * q_t).to(t)
    q = q_t.double()
    use_btrs = (flip | lower) & (mean >= 10)
    use_inversion = (flip | lower) & (mean < 10)
    draws = torch.zeros_like(count)
    first = torch.where(use_btrs, order * 256, order * 42)
    streams = _Streams(key, counter, first)
    uniform = _uniform_buffer(streams, "float64")
    # Inversion: geometric waiting times until their sum passes count.
    active = torch.nonzero(use_inversion).reshape(-1)
    geom_sum = torch.zeros_like(count)
    log1m = torch.log1p(-q)
    while active.numel():
        u = uniform.take(active)
        geom_sum[active] += torch.ceil(torch.log(u) / log1m[active])
        stop = geom_sum[active] > count[active]
        draws[active[~stop]] += 1
        active = active[~stop]
    # BTRS.
    active = torch.nonzero(use_btrs).reshape(-1)
    n, p = count, q
    stddev = torch.sqrt(n * p * (1 - p))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    v_r = 0.92 - 4.2 / b
    r = p / (1 - p)
    alpha = (2.83 + 5.1 / b) * stddev
    m = torch.floor((n + 1) * p)
    while active.numel():
        u = uniform.take(active) - 0.5
        v = uniform.take(active)
        us = 0.5 - u.abs()
        k = torch.floor((2 * a[active] / us + b[active]) * u + c[active])
        nn, mm, rr = n[active], m[active], r[active]
        quick = (us >= 0.07) & (v <= v_r[active])
        reject = ~quick & ((k < 0) | (k > nn))
        kk = k.clamp(0, None)
        lhs = torch.log(v * alpha[active] / (a[active] / (us * us) + b[active]))
        upper = (
            (mm + 0.5) * torch.log((mm + 1) / (rr * (nn - mm + 1)))
            + (nn + 1) * torch.log((nn - mm + 1) / (nn - kk + 1))
            + (kk + 0.5) * torch.log(rr * (nn - kk + 1) / (kk + 1))
            + _stirling_approx_tail(mm)
            + _stirling_approx_tail(nn - mm)
            - _stirling_approx_tail(kk)
            - _stirling_approx_tail(nn - kk)
        )
        accept = quick | (~reject & (lhs <= upper))
        draws[active[accept]] = k[accept]
        active = active[~accept]
    sampled = use_btrs | use_inversion
    out[sampled & lower] = draws[sampled & lower]
    out[sampled & flip] = count[sampled & flip] - draws[sampled & flip]
    return out.reshape(per_batch, *batch_shape)
