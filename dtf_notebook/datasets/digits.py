"""The handwritten-digits data set that ships inside scikit-learn, shaped like MNIST.

``sklearn.datasets.load_digits()`` holds 1,797 grey-scale 8x8 images of the digits 0-9 (pixel values 0..16).
They are stored inside the scikit-learn package, so nothing is downloaded. :func:`load_digits_784` turns them
into MNIST-like 784-feature rows so that the classic TF1 "784-100-10" examples run on them unchanged.

Example:
    >>> from dtf_notebook.datasets import load_digits_784, batches
    >>> x_train, y_train, x_test, y_test = load_digits_784(seed=0)
    >>> x_train.shape, x_train.dtype, y_train.dtype
    ((1438, 784), dtype('float32'), dtype('int64'))
    >>> xb, yb = next(batches(x_train, y_train, batch_size=100, seed=0))
    >>> xb.shape, yb.shape
    ((100, 784), (100,))
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Iterator

import numpy as np

__all__ = ["NUM_CLASSES", "batches", "load_digits_784"]

NUM_CLASSES = 10
_SRC = 8  # source image side
_DIGIT = 24  # side of the up-sampled digit (3x)
_OUT = 28  # side of the MNIST-like frame (digit padded by 2 on every side)


def _bilinear_matrix(n_in: int, n_out: int) -> np.ndarray:
    """Return the ``(n_out, n_in)`` matrix of 1-D bilinear interpolation with half-pixel centres.

    This is the ``align_corners=False`` convention of ``torch.nn.functional.interpolate`` and
    ``tf.image.resize``: output pixel ``i`` samples the input at ``(i + 0.5) * n_in / n_out - 0.5``,
    clamped to the image, so a constant image stays constant.

    >>> m = _bilinear_matrix(8, 24)
    >>> m.shape, bool(np.allclose(m.sum(axis=1), 1.0))
    ((24, 8), True)
    """
    pos = (np.arange(n_out, dtype=np.float64) + 0.5) * (n_in / n_out) - 0.5
    pos = np.clip(pos, 0.0, n_in - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, n_in - 1)
    frac = pos - lo
    m = np.zeros((n_out, n_in), dtype=np.float64)
    rows = np.arange(n_out)
    np.add.at(m, (rows, lo), 1.0 - frac)
    np.add.at(m, (rows, hi), frac)
    return m


def _read_digits() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's digits as ``(images (N, 8, 8), labels)``, read from the file inside its package.

    The file is read without importing scikit-learn: its import loads a second OpenMP runtime, and when that comes
    before torch's (a session imports torch on first use) the two runtimes' worker threads compete for the cores
    and the seeds' MLP trained much slower (about 400 against 850 steps/s on a 2-core machine). Where the file is
    not where scikit-learn keeps it today, ``sklearn.datasets.load_digits`` reads it.
    """
    spec = importlib.util.find_spec("sklearn")
    if spec is None:
        raise ImportError("The digits come with scikit-learn: pip install scikit-learn")
    for root in spec.submodule_search_locations or ():
        path = os.path.join(root, "datasets", "data", "digits.csv.gz")
        if os.path.exists(path):
            table = np.loadtxt(path, delimiter=",")  # 64 pixels and the label per row, as load_digits reads it
            return table[:, :-1].reshape(-1, _SRC, _SRC), table[:, -1].astype(np.int64)
    from sklearn.datasets import load_digits

    data = load_digits()
    return data.images, data.target


@functools.lru_cache(maxsize=2)
def _load_all(upsample: bool) -> tuple[np.ndarray, np.ndarray]:
    """All 1,797 examples as read-only arrays (cached: the loader is called by many tests)."""
    raw_images, raw_labels = _read_digits()
    images = np.asarray(raw_images, dtype=np.float64) / 16.0  # (N, 8, 8) in [0, 1]
    labels = np.asarray(raw_labels, dtype=np.int64)
    if upsample:
        m = _bilinear_matrix(_SRC, _DIGIT)  # (24, 8)
        up = np.einsum("ij,njk,lk->nil", m, images, m)  # separable bilinear: M @ img @ M.T
        pad = (_OUT - _DIGIT) // 2
        images = np.pad(up, ((0, 0), (pad, pad), (pad, pad)))
    x = np.clip(images.reshape(len(images), -1), 0.0, 1.0).astype(np.float32)
    x.setflags(write=False)
    labels.setflags(write=False)
    return x, labels


def load_digits_784(
    upsample: bool = True, seed: int = 0, test_fraction: float = 0.2
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Load scikit-learn's bundled digits as MNIST-like arrays, split into train and test.

    Each 8x8 image (values 0..16) is scaled to [0, 1], up-sampled 3x to 24x24 by separable bilinear
    interpolation (half-pixel centres, i.e. ``align_corners=False``), then zero-padded by 2 pixels on every
    side to 28x28 -- like MNIST, whose digits sit in a 20x20 box centred in a 28x28 frame -- and flattened
    row-major to 784 float32 features in [0, 1]. With ``upsample=False`` the rows are the 64 scaled 8x8 pixels.

    The split is stratified: within each class the examples are permuted with ``numpy.random.default_rng(seed)``
    and ``round(n_class * test_fraction)`` of them go to the test set; both sets are then shuffled. The result
    depends only on ``seed`` and ``test_fraction`` (and scikit-learn's data file), never on global random state.

    Args:
        upsample: 28x28 = 784 features if True (default), the original 8x8 = 64 features if False.
        seed: seed of the split and of the order of the examples.
        test_fraction: share of each class held out for testing, in [0, 1).

    Returns:
        ``(x_train, y_train, x_test, y_test)``: float32 arrays of shape ``(n, 784)`` (or ``(n, 64)``) and
        int64 label vectors with values 0..9. With the defaults: 1,438 training and 359 test examples.

    Example:
        >>> x_train, y_train, x_test, y_test = load_digits_784()
        >>> x_train.shape, x_test.shape, y_test.shape
        ((1438, 784), (359, 784), (359,))
        >>> float(x_train.min()) >= 0.0 and float(x_train.max()) <= 1.0
        True
        >>> sorted(set(y_train.tolist())) == list(range(10))
        True
        >>> load_digits_784(upsample=False)[0].shape
        (1438, 64)
    """
    if not 0.0 <= test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in [0, 1), got {test_fraction!r}")
    x, y = _load_all(bool(upsample))
    rng = np.random.default_rng(seed)
    train_idx: list[np.ndarray] = []
    test_idx: list[np.ndarray] = []
    for label in range(NUM_CLASSES):
        idx = rng.permutation(np.flatnonzero(y == label))
        n_test = int(round(len(idx) * test_fraction))
        test_idx.append(idx[:n_test])
        train_idx.append(idx[n_test:])
    tr = rng.permutation(np.concatenate(train_idx))
    te = rng.permutation(np.concatenate(test_idx))
    # Fancy indexing copies, so callers get fresh writable arrays.
    return x[tr], y[tr], x[te], y[te]


def batches(
    x: np.ndarray,
    y: np.ndarray,
    batch_size: int,
    seed: int = 0,
    *,
    epochs: int | None = None,
    drop_remainder: bool = False,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield shuffled mini-batches ``(x_batch, y_batch)``, re-shuffling at the start of every epoch.

    An epoch is one pass over all rows in a fresh random order drawn from ``numpy.random.default_rng(seed)``,
    so the sequence of batches is fully determined by ``seed``. The iterator is infinite by default
    (``epochs=None``); pass ``epochs=k`` to stop after ``k`` passes. The last batch of an epoch holds the
    remaining ``len(x) % batch_size`` rows unless ``drop_remainder=True``; batches never span two epochs.

    Args:
        x: features, first axis = examples.
        y: labels, same length as ``x``.
        batch_size: rows per batch (> 0).
        seed: seed of the per-epoch shuffles.
        epochs: number of passes, or None for an endless stream.
        drop_remainder: skip each epoch's final short batch.

    Example:
        >>> import numpy as np
        >>> x, y = np.arange(10, dtype=np.float32).reshape(5, 2), np.arange(5)
        >>> [len(yb) for _, yb in batches(x, y, batch_size=2, epochs=2)]
        [2, 2, 1, 2, 2, 1]
        >>> [len(yb) for _, yb in batches(x, y, batch_size=2, epochs=2, drop_remainder=True)]
        [2, 2, 2, 2]
        >>> stream = batches(x, y, batch_size=4, seed=1)  # infinite
        >>> sum(1 for _ in zip(range(7), stream))
        7
    """
    n = len(x)
    if len(y) != n:
        raise ValueError(f"x and y have different lengths: {n} vs {len(y)}")
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    if epochs is not None and epochs < 0:
        raise ValueError(f"epochs must be None or >= 0, got {epochs}")
    if n == 0 or (drop_remainder and n < batch_size):
        return
    rng = np.random.default_rng(seed)
    epoch = 0
    while epochs is None or epoch < epochs:
        order = rng.permutation(n)
        stop = n - n % batch_size if drop_remainder else n
        for start in range(0, stop, batch_size):
            idx = order[start : start + batch_size]
            yield x[idx], y[idx]
        epoch += 1
