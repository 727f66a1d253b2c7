"""``tf.data`` with SparseTensor elements, against real TensorFlow 1: sources (``from_tensor_slices`` /
``from_tensors`` of SparseTensorValue and SparseTensor), ``map`` returning and taking SparseTensors
(``parse_single_example`` with ``VarLenFeature``, ``parse_example`` after ``batch``), ``batch`` (TF's concatenation
with a new leading dimension and the largest dense shape), the transformations that pass them along, iterators of
every kind, and the errors TF raises (invalid indices, ranks that differ in a batch, ``padded_batch``)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import dtf_notebook.compat.v1 as dtf
from tests.data.oracle import compare, real_tf, run

pytestmark = pytest.mark.tf_oracle

_SP = dict(indices=[[0, 0], [0, 2], [2, 1], [3, 0], [3, 3]], values=[1.0, 2.0, 3.0, 4.0, 5.0], dense_shape=[4, 4])


def _sp(m, **overrides):
    return m.SparseTensorValue(**{**_SP, **overrides})


def _ragged(m):
    """A dataset of rank-1 SparseTensors of growing dense shape: x holds x at 0 and x + 1 at x."""
    return m.data.Dataset.range(5).map(
        lambda x: m.SparseTensor(m.stack([[0], m.reshape(x, [1])]), m.stack([x, x + 1]), m.reshape(x + 1, [1]))
    )


def _examples() -> list[bytes]:
    """Serialized tf.train.Example records with a variable-length string feature, floats and an int label."""
    out = []
    for i in range(7):
        tags = [f"t{j}".encode() for j in range(i % 3)]
        feature = {
            "tags": dtf.train.Feature(bytes_list=dtf.train.BytesList(value=tags)),
            "weights": dtf.train.Feature(float_list=dtf.train.FloatList(value=[0.5 * k for k in range(i % 4)])),
            "label": dtf.train.Feature(int64_list=dtf.train.Int64List(value=[i])),
        }
        out.append(dtf.train.Example(features=dtf.train.Features(feature=feature)).SerializeToString())
    return out


def _features(m):
    return {
        "tags": m.VarLenFeature(m.string),
        "weights": m.VarLenFeature(m.float32),
        "label": m.FixedLenFeature([], m.int64),
    }


CASES = {
    # sources
    "slices": lambda m: m.data.Dataset.from_tensor_slices(_sp(m)),
    "slices_rank3": lambda m: m.data.Dataset.from_tensor_slices(
        m.SparseTensorValue([[0, 1, 0], [1, 0, 2], [1, 1, 1]], [7, 8, 9], [2, 2, 3])
    ),
    "slices_strings": lambda m: m.data.Dataset.from_tensor_slices(
        m.SparseTensorValue([[0, 1], [2, 0]], ["a", "bc"], [3, 2])
    ),
    "slices_sparse_tensor": lambda m: m.data.Dataset.from_tensor_slices(m.SparseTensor(**_SP)),
    "slices_mixed": lambda m: m.data.Dataset.from_tensor_slices(
        (_sp(m), {"n": [1, 2, 3, 4], "s": ["a", "b", "c", "d"]})
    ),
    "tensors": lambda m: m.data.Dataset.from_tensors(_sp(m)),
    "tensors_tuple": lambda m: m.data.Dataset.from_tensors((_sp(m), 3)),
    # batch
    "batch": lambda m: m.data.Dataset.from_tensor_slices(_sp(m)).batch(3),
    "batch_drop_remainder": lambda m: m.data.Dataset.from_tensor_slices(_sp(m)).batch(3, drop_remainder=True),
    "batch_mixed": lambda m: m.data.Dataset.from_tensor_slices((_sp(m), [1, 2, 3, 4])).batch(2),
    "batch_tensors": lambda m: m.data.Dataset.from_tensors(_sp(m)).repeat(2).batch(2),
    "batch_growing_shapes": lambda m: _ragged(m).batch(2),
    "batch_of_batches": lambda m: _ragged(m).batch(2).batch(2),
    "batch_ranks_differ": lambda m: (
        m.data.Dataset.range(2)
        .map(lambda x: m.SparseTensor(m.zeros([1, 1 + x], m.int64), [1.0], m.ones([1 + x], m.int64)))
        .batch(2)
    ),
    # map
    "map_returns_sparse": lambda m: _ragged(m),
    "map_takes_sparse": lambda m: _ragged(m).map(lambda s: m.sparse.to_dense(s)),
    "map_sparse_to_sparse": lambda m: m.data.Dataset.from_tensor_slices(_sp(m)).map(
        lambda s: m.SparseTensor(s.indices, s.values * 10.0, s.dense_shape)
    ),
    "map_mixed_out_batch": lambda m: (
        m.data.Dataset.range(4).map(lambda x: (m.SparseTensor([[0]], m.reshape(x, [1]), [3]), x * 2)).batch(3)
    ),
    "map_parallel_batch": lambda m: _ragged(m).map(lambda s: s, num_parallel_calls=3).batch(2),
    "batched_sparse_to_dense": lambda m: _ragged(m).batch(2).map(lambda s: m.sparse.to_dense(s)),
    "parse_single_example": lambda m: m.data.Dataset.from_tensor_slices(_examples()).map(
        lambda r: m.parse_single_example(r, _features(m))
    ),
    "parse_single_example_batch": lambda m: (
        m.data.Dataset.from_tensor_slices(_examples()).map(lambda r: m.parse_single_example(r, _features(m))).batch(3)
    ),
    "parse_example_after_batch": lambda m: (
        m.data.Dataset.from_tensor_slices(_examples()).batch(3).map(lambda r: m.parse_example(r, _features(m)))
    ),
    # transformations passing SparseTensors along
    "filter": lambda m: _ragged(m).filter(lambda s: m.reduce_sum(s.values) > 4),
    "repeat_take_skip": lambda m: m.data.Dataset.from_tensor_slices(_sp(m)).repeat(2).skip(1).take(5),
    "cache_prefetch": lambda m: _ragged(m).cache().repeat(2).prefetch(2),
    "shard": lambda m: _ragged(m).shard(2, 1),
    "zip": lambda m: m.data.Dataset.zip((_ragged(m), m.data.Dataset.range(10, 20))),
    "concatenate": lambda m: _ragged(m).concatenate(_ragged(m).take(2)),
    "flat_map": lambda m: m.data.Dataset.range(3).flat_map(lambda x: _ragged(m).take(x)),
    "interleave": lambda m: m.data.Dataset.range(2).interleave(lambda x: _ragged(m).skip(x), cycle_length=2),
    # errors TF raises when the iterator starts or runs
    "slices_out_of_order": lambda m: m.data.Dataset.from_tensor_slices(
        m.SparseTensorValue([[2, 1], [0, 0]], [1.0, 2.0], [3, 4])
    ),
    "slices_repeated": lambda m: m.data.Dataset.from_tensor_slices(
        m.SparseTensorValue([[0, 0], [0, 0]], [1.0, 2.0], [3, 4])
    ),
    "slices_out_of_bounds": lambda m: m.data.Dataset.from_tensor_slices(
        m.SparseTensorValue([[0, 0], [1, 5]], [1.0, 2.0], [3, 4])
    ),
    "slices_rank1": lambda m: m.data.Dataset.from_tensor_slices(m.SparseTensorValue([[0], [2]], [1, 2], [3])),
    "slices_dim0_differs": lambda m: m.data.Dataset.from_tensor_slices((_sp(m), [1, 2, 3])),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_sparse_elements_match_tf(name):
    compare(CASES[name])


@pytest.mark.parametrize("name", ["slices_mixed", "parse_single_example_batch", "batch_growing_shapes"])
def test_one_shot_iterators_match_tf(name):
    compare(CASES[name], iterator="one_shot")


def test_shuffle_keeps_each_sparse_element_whole():
    tf1 = real_tf()

    def build(m):
        return m.data.Dataset.from_tensor_slices(_sp(m)).shuffle(4, seed=2)

    def key(e):
        return (tuple(e.indices.ravel()), tuple(e.values.ravel()), tuple(e.dense_shape))

    ours, theirs = run(dtf, build)["elements"], run(tf1, build)["elements"]
    assert sorted(map(key, ours)) == sorted(map(key, theirs))


def test_errors_while_building_match_tf():
    tf1 = real_tf()

    def errors(m):
        out = {}
        with m.Graph().as_default():
            ds = m.data.Dataset.from_tensor_slices(_sp(m))
            for name, build in {
                "padded_batch": lambda: ds.padded_batch(2, padded_shapes=[5]),
                "padded_batch_default": lambda: ds.padded_batch(2),
                "concatenate_dense": lambda: ds.concatenate(m.data.Dataset.range(3)),
                "reinitializable_classes": lambda: m.data.Iterator.from_structure(
                    m.float32, m.TensorShape([4])
                ).make_initializer(ds),
            }.items():
                try:
                    build()
                    out[name] = None
                except (TypeError, ValueError) as e:
                    out[name] = (type(e).__name__, re.sub(r"<class '[\w.]*\.(\w+)'>", r"\1", str(e).split(":")[0]))
        return out

    ours, theirs = errors(dtf), errors(tf1)
    assert ours == theirs
    assert all(v is not None for v in ours.values())


def test_reinitializable_and_feedable_iterators_hand_out_sparse_tensors():
    tf1 = real_tf()

    def read(m):
        with m.Graph().as_default():
            train = m.data.Dataset.from_tensor_slices(_sp(m))
            test = _ragged(m).map(lambda s: m.SparseTensor(s.indices, m.cast(s.values, m.float32), [4]))
            types, shapes, classes = (
                m.data.get_output_types(train),
                m.data.get_output_shapes(train),
                m.data.get_output_classes(train),
            )
            reinit = m.data.Iterator.from_structure(types, shapes, output_classes=classes)
            handle = m.placeholder(m.string, [])
            feedable = m.data.Iterator.from_string_handle(handle, types, shapes, classes)
            one_shot = m.data.make_one_shot_iterator(test)
            single = m.data.experimental.get_single_element(train.skip(3))
            x, y = reinit.get_next(), feedable.get_next()
            out = {"classes": reinit.output_classes.__name__, "static": [x.shape.as_list(), y.shape.as_list()]}
            with m.Session() as sess:
                sess.run(reinit.make_initializer(train))
                out["reinit_train"] = sess.run(x)
                sess.run(reinit.make_initializer(test))
                out["reinit_test"] = sess.run(x)
                h = sess.run(one_shot.string_handle())
                out["feedable"] = [sess.run(y, {handle: h}) for _ in range(2)]
                out["single"] = sess.run(single)
        return out

    ours, theirs = read(dtf), read(tf1)
    assert type(ours["reinit_train"]).__name__ == "SparseTensorValue"
    assert ours["classes"] == theirs["classes"] == "SparseTensor"
    assert ours["static"] == theirs["static"]
    for key in ("reinit_train", "reinit_test", "single"):
        for a, b in zip(ours[key], theirs[key]):
            np.testing.assert_array_equal(a, b)
    for got, want in zip(ours["feedable"], theirs["feedable"]):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


def test_sparse_spec_and_structure_helpers_match_tf():
    tf1 = real_tf()
    tf2 = pytest.importorskip("tensorflow")
    for m, spec_class in ((dtf, dtf.SparseTensorSpec), (tf1, tf2.SparseTensorSpec)):
        with m.Graph().as_default():
            ds = m.data.Dataset.from_tensor_slices((_sp(m), [1, 2, 3, 4]))
            structure = m.data.experimental.get_structure(ds)
            assert repr(structure[0]) == "SparseTensorSpec(TensorShape([4]), tf.float32)"
            assert isinstance(structure[0], spec_class)
            assert repr(m.data.experimental.SparseTensorStructure(m.int64, [None])) == (
                "SparseTensorSpec(TensorShape([None]), tf.int64)"
            )
