"""What the image tests share: a runner for one script on either library, and test images."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def run(tf: Any, build: Callable[[Any], Any], feed: dict | None = None) -> Any:
    """The value of ``build(tf)`` (a tensor or a structure of them) in a fresh graph and session."""
    with tf.Graph().as_default():
        out = build(tf)
        with tf.Session() as sess:
            return sess.run(out, feed)


def static_shape(tf: Any, build: Callable[[Any], Any]) -> list | None:
    """The static shape of ``build(tf)`` (None when the rank is unknown)."""
    with tf.Graph().as_default():
        out = build(tf)
        return out.shape.as_list() if out.shape.ndims is not None else None


def image(*shape: int, dtype: Any = np.float32, seed: int = 0) -> np.ndarray:
    """A deterministic random image: floats in [0, 1), integers over the dtype's range."""
    rng = np.random.default_rng(seed)
    if np.issubdtype(np.dtype(dtype), np.integer):
        info = np.iinfo(dtype)
        return rng.integers(info.min, int(info.max) + 1, size=shape).astype(dtype)
    return rng.random(shape).astype(dtype)
