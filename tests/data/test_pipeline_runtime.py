"""The runtime side of ``tf.data`` without TensorFlow: vectorized map+batch against the per-element map, the
pipeline as wire data, function captures, the generator registry, cache records and iterator handles."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dtf_notebook.compat.v1 as tf
from dtf_notebook.data.function import FuncGraph, trace
from dtf_notebook.data.kernels.buffering import decode_element, encode_element
from dtf_notebook.data.kernels.resource import IteratorResource, parse_string_handle
from dtf_notebook.data.structure import TensorSpec
from dtf_notebook.data.vectorize import vectorize
from dtf_notebook.distributed.graph_codec import decode_graph_def, encode_graph_def


def _elements(ds, limit=1000):
    x = ds.make_one_shot_iterator().get_next()
    out = []
    with tf.Session() as sess:
        for _ in range(limit):
            try:
                out.append(sess.run(x))
            except tf.errors.OutOfRangeError:
                break
    return out


def _flat(values):
    return [np.asarray(v) for v in (values if isinstance(values, tuple) else (values,))]


VECTORIZABLE = {
    "scale_reshape": (TensorSpec(tf.uint8, [6]), lambda x: tf.reshape(tf.cast(x, tf.float32) / 255.0, [2, 3])),
    "reshape_minus_one": (TensorSpec(tf.float32, [6]), lambda x: tf.reshape(x, [-1, 2])),
    "axes": (TensorSpec(tf.float32, [2, 3]), lambda x: (tf.reduce_mean(x, 1), tf.argmax(x, -1), tf.transpose(x))),
    "slices": (TensorSpec(tf.float32, [2, 3]), lambda x: (x[0], x[:, 1:], x[..., -1], tf.slice(x, [0, 1], [2, 1]))),
    "one_hot_stack_concat": (
        TensorSpec(tf.int64, []),
        lambda x: (tf.one_hot(x % 4, 4), tf.stack([x, x * 2]), tf.concat([[x], [x + 1]], 0)),
    ),
    "strings": (TensorSpec(tf.string, []), lambda s: (tf.strings.to_number(s), tf.strings.length(s))),
    "captured_and_constant_outputs": (TensorSpec(tf.int64, []), lambda x: (x, tf.constant(3), tf.constant([1, 2]))),
}


@pytest.mark.parametrize("name", sorted(VECTORIZABLE))
def test_vectorized_map_batch_gives_what_the_per_element_map_gives(name):
    spec, fn = VECTORIZABLE[name]
    n = 10
    if spec.dtype is tf.string:
        data = np.array([f"{i}.5".encode() for i in range(n)], dtype=object)
    else:
        data = (np.arange(n * max(1, int(np.prod(spec.shape.as_list())))) % 7).astype(spec.dtype.as_numpy_dtype)
        data = data.reshape([n, *spec.shape.as_list()])
    with tf.Graph().as_default():
        assert vectorize(trace(fn, spec, "map")) is not None, "the function should vectorize"
        fused = _elements(tf.data.Dataset.from_tensor_slices(data).map(fn).batch(4))
        # A filter in between keeps map and batch apart: the map runs per element.
        plain = _elements(tf.data.Dataset.from_tensor_slices(data).map(fn).filter(lambda *a: True).batch(4))
    assert len(fused) == len(plain) == 3
    for f, p in zip(fused, plain):
        for a, b in zip(_flat(f), _flat(p)):
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=1e-6) if a.dtype.kind == "f" else np.testing.assert_array_equal(a, b)


def test_functions_that_cannot_be_vectorized_stay_per_element():
    with tf.Graph().as_default():
        spec = TensorSpec(tf.float32, [3])
        assert vectorize(trace(lambda x: x + tf.random_uniform([3]), spec, "map")) is None  # stateful
        sized_by_element = trace(lambda x: tf.fill(tf.cast(x[:1], tf.int32), 1.0), spec, "map")
        assert vectorize(sized_by_element) is None  # a shape that depends on the element
        assert vectorize(trace(lambda x: tf.cond(x[0] > 0, lambda: x, lambda: -x), spec, "map")) is None
        assert vectorize(trace(lambda x: tf.squeeze(x), TensorSpec(tf.float32, None), "map")) is None
        # Random ops per element still work (each element draws its own values).
        values = _elements(
            tf.data.Dataset.range(4).map(lambda x: tf.random_uniform([]) + tf.cast(x, tf.float32)).batch(4)
        )[0]
        assert len(set(np.round(values - np.arange(4), 6))) == 4


def test_a_batch_the_vectorized_function_cannot_take_falls_back_to_the_element_errors():
    with tf.Graph().as_default():
        # Elements of different sizes: stacking before the map fails, so each is mapped, and batching fails as TF's.
        ragged = tf.data.Dataset.range(1, 4).map(lambda x: tf.fill([x], 1.0)).map(lambda v: v * 2.0).batch(3)
        x = ragged.make_one_shot_iterator().get_next()
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="Cannot batch tensors"):
            sess.run(x)
        # A conversion that fails for one element reports that element's error.
        bad = tf.data.Dataset.from_tensor_slices(["1", "x", "3"]).map(tf.strings.to_number).batch(3)
        y = bad.make_one_shot_iterator().get_next()
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="x"):
            sess.run(y)


def test_pipelines_travel_as_plain_data():
    with tf.Graph().as_default() as g:
        scale = tf.placeholder(tf.float32, [], name="scale")
        ds = tf.data.Dataset.range(100)
        for _ in range(30):
            ds = ds.map(lambda x: x + 1)
        ds = ds.flat_map(
            lambda x: tf.data.Dataset.range(x).interleave(
                lambda y: tf.data.Dataset.from_tensors(tf.cast(y, tf.float32) * scale), cycle_length=2
            )
        )
        it = ds.make_initializable_iterator()
        x = it.get_next()
    plain, tensors = encode_graph_def(g.as_graph_def_dict())
    decode_graph_def(plain, tensors)  # no code, no pickles, within the codec's nesting bound
    # The nested function's captured placeholder became an input of the initializer, through both functions.
    assert scale in it.initializer.inputs
    with g.as_default(), tf.Session() as sess:
        sess.run(it.initializer, {scale: 0.5})
        assert [float(sess.run(x)) for _ in range(3)] == [0.0, 0.5, 1.0]


def test_function_graphs_capture_enclosing_tensors_once_and_in_order():
    with tf.Graph().as_default() as outer:
        a, b = tf.constant(1, name="a"), tf.constant(2, name="b")
        fn = trace(lambda x: a * x + b * x + a, TensorSpec(tf.int32, []), "map")
    assert fn.captured == [a, b]
    assert [t.op.type for t in fn.graph.capture_placeholders] == ["Placeholder", "Placeholder"]
    assert all(op.graph is fn.graph for op in fn.graph.get_operations())
    other = tf.Graph()
    with other.as_default():
        stray = tf.constant(3)
    with pytest.raises(ValueError, match="does not enclose"):
        FuncGraph("map", outer).capture(stray)


def test_generators_are_found_only_in_their_own_process():
    from dtf_notebook.data import generators

    token = generators.register(lambda: iter([1]), "one")
    assert list(generators.lookup(token)()) == [1]
    with pytest.raises(tf.errors.FailedPreconditionError, match="runs in the Python process that built the dataset"):
        generators.lookup("pid1-gen999")


def test_cache_records_round_trip_every_dtype():
    element = (
        torch.tensor([[1.5, 2.5]]),
        torch.tensor(7, dtype=torch.int64),
        torch.tensor([True, False]),
        np.array([[b"a", b""], [b"xyz", b"\x00"]], dtype=object),
        np.array(b"scalar", dtype=object),
    )
    back = decode_element(encode_element(element))
    for a, b in zip(element, back):
        if isinstance(a, torch.Tensor):
            assert a.dtype == b.dtype and torch.equal(a, b)
        else:
            assert a.shape == b.shape and a.tolist() == b.tolist()
    with pytest.raises(tf.errors.DataLossError):
        decode_element(b"\x05\x00")


def test_iterator_string_handles_name_device_container_and_name():
    r = IteratorResource("it@s", "c", None, "/job:worker/replica:0/task:1/device:CPU:0", [], [])
    assert parse_string_handle(r.string_handle()) == ("/job:worker/replica:0/task:1/device:CPU:0", "c", "it@s")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Could not parse an iterator string handle"):
        parse_string_handle(b"not a handle")


def test_batches_gathered_from_slices_match_element_by_element_batches():
    data = (np.arange(60, dtype=np.float32).reshape(20, 3), np.array([f"s{i}".encode() for i in range(20)], object))

    def keep(*_):
        return True

    with tf.Graph().as_default():
        slices = tf.data.Dataset.from_tensor_slices(data)
        variants = [
            lambda ds: ds.shuffle(7, seed=3).repeat(3).take(50),  # shuffled row indices, gathered per batch
            lambda ds: ds.repeat(2).skip(3),
            lambda ds: ds.take(13).repeat(2),
        ]
        for make in variants:
            fast = _elements(make(slices).batch(6))
            slow = _elements(make(slices).filter(keep).batch(6))  # the filter forces element-by-element batching
            assert len(fast) == len(slow)
            for f, s in zip(fast, slow):
                np.testing.assert_array_equal(f[0], s[0])
                assert f[1].tolist() == s[1].tolist()


def test_graph_mode_refusals():
    with tf.Graph().as_default():
        ds = tf.data.Dataset.range(3)
        with pytest.raises(RuntimeError, match="only supports Python-style iteration in eager mode"):
            iter(ds)
        with pytest.raises(ValueError, match="Creating variables inside a tf.data function is not supported"):
            ds.map(lambda x: x + tf.get_variable("v", [], tf.int64))
        with pytest.raises(TypeError, match="must return a `Dataset`"):
            ds.flat_map(lambda x: x)
        with pytest.raises(TypeError, match="must return a `tf.data.Dataset`"):
            ds.apply(lambda d: 3)
