"""The sparse ops (``tf.sparse_*``, ``tf.sparse.*``) against real TensorFlow: values, dtypes, static shapes,
gradients and error classes."""

from __future__ import annotations

import numpy as np
import pytest

from tests.ops.sparse.support import same, same_error, same_gradients

pytestmark = pytest.mark.tf_oracle

IND = [[0, 1], [1, 0], [1, 2], [3, 1]]
VAL = [1.5, -2.0, 3.0, 4.0]
SHAPE = [4, 3]


def sp(m, values=VAL, indices=IND, shape=SHAPE, dtype=None):
    vals = m.constant(values, dtype) if dtype is not None else values
    return m.SparseTensor(indices, vals, shape)


def unsorted(m):
    return m.SparseTensor([[3, 1], [0, 1], [1, 2], [1, 0]], [4.0, 1.5, 3.0, -2.0], SHAPE)


# ---- structure ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("values", [[4.0, 1.5, 3.0, -2.0], ["d", "a", "c", "b"]])
def test_reorder(values):
    same(lambda m: m.sparse_reorder(m.SparseTensor([[3, 1], [0, 1], [1, 2], [1, 0]], values, SHAPE)))
    same(
        lambda m: m.sparse.reorder(
            m.SparseTensor([[2], [0]], values[:2], m.placeholder_with_default(np.array([5], np.int64), [None]))
        )
    )


def test_reorder_gradient():
    ind = np.array([[3, 1], [0, 1], [1, 2], [1, 0]], np.int64)
    same_gradients(lambda m, v: m.sparse_reorder(m.SparseTensor(ind, v, SHAPE)).values, [np.arange(4.0)])


@pytest.mark.parametrize("shape", [[3, -1], [12], [2, 2, 3], [-1, 2, 2]])
def test_reshape(shape):
    same(lambda m: m.sparse_reshape(sp(m), shape))


def test_reshape_unknown_input_shape():
    same(lambda m: m.sparse_reshape(m.SparseTensor(IND, VAL, m.placeholder_with_default(np.array(SHAPE), [2])), [2, 6]))


def test_reshape_errors():
    assert same_error(lambda m: m.sparse_reshape(sp(m), [5, 5])) == "ValueError"
    assert same_error(lambda m: m.sparse_reshape(sp(m), [-1, -1])) == "ValueError"
    dynamic = lambda m: m.sparse_reshape(  # noqa: E731
        m.SparseTensor(IND, VAL, m.placeholder_with_default(np.array(SHAPE, np.int64), [2])), [5, 5]
    )
    assert same_error(dynamic) == "InvalidArgumentError"


@pytest.mark.parametrize("perm", [None, [1, 0]])
def test_transpose(perm):
    same(lambda m: m.sparse_transpose(sp(m), perm))
    same(lambda m: m.sparse.transpose(m.SparseTensor([[0, 1, 2], [1, 0, 0]], [1, 2], [2, 3, 4]), [2, 0, 1]))


@pytest.mark.parametrize("start,size", [([1, 0], [2, 3]), ([0, 1], [10, 10]), ([5, 0], [1, 1])])
def test_slice_and_gradient(start, size):
    same(lambda m: m.sparse_slice(sp(m), start, size))
    same_gradients(
        lambda m, v: m.sparse_slice(m.SparseTensor(IND, v, SHAPE), start, size).values * 2.0,
        [np.array(VAL, np.float64)],
    )


@pytest.mark.parametrize("axis,n", [(0, 2), (1, 3), (-1, 2), (0, 3)])
def test_split(axis, n):
    same(lambda m: m.sparse_split(sp_input=sp(m), num_split=n, axis=axis))
    same(lambda m: m.sparse.split(sp_input=sp(m, ["a", "b", "c", "d"]), num_split=n, axis=axis))


def test_split_argument_rules():
    assert same_error(lambda m: m.sparse_split(sp(m), 2, 0)) == "ValueError"  # keywords only
    assert same_error(lambda m: m.sparse_split(sp_input=sp(m), num_split=2, split_dim=0)) == "ValueError"
    assert same_error(lambda m: m.sparse_split(sp_input=sp(m), num_split=5, axis=0)) == "InvalidArgumentError"


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat(axis):
    other = lambda m: m.SparseTensor([[0, 0], [1, 1]], [7.0, 8.0], [2, 3] if axis == 0 else [4, 2])  # noqa: E731
    same(lambda m: m.sparse_concat(axis, [sp(m), other(m)]))
    same(lambda m: m.sparse.concat(axis, [sp(m), sp(m), other(m)], expand_nonconcat_dim=True))


def test_concat_expand_and_strings():
    a = lambda m: m.SparseTensor([[0, 2], [1, 0], [1, 1]], ["a", "b", "c"], [2, 3])  # noqa: E731
    b = lambda m: m.SparseTensor([[0, 1], [0, 2], [2, 0]], ["d", "e", "f"], [3, 4])  # noqa: E731
    same(lambda m: m.sparse_concat(1, [a(m), b(m)], expand_nonconcat_dim=True))
    # TF1 counts the old name's default as given: the new name alone clashes with it.
    assert same_error(lambda m: m.sparse_concat(1, [a(m), b(m)], expand_nonconcat_dims=True)) == "ValueError"
    assert same_error(lambda m: m.sparse_concat(1, [a(m), b(m)])) == "InvalidArgumentError"


def test_fill_empty_rows_and_gradient():
    sparse = lambda m, v: m.SparseTensor([[1, 0], [1, 2], [3, 1]], v, [6, 3])  # noqa: E731
    same(lambda m: m.sparse_fill_empty_rows(sparse(m, [1.0, 2.0, 3.0]), -1.0))
    same(lambda m: m.sparse_fill_empty_rows(sparse(m, ["a", "b", "c"]), "z"))
    same(lambda m: m.sparse.fill_empty_rows(m.SparseTensor(np.zeros((0, 2), np.int64), [], [2, 2]), 5.0))

    def build(m, values, default):
        filled, _ = m.sparse_fill_empty_rows(sparse(m, values), default)
        return filled.values * 3.0

    same_gradients(build, [np.array([1.0, 2.0, 3.0]), np.array(0.5)])


def test_reset_shape():
    same(lambda m: m.sparse_reset_shape(sp(m)))
    same(lambda m: m.sparse_reset_shape(sp(m), [5, 5]))
    assert same_error(lambda m: m.sparse_reset_shape(sp(m), [2, 2])) == "ValueError"


@pytest.mark.parametrize("axis", [0, 1, -1, -3])
def test_expand_dims(axis):
    same(lambda m: m.sparse.expand_dims(sp(m), axis))


def test_eye_and_from_dense():
    same(lambda m: m.sparse.eye(3, 2, dtype=m.int32))
    same(lambda m: m.sparse.from_dense([[0.0, 1.5], [0.0, 0.0], [2.0, 0.0]]))


# ---- element-wise ------------------------------------------------------------------------------------------------
def test_add_sparse_sparse_and_gradient():
    other = lambda m, v=(1.0, 2.0, -3.0): m.SparseTensor([[0, 1], [1, 1], [1, 2]], v, SHAPE)  # noqa: E731
    same(lambda m: m.sparse_add(sp(m), other(m)))
    same(lambda m: m.sparse_add(sp(m), other(m), threshold=0.5))
    same(lambda m: m.sparse.add(sp(m), other(m), thresh=3.0))
    same_gradients(
        lambda m, a, b: m.sparse_add(m.SparseTensor(IND, a, SHAPE), other(m, b)).values,
        [np.array(VAL), np.array([1.0, 2.0, -3.0])],
    )


def test_add_sparse_dense_and_gradient():
    dense = np.arange(12.0).reshape(4, 3)
    same(lambda m: m.sparse_add(sp(m), dense.astype(np.float32)))
    same(lambda m: m.sparse_add(dense.astype(np.float32), sp(m)))
    same_gradients(lambda m, v, d: m.sparse_add(m.SparseTensor(IND, v, SHAPE), d), [np.array(VAL), dense])


def test_add_errors():
    assert same_error(lambda m: m.sparse_add(sp(m), m.SparseTensor([[0, 0]], [1.0], [4, 4]))) == "ValueError"
    unknown = lambda m: m.SparseTensor([[0, 0]], [1.0], m.placeholder_with_default(np.array([4, 4], np.int64), [2]))  # noqa: E731
    assert same_error(lambda m: m.sparse_add(sp(m), unknown(m))) == "InvalidArgumentError"
    assert same_error(lambda m: m.sparse_add([1.0], [2.0])) == "TypeError"


@pytest.mark.parametrize("fn", ["sparse_maximum", "sparse_minimum"])
def test_maximum_minimum(fn):
    other = lambda m: m.SparseTensor([[0, 0], [1, 0], [3, 1]], [1.0, -5.0, 9.0], SHAPE)  # noqa: E731
    same(lambda m: getattr(m, fn)(sp(m), other(m)))


def test_softmax_and_gradient():
    ind = [[0, 0, 0], [0, 0, 2], [0, 1, 1], [1, 0, 0], [1, 0, 1], [1, 0, 2]]
    values = np.array([1.0, 2.0, -1.0, 0.5, 0.25, 3.0])
    same(lambda m: m.sparse_softmax(m.SparseTensor(ind, values.astype(np.float32), [2, 2, 3])))
    same_gradients(lambda m, v: m.sparse_softmax(m.SparseTensor(ind, v, [2, 2, 3])).values, [values])


def test_retain_and_mask():
    same(lambda m: m.sparse_retain(sp(m), [True, False, True, False]))
    same(lambda m: m.sparse.retain(sp(m, ["a", "b", "c", "d"]), np.array([False, True, True, True])))
    assert same_error(lambda m: m.sparse_retain(sp(m), [True])) == "ValueError"

    def mask(m):
        kept = m.sparse_mask(m.IndexedSlices(m.constant([[1.0], [2.0], [3.0]]), m.constant([0, 4, 7])), [4, 9])
        return [kept.indices, kept.values]

    same(mask)


# ---- reductions and dense results --------------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [None, 0, 1, -1, [0, 1]])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduce(axis, keepdims):
    for fn in ("sparse_reduce_sum", "sparse_reduce_max", "sparse_reduce_sum_sparse", "sparse_reduce_max_sparse"):
        same(lambda m, fn=fn: getattr(m, fn)(sp(m), axis, keepdims=keepdims))
        same(lambda m, fn=fn: getattr(m, fn)(sp(m, [-1, -2, -3, -4], dtype=m.int32), axis, keepdims=keepdims))


def test_reduce_old_names_and_unknown_shape():
    same(lambda m: m.sparse_reduce_sum(sp(m), reduction_axes=1, keep_dims=True))
    same(lambda m: m.sparse.reduce_max(m.SparseTensor(IND, VAL, m.placeholder_with_default(np.array(SHAPE), [2])), 0))


def test_reduce_sum_gradient():
    for axis in (None, 0, [1], -1):
        same_gradients(lambda m, v, a=axis: m.sparse_reduce_sum(m.SparseTensor(IND, v, SHAPE), a), [np.array(VAL)])


@pytest.mark.parametrize("adjoint_a", [False, True])
@pytest.mark.parametrize("adjoint_b", [False, True])
def test_dense_matmul_and_gradient(adjoint_a, adjoint_b):
    rng = np.random.default_rng(3)
    b = rng.normal(size=(4 if adjoint_a else 3, 2))
    if adjoint_b:
        b = b.T.copy()
    same(lambda m: m.sparse_tensor_dense_matmul(sp(m), b.astype(np.float32), adjoint_a, adjoint_b), rtol=1e-5)
    same_gradients(
        lambda m, v, d: m.sparse_tensor_dense_matmul(m.SparseTensor(IND, v, SHAPE), d, adjoint_a, adjoint_b),
        [np.array(VAL), b],
    )


def test_dense_matmul_with_sparse_b_and_errors():
    dense = np.arange(8.0, dtype=np.float32).reshape(2, 4)
    same(lambda m: m.sparse.matmul(dense, sp(m)))
    same(lambda m: m.sparse.sparse_dense_matmul(dense.T.copy(), sp(m), adjoint_a=True))
    assert same_error(lambda m: m.sparse.sparse_dense_matmul(dense, sp(m), adjoint_a=True, adjoint_b=True)) == (
        "ValueError"
    )
    out_of_range = lambda m: m.sparse_tensor_dense_matmul(  # noqa: E731
        m.SparseTensor([[0, 7]], [1.0], [2, 3]), np.ones((3, 2), np.float32)
    )
    assert same_error(out_of_range) == "InvalidArgumentError"


def test_to_dense_and_gradient():
    same(lambda m: m.sparse_tensor_to_dense(sp(m)))
    same(lambda m: m.sparse.to_dense(sp(m, ["a", "b", "c", "d"]), default_value="-"))
    same(lambda m: m.sparse_to_dense([[0, 1], [2, 2]], [3, 3], [5, 6], default_value=-1))
    same(lambda m: m.sparse_to_dense(m.constant([1, 3], m.int64), m.constant([5], m.int64), 1.5))
    assert same_error(lambda m: m.sparse_to_dense([1, 3], m.constant([5], m.int64), 1.5)) == "TypeError"
    same(lambda m: m.sparse_to_dense(2, [4], True, default_value=False))
    same_gradients(
        lambda m, v, d: m.sparse_to_dense([[0, 1], [2, 2]], [3, 3], v, default_value=d),
        [np.array([1.0, 2.0]), np.array(0.5)],
    )
    same_gradients(lambda m, v: m.sparse_tensor_to_dense(m.SparseTensor(IND, v, SHAPE)), [np.array(VAL)])


def test_to_dense_errors():
    assert same_error(lambda m: m.sparse_tensor_to_dense(unsorted(m))) == "InvalidArgumentError"
    same(lambda m: m.sparse_tensor_to_dense(unsorted(m), validate_indices=False))
    assert same_error(lambda m: m.sparse_to_dense([[0, 0], [0, 0]], [2, 2], 1)) == "InvalidArgumentError"
    assert same_error(lambda m: m.sparse_to_dense([[0, 5]], [2, 2], 1)) == "InvalidArgumentError"


def test_merge_and_indicator():
    ids = lambda m: m.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0]], m.constant([3, 0, 2, 3], m.int64), [3, 2])  # noqa: E731
    weights = lambda m: m.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0]], [0.5, 1.5, 2.0, 3.0], [3, 2])  # noqa: E731
    same(lambda m: m.sparse_merge(ids(m), weights(m), 4))
    same(lambda m: m.sparse.merge([ids(m), ids(m)], weights(m), [4, 5]))
    same(lambda m: m.sparse_to_indicator(ids(m), 4))
    same(lambda m: m.sparse.to_indicator(m.SparseTensor([[0, 0], [1, 1]], [1, 2], [2, 2]), 3))


def test_sparse_matmul():
    a, b = np.arange(6.0, dtype=np.float32).reshape(2, 3), np.arange(6.0, dtype=np.float32).reshape(3, 2)
    same(lambda m: m.sparse_matmul(a, b, a_is_sparse=True))
    same(lambda m: m.sparse_matmul(a, a, transpose_b=True, b_is_sparse=True))
    same_gradients(lambda m, x, y: m.sparse_matmul(m.cast(x, m.float32), m.cast(y, m.float32)), [a * 1.0, b * 1.0])


# ---- segments ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", ["sparse_segment_sum", "sparse_segment_mean", "sparse_segment_sqrt_n"])
def test_segments_and_gradients(fn):
    data = np.arange(12.0).reshape(4, 3)
    idx, ids = [0, 2, 3, 2], [0, 0, 2, 2]
    same(lambda m: getattr(m, fn)(data.astype(np.float32), idx, ids))
    same(lambda m: getattr(m, fn)(data.astype(np.float32), idx, ids, num_segments=5))
    same(lambda m: getattr(m.sparse, fn[len("sparse_") :])(data.astype(np.float32), [1, 1], [0, 1]))
    same_gradients(lambda m, d: getattr(m, fn)(d, idx, ids), [data])
    same_gradients(lambda m, d: getattr(m, fn)(d, idx, ids, num_segments=4), [data])
    same_gradients(lambda m, d: getattr(m, fn)(d, idx, ids, sparse_gradient=True), [data])
    assert same_error(lambda m: getattr(m, fn)(data, [0, 9], [0, 1])) == "InvalidArgumentError"
    assert same_error(lambda m: getattr(m, fn)(data, [0, 1], [1, 0])) == "InvalidArgumentError"


# ---- serialization -----------------------------------------------------------------------------------------------
def test_serialize_bytes_equal_tensorflow():
    same(lambda m: m.serialize_sparse(sp(m)))
    same(lambda m: m.serialize_sparse(sp(m, ["a", "bc", "", "d"])))
    same(lambda m: m.serialize_many_sparse(sp(m)))


@pytest.mark.parametrize("values,dtype", [(VAL, "float32"), (["a", "b", "c", "d"], "string"), ([1, 2, 3, 4], "int64")])
def test_deserialize_many(values, dtype):
    def build(m):
        rows = m.serialize_many_sparse(sp(m, values, dtype=getattr(m, dtype)))
        return m.deserialize_many_sparse(rows, getattr(m, dtype), rank=2)

    same(build)
    one = lambda m: m.serialize_sparse(m.SparseTensor([[1]], m.constant(values[:1], getattr(m, dtype)), [3]))  # noqa: E731
    two = lambda m: m.serialize_sparse(m.SparseTensor([[0], [4]], m.constant(values[1:3], getattr(m, dtype)), [5]))  # noqa: E731
    same(lambda m: m.deserialize_many_sparse(m.stack([one(m), two(m)]), getattr(m, dtype)))
    assert same_error(lambda m: m.deserialize_many_sparse(m.stack([one(m)]), m.bool)) == "InvalidArgumentError"


def test_gradient_free_ops_agree():
    """Ops TF gives no gradient (SparseConcat) give None here too."""
    same_gradients(
        lambda m, v: m.sparse_concat(0, [m.SparseTensor([[0]], v, [2]), m.SparseTensor([[1]], v, [2])]).values,
        [np.array([2.0])],
    )
