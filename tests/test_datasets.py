"""Tests for dtf_notebook.datasets (scikit-learn's bundled digits, MNIST-shaped)."""

import doctest

import numpy as np
import pytest

from dtf_notebook.datasets import NUM_CLASSES, batches, load_digits_784
from dtf_notebook.datasets import digits as digits_module

N_TOTAL = 1797


@pytest.fixture(scope="module")
def split():
    return load_digits_784()


def test_shapes_and_dtypes(split):
    x_train, y_train, x_test, y_test = split
    assert x_train.ndim == 2 and x_train.shape[1] == 784
    assert x_test.ndim == 2 and x_test.shape[1] == 784
    assert y_train.shape == (len(x_train),)
    assert y_test.shape == (len(x_test),)
    assert x_train.dtype == np.float32 and x_test.dtype == np.float32
    assert y_train.dtype == np.int64 and y_test.dtype == np.int64


def test_value_ranges(split):
    x_train, y_train, x_test, y_test = split
    for x in (x_train, x_test):
        assert np.all(np.isfinite(x))
        assert x.min() >= 0.0 and x.max() <= 1.0
        assert x.max() > 0.99  # full-intensity pixels survive the scaling
    for y in (y_train, y_test):
        assert y.min() >= 0 and y.max() <= NUM_CLASSES - 1
    assert set(np.unique(y_train).tolist()) == set(range(NUM_CLASSES))
    assert set(np.unique(y_test).tolist()) == set(range(NUM_CLASSES))


def test_padding_border_is_zero(split):
    images = split[0].reshape(-1, 28, 28)
    border = np.concatenate(
        [images[:, :2, :].ravel(), images[:, -2:, :].ravel(), images[:, :, :2].ravel(), images[:, :, -2:].ravel()]
    )
    assert np.all(border == 0.0)


def test_split_sizes_and_stratification(split):
    x_train, y_train, x_test, y_test = split
    assert len(x_train) + len(x_test) == N_TOTAL
    assert abs(len(x_test) - 0.2 * N_TOTAL) <= NUM_CLASSES
    train_counts = np.bincount(y_train, minlength=NUM_CLASSES)
    test_counts = np.bincount(y_test, minlength=NUM_CLASSES)
    frac = test_counts / (train_counts + test_counts)
    assert np.all(np.abs(frac - 0.2) < 0.02)


def test_train_and_test_are_disjoint_and_cover_everything():
    x_train, _, x_test, _ = load_digits_784(upsample=False)
    all_rows = np.concatenate([x_train, x_test])
    # Every original example appears exactly once across the split (compare as sorted byte rows).
    ref = digits_module._load_all(False)[0]
    key = lambda a: sorted(row.tobytes() for row in a)
    assert key(all_rows) == key(ref)


@pytest.mark.parametrize("test_fraction", [0.0, 0.1, 0.5])
def test_test_fraction(test_fraction):
    x_train, y_train, x_test, y_test = load_digits_784(test_fraction=test_fraction)
    assert len(x_train) + len(x_test) == N_TOTAL
    assert abs(len(x_test) - test_fraction * N_TOTAL) <= NUM_CLASSES


def test_bad_test_fraction():
    with pytest.raises(ValueError):
        load_digits_784(test_fraction=1.0)
    with pytest.raises(ValueError):
        load_digits_784(test_fraction=-0.1)


def test_no_upsample_gives_64_features():
    x_train, _, x_test, _ = load_digits_784(upsample=False)
    assert x_train.shape[1] == 64 and x_test.shape[1] == 64
    assert x_train.dtype == np.float32
    assert x_train.max() <= 1.0


def test_upsampled_matches_original_pixels_on_average():
    # Bilinear 3x up-sampling with half-pixel centres preserves each image's mean intensity closely.
    small = load_digits_784(upsample=False, seed=3)[0]
    big = load_digits_784(upsample=True, seed=3)[0].reshape(-1, 28, 28)[:, 2:26, 2:26]
    np.testing.assert_allclose(big.mean(axis=(1, 2)), small.mean(axis=1), atol=0.03)


def test_deterministic_for_same_seed():
    a = load_digits_784(seed=7)
    b = load_digits_784(seed=7)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)


def test_different_seeds_give_different_splits():
    a = load_digits_784(seed=0)
    b = load_digits_784(seed=1)
    assert not np.array_equal(a[1], b[1])


def test_independent_of_global_numpy_state():
    np.random.seed(123)
    a = load_digits_784(seed=5)
    np.random.seed(456)
    b = load_digits_784(seed=5)
    np.testing.assert_array_equal(a[0], b[0])


def test_returned_arrays_are_writable_copies():
    x_train, y_train, _, _ = load_digits_784()
    x_train[0, 0] = 123.0  # must not corrupt the cache
    y_train[0] = 99
    x2, y2, _, _ = load_digits_784()
    assert x2[0, 0] != 123.0
    assert y2[0] != 99


def test_batches_per_epoch_covers_each_row_once():
    x = np.arange(23, dtype=np.float32).reshape(23, 1)
    y = np.arange(23, dtype=np.int64)
    got = list(batches(x, y, batch_size=5, seed=0, epochs=1))
    assert [len(yb) for _, yb in got] == [5, 5, 5, 5, 3]
    seen = np.concatenate([yb for _, yb in got])
    assert sorted(seen.tolist()) == list(range(23))
    for xb, yb in got:
        np.testing.assert_array_equal(xb[:, 0], yb.astype(np.float32))  # rows stay paired


def test_batches_drop_remainder():
    x = np.zeros((23, 2), np.float32)
    y = np.zeros(23, np.int64)
    sizes = [len(yb) for _, yb in batches(x, y, batch_size=5, epochs=3, drop_remainder=True)]
    assert sizes == [5] * 12
    assert list(batches(x, y, batch_size=50, epochs=1, drop_remainder=True)) == []


def test_batches_infinite_and_reshuffled():
    x = np.arange(10, dtype=np.float32).reshape(10, 1)
    y = np.arange(10, dtype=np.int64)
    stream = batches(x, y, batch_size=10, seed=0)
    epochs = [next(stream)[1].tolist() for _ in range(5)]
    assert all(sorted(e) == list(range(10)) for e in epochs)
    assert len({tuple(e) for e in epochs}) > 1  # a fresh order each epoch


def test_batches_deterministic():
    x_train, y_train, _, _ = load_digits_784()
    a = [yb for _, (_, yb) in zip(range(30), batches(x_train, y_train, 100, seed=4))]
    b = [yb for _, (_, yb) in zip(range(30), batches(x_train, y_train, 100, seed=4))]
    c = [yb for _, (_, yb) in zip(range(30), batches(x_train, y_train, 100, seed=5))]
    assert all(np.array_equal(u, v) for u, v in zip(a, b))
    assert not all(np.array_equal(u, v) for u, v in zip(a, c))


def test_batches_shapes_and_dtypes():
    x_train, y_train, _, _ = load_digits_784()
    xb, yb = next(batches(x_train, y_train, batch_size=100, seed=0))
    assert xb.shape == (100, 784) and xb.dtype == np.float32
    assert yb.shape == (100,) and yb.dtype == np.int64


def test_batches_argument_errors():
    x = np.zeros((4, 1), np.float32)
    with pytest.raises(ValueError):
        next(batches(x, np.zeros(3, np.int64), batch_size=2))
    with pytest.raises(ValueError):
        next(batches(x, np.zeros(4, np.int64), batch_size=0))


def test_docstring_examples():
    result = doctest.testmod(digits_module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0


def test_the_digits_are_scikit_learns_own():
    from sklearn.datasets import load_digits

    from dtf_notebook.datasets.digits import _read_digits

    images, labels = _read_digits()
    reference = load_digits()
    np.testing.assert_array_equal(images, reference.images)
    np.testing.assert_array_equal(labels, reference.target)


def test_loading_the_digits_does_not_import_scikit_learn():
    """Its import loads a second OpenMP runtime that, before torch's, slowed training down (see _read_digits)."""
    from tests.fresh_process import run_fresh

    code = "import json, sys\nfrom dtf_notebook.datasets import load_digits_784\nload_digits_784()\n"
    assert run_fresh(code + "print(json.dumps('sklearn' in sys.modules))") is False
