"""TF's counter-based random numbers: Philox4x32-10 and the conversions TF's random kernels apply to its output.

TF's stateless random ops (``tf.random.stateless_*``) are a pure function of their seed: the seed pair is
scrambled into a Philox key and counter (``GenerateKey``: one Philox call on the seed with a fixed key), and output
element ``j`` of a fixed-count distribution is read from the Philox block at counter ``+ j // per_block``. This
module computes those blocks with torch integer ops on the kernel's device (64-bit integers holding the 32-bit
words: products of two words wrap in two's complement, which keeps their low 64 bits exact), so the values are
TF's bit for bit where TF's own arithmetic is exact (uniforms, integers), and within an ulp or two of float math
(``log``, ``sin``) where it is not (normals).

The conversions are TF's ``random_distributions.h``: a float32 uniform keeps 23 random mantissa bits of one word
(``[1, 2) - 1``), a float64 one 52 bits of two words, half and bfloat16 the low 10 or 7 bits; normals come from
Box-Muller on pairs of uniforms (``u1`` clamped to ``1e-7``).

Only kernels import this module (it uses torch).

Example:
    >>> key, counter = key_counter_from_seed(1, 2)
    >>> [round(float(v), 6) for v in uniform(blocks(key, counter, 2)[:, :].reshape(-1)[:4], "float32")]
    [0.84406, 0.192045, 0.996223, 0.160387]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dtf_notebook.lazy_modules import torch

__all__ = [
    "MASK32",
    "blocks",
    "box_muller",
    "key_counter_from_seed",
    "philox",
    "philox_block",
    "skip",
    "uniform",
]

MASK32 = 0xFFFFFFFF
_M0, _M1 = 0xD2511F53, 0xCD9E8D57  # Philox4x32 multipliers
_W0, _W1 = 0x9E3779B9, 0xBB67AE85  # Weyl key increments
_SEED_KEY = (0x3EC8F720, 0x02461E29)  # the fixed key TF scrambles a stateless seed with


def philox_block(counter: Sequence[int], key: Sequence[int]) -> tuple[int, int, int, int]:
    """One Philox4x32-10 block on Python ints (the seed scramble, and short sequential samplers, on the host).

    Example:
        >>> [hex(w) for w in philox_block((0, 0, 0, 0), (0, 0))]
        ['0x6627e8d5', '0xe169c58d', '0xbc57ac4c', '0x9b00dbd8']
    """
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for _ in range(10):
        p0, p1 = _M0 * c0, _M1 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0), p1 & MASK32, ((p0 >> 32) ^ c3 ^ k1), p0 & MASK32
        k0, k1 = (k0 + _W0) & MASK32, (k1 + _W1) & MASK32
    return c0, c1, c2, c3


def key_counter_from_seed(seed0: int, seed1: int) -> tuple[tuple[int, int], tuple[int, int, int, int]]:
    """TF's ``GenerateKey``: the Philox key and counter of a stateless op's seed ``[seed0, seed1]``.

    Example:
        >>> key_counter_from_seed(0, 0)[1][:2]
        (0, 0)
    """
    s0, s1 = seed0 & (2**64 - 1), seed1 & (2**64 - 1)
    mix = philox_block((s0 & MASK32, s0 >> 32, s1 & MASK32, s1 >> 32), _SEED_KEY)
    return (mix[0], mix[1]), (0, 0, mix[2], mix[3])


def skip(counter: Sequence[Any], offsets: torch.Tensor) -> list[torch.Tensor]:
    """The 128-bit counters ``counter + offsets`` (TF's ``PhiloxRandom::Skip``) as four int64 tensors of words.

    Args:
        counter: Four 32-bit words (ints or int64 tensors broadcasting with ``offsets``).
        offsets: A non-negative int64 tensor of block counts.
    """
    lo, hi = offsets & MASK32, offsets >> 32
    c0 = counter[0] + lo
    c1 = counter[1] + hi + (c0 >> 32)
    c2 = counter[2] + (c1 >> 32)
    c3 = counter[3] + (c2 >> 32)
    return [c0 & MASK32, c1 & MASK32, c2 & MASK32, c3 & MASK32]


def philox(counter: Sequence[torch.Tensor], key: Sequence[Any]) -> torch.Tensor:
    """Philox4x32-10 blocks: ``[..., 4]`` int64 words for counters given as four int64 tensors of words.

    Example:
        >>> import torch
        >>> words = philox([torch.zeros(1, dtype=torch.int64)] * 4, (0, 0))
        >>> [hex(int(w)) for w in words[0]]
        ['0x6627e8d5', '0xe169c58d', '0xbc57ac4c', '0x9b00dbd8']
    """
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for _ in range(10):
        p0, p1 = c0 * _M0, c2 * _M1  # < 2**64: the int64 product wraps, its low 64 bits are exact
        c0, c1, c2, c3 = ((p1 >> 32) & MASK32) ^ c1 ^ k0, p1 & MASK32, ((p0 >> 32) & MASK32) ^ c3 ^ k1, p0 & MASK32
        k0, k1 = (k0 + _W0) & MASK32, (k1 + _W1) & MASK32
    return torch.stack([c0, c1, c2, c3], dim=-1)


def blocks(key: Sequence[int], counter: Sequence[int], count: int, start: int = 0, device: Any = None) -> torch.Tensor:
    """The ``count`` Philox blocks from ``counter + start`` on: ``[count, 4]`` int64 words.

    Example:
        >>> key, counter = key_counter_from_seed(1, 2)
        >>> blocks(key, counter, 3).shape
        torch.Size([3, 4])
    """
    offsets = torch.arange(start, start + count, dtype=torch.int64, device=device)
    return philox(skip(counter, offsets), key)


def uniform(words: torch.Tensor, dtype: str) -> torch.Tensor:
    """TF's uniform ``[0, 1)`` floats from 32-bit words (float64 takes the words in pairs along the last axis).

    Args:
        words: int64 tensor of 32-bit words.
        dtype: ``"float16"``, ``"bfloat16"``, ``"float32"`` or ``"float64"``.
    """
    if dtype == "float64":
        hi, lo = words[..., 0::2], words[..., 1::2]
        bits = ((hi & 0xFFFFF) << 32) | lo | (1023 << 52)
        return bits.view(torch.float64) - 1.0
    if dtype == "float32":
        return ((words & 0x7FFFFF) | (127 << 23)).to(torch.int32).view(torch.float32) - 1.0
    if dtype == "float16":
        return ((words & 0x3FF) | (15 << 10)).to(torch.int16).view(torch.float16) - 1.0
    if dtype == "bfloat16":
        return ((words & 0x7F) | (127 << 7)).to(torch.int16).view(torch.bfloat16) - 1.0
    raise ValueError(f"no uniform conversion to {dtype}")


def box_muller(words: torch.Tensor, double: bool) -> torch.Tensor:
    """TF's Box-Muller normals from words along the last axis: float32 takes words in pairs (two normals per pair),
    float64 in fours (two normals per four words). The result has as many values as pairs (float32) or half as many
    as pairs (float64), in TF's order."""
    if double:
        u = uniform(words, "float64")  # (x0, x1) -> u1, (x2, x3) -> u2
        u1, v = torch.clamp(u[..., 0::2], min=1e-7), 2 * torch.pi * u[..., 1::2]
        r = torch.sqrt(-2.0 * torch.log(u1))
    else:
        u1 = torch.clamp(uniform(words[..., 0::2], "float32"), min=1e-7)
        # TF: ``2.0f * M_PI * u`` is a double product rounded to float; log, sqrt, sin and cos run in float.
        v = (2 * torch.pi * uniform(words[..., 1::2], "float32").double()).float()
        r = torch.sqrt(-2.0 * torch.log(u1))
    return torch.stack([torch.sin(v) * r, torch.cos(v) * r], dim=-1).flatten(-2)
