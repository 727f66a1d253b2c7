"""tf.map_fn, tf.scan, tf.foldl and tf.foldr against TF1's graph mode: values and static shapes on tensors and
nested structures, errors, graph names, gradients through the loop; parallel iterations, variables, devices."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf


def _real_tf():
    real = pytest.importorskip("tensorflow").compat.v1
    real.disable_eager_execution()
    real.disable_control_flow_v2()
    return real


def _flat(x):
    if isinstance(x, list | tuple):
        return [leaf for item in x for leaf in _flat(item)]
    if isinstance(x, dict):
        return [leaf for key in sorted(x) for leaf in _flat(x[key])]
    return [x]


def _run_both(build):
    """``build(lib)`` -> a structure of tensors, with each library: [(flat values, flat static shapes), ...]."""
    results = []
    for lib in (tf, _real_tf()):
        with lib.Graph().as_default():
            fetches = build(lib)
            shapes = [None if t.shape.ndims is None else t.shape.as_list() for t in _flat(fetches)]
            with lib.Session() as sess:
                sess.run(lib.global_variables_initializer())
                results.append((_flat(sess.run(fetches)), shapes))
    return results


def _assert_same(ours, theirs):
    (values, shapes), (tf_values, tf_shapes) = ours, theirs
    assert shapes == tf_shapes
    assert len(values) == len(tf_values)
    for a, b in zip(values, tf_values):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        if a.dtype == object:
            assert a.tolist() == b.tolist()
        else:
            np.testing.assert_allclose(a, b, rtol=1e-5)


X = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]

VALUE_CASES = {
    "map": lambda L: L.map_fn(lambda v: v * 2.0, L.constant(X)),
    "map_nested_elems": lambda L: L.map_fn(
        lambda e: (e[0] + 1.0, {"s": e[1]["s"] * 2}), (L.constant(X), {"s": L.constant([1, 2, 3])})
    ),
    "map_dtype": lambda L: L.map_fn(
        lambda e: L.reduce_sum(e[0]) * L.cast(e[1], L.float32), (L.constant(X), L.constant([1, 2, 3])), dtype=L.float32
    ),
    "map_dtype_structure": lambda L: L.map_fn(
        lambda v: (L.cast(v, L.int32), L.reduce_sum(v)), L.constant(X), dtype=(L.int32, L.float32)
    ),
    "map_unknown_length": lambda L: L.map_fn(lambda v: v[:1], L.placeholder_with_default(X, [None, 2])),
    "map_options": lambda L: L.map_fn(
        lambda v: L.reduce_sum(v),
        L.constant(X),
        infer_shape=False,
        parallel_iterations=1,
        back_prop=False,
        swap_memory=True,
        name="mine",
    ),
    "map_varying_shapes": lambda L: L.map_fn(
        lambda v: L.reduce_sum(L.range(v)), L.constant([1, 2, 3]), infer_shape=False
    ),
    "map_strings": lambda L: L.map_fn(lambda s: s, L.constant(["a", "bc"])),
    "map_reads_variable": lambda L: L.map_fn(lambda r: r * L.Variable([1.0, 2.0], name="v"), L.constant(X)),
    "scan": lambda L: L.scan(lambda a, v: a + v, L.constant(X)),
    "scan_initializer": lambda L: L.scan(lambda a, v: a * v, L.constant([1.0, 2.0, 3.0]), initializer=2.0),
    "scan_nested_initializer": lambda L: L.scan(
        lambda a, v: (a[0] + v, a[1] * v), L.constant([1.0, 2.0, 3.0]), initializer=(L.constant(0.0), L.constant(1.0))
    ),
    "scan_reverse": lambda L: L.scan(lambda a, v: a + v, L.constant([1, 2, 3, 4]), reverse=True),
    "scan_reverse_initializer": lambda L: L.scan(
        lambda a, v: a * 10 + v, L.constant([1, 2, 3]), initializer=0, reverse=True
    ),
    "scan_nested_elems": lambda L: L.scan(
        lambda a, v: (a[0] + v[0], a[1] + v[1]), (L.constant([1.0, 2.0]), L.constant([3, 4]))
    ),
    "scan_no_shape_inference": lambda L: L.scan(lambda a, v: a + v, L.constant([1.0, 2.0]), infer_shape=False),
    "scan_unknown_length": lambda L: L.scan(lambda a, v: a + v, L.placeholder_with_default([1.0, 2.0, 3.0], [None])),
    "foldl": lambda L: L.foldl(lambda a, v: a - v, L.constant([1, 2, 3, 4])),
    "foldl_initializer": lambda L: L.foldl(lambda a, v: a * 10 + v, L.constant([1, 2, 3]), initializer=7),
    "foldl_nested": lambda L: L.foldl(
        lambda a, v: (a[0] + v[0], a[1] * v[1]),
        (L.constant([1.0, 2.0]), L.constant([3.0, 4.0])),
        initializer=(0.0, 1.0),
    ),
    "foldr": lambda L: L.foldr(lambda a, v: a - v, L.constant([1, 2, 3, 4])),
    "foldr_initializer": lambda L: L.foldr(lambda a, v: a * 10 + v, L.constant([1, 2, 3]), initializer=7),
    "foldr_unknown_length": lambda L: L.foldr(lambda a, v: a + v, L.placeholder_with_default([1.0, 2.0, 3.0], [None])),
    "fold_matrices": lambda L: L.foldl(lambda a, m: L.matmul(a, m), L.constant([[[1.0, 1.0], [0.0, 1.0]]] * 3)),
}


@pytest.mark.tf_oracle
@pytest.mark.parametrize("case", sorted(VALUE_CASES))
def test_values_and_static_shapes_match_tf(case):
    ours, theirs = _run_both(VALUE_CASES[case])
    _assert_same(ours, theirs)


BUILD_ERROR_CASES = {
    "scalar_elems": (ValueError, "1\\+ dimensional", lambda L: L.map_fn(lambda v: v, L.constant(1.0))),
    "no_tensors": (ValueError, "does not contain any Tensors", lambda L: L.map_fn(lambda v: v, [])),
    "fn_structure": (
        ValueError,
        "don't have the same nested structure",
        lambda L: L.map_fn(lambda v: (v, v), L.constant([1.0, 2.0])),
    ),
    "scan_structure": (
        ValueError,
        "don't have the same nested structure",
        lambda L: L.scan(lambda a, v: (a, v), L.constant([1.0, 2.0])),
    ),
    "first_dims_differ": (
        ValueError,
        "Dimensions 2 and 3 are not compatible",
        lambda L: L.map_fn(lambda v: v[0], (L.constant([1.0, 2.0]), L.constant([1.0, 2.0, 3.0]))),
    ),
}


@pytest.mark.tf_oracle
@pytest.mark.parametrize("case", sorted(BUILD_ERROR_CASES))
def test_build_errors_match_tf(case):
    error, pattern, build = BUILD_ERROR_CASES[case]
    for lib in (tf, _real_tf()):
        with lib.Graph().as_default():
            with pytest.raises(error, match=pattern):
                build(lib)


def test_fold_and_scan_need_a_callable():
    for fn in (tf.map_fn, tf.foldl, tf.foldr, tf.scan):
        with pytest.raises(TypeError, match="3 is not callable"):
            fn(3, tf.constant([1.0]))


RUN_ERROR_CASES = {
    "result_dtype": lambda L: L.map_fn(lambda v: L.cast(v, L.int32), L.constant([1.0, 2.0])),
    "result_shapes_vary": lambda L: L.map_fn(lambda v: L.range(v), L.constant([1, 2])),
    "result_shapes_vary_without_inference": lambda L: L.map_fn(
        lambda v: L.range(v), L.constant([1, 2]), infer_shape=False
    ),
}


@pytest.mark.tf_oracle
@pytest.mark.parametrize("case", sorted(RUN_ERROR_CASES))
def test_run_time_errors_match_tf(case):
    raised = []
    for lib in (tf, _real_tf()):
        with lib.Graph().as_default():
            out = RUN_ERROR_CASES[case](lib)
            with lib.Session() as sess:
                with pytest.raises(lib.errors.InvalidArgumentError) as info:
                    sess.run(out)
                raised.append(str(info.value.message))
    ours, theirs = raised
    first = ours.splitlines()[0].split(": ", 1)[-1]  # past "TensorArray <run-time name>: "
    assert first in theirs


@pytest.mark.tf_oracle
def test_graph_names_match_tf():
    graphs = []
    for lib in (tf, _real_tf()):
        with lib.Graph().as_default() as g:
            x = lib.constant(X, name="x")
            lib.map_fn(lambda v: v * 2.0, x)
            lib.scan(lambda a, v: a + v, x, reverse=True)
            lib.foldl(lambda a, v: a + v, x)
            lib.foldr(lambda a, v: a * v, x, initializer=lib.ones([2]), name="right")
            # The array's handle enters a loop by RefEnter here (it is a reference), by Enter in TF.
            kinds = {"RefEnter": "Enter", "AddV2": "Add"}
            graphs.append(sorted((op.name, kinds.get(op.type, op.type)) for op in g.get_operations()))
    assert graphs[0] == graphs[1]


GRAD_CASES = {
    "map": lambda L, v: L.map_fn(lambda r: r * r, v),
    "map_nested": lambda L, v: L.map_fn(lambda e: (e[0] * e[1], e[1]), (v, v * 3.0)),
    "map_dtype": lambda L, v: L.map_fn(lambda r: (L.reduce_sum(r), r * 2.0), v, dtype=(L.float32, L.float32))[0],
    "scan": lambda L, v: L.scan(lambda a, r: a * r, v),
    "scan_reverse": lambda L, v: L.scan(lambda a, r: a * r + 1.0, v, reverse=True),
    "scan_initializer": lambda L, v: L.scan(lambda a, r: a + L.reduce_sum(r * r), v, initializer=0.0),
    "foldl": lambda L, v: L.foldl(lambda a, r: a * r, v),
    "foldr": lambda L, v: L.foldr(lambda a, r: a * r + r, v, initializer=L.ones([2])),
}


@pytest.mark.tf_oracle
@pytest.mark.parametrize("case", sorted(GRAD_CASES))
def test_gradients_through_the_loop_match_tf(case):
    def build(lib):
        v = lib.constant(X)
        out = GRAD_CASES[case](lib, v)
        return lib.gradients(lib.reduce_sum(lib.stack(_flat(out)) if isinstance(out, tuple) else out), [v])

    ours, theirs = _run_both(build)
    np.testing.assert_allclose(ours[0][0], theirs[0][0], rtol=1e-5)


@pytest.mark.tf_oracle
def test_no_gradient_through_a_loop_without_back_prop_like_tf():
    def build(lib):
        v = lib.constant([1.0, 2.0])
        y = lib.map_fn(lambda r: r * r, v, back_prop=False)
        return lib.gradients(lib.reduce_sum(y) + lib.reduce_sum(v), [v])

    ours, theirs = _run_both(build)
    _assert_same(ours, theirs)


def test_many_elements_with_parallel_iterations():
    values = np.arange(500, dtype=np.float32).reshape(250, 2)
    out = tf.map_fn(lambda r: tf.reduce_sum(r * r), tf.constant(values), parallel_iterations=64)
    sums = tf.scan(lambda a, r: a + r, tf.constant(values), parallel_iterations=64)
    with tf.Session() as sess:
        for _ in range(2):
            got, cumulative = sess.run([out, sums])
            np.testing.assert_allclose(got, (values * values).sum(axis=1))
            np.testing.assert_allclose(cumulative, np.cumsum(values, axis=0))


@pytest.mark.tf_oracle
def test_empty_elems_like_tf():
    def build(lib):
        x = lib.placeholder_with_default(np.zeros([0, 2], np.float32), [None, 2])
        return [lib.map_fn(lambda r: r * 2.0, x), lib.foldl(lambda a, r: a + r, x, initializer=lib.zeros([2]))]

    ours, theirs = _run_both(build)
    _assert_same(ours, theirs)


def test_map_fn_restores_the_variable_scope_caching_device():
    tf.map_fn(lambda r: r, tf.constant([1.0]))
    assert tf.get_variable_scope().caching_device is None


def test_map_fn_runs_on_a_gpu_without_soft_placement():
    with tf.device("/gpu:0"):
        out = tf.map_fn(lambda r: r * 3.0, tf.constant(X), name="on_gpu")
    with tf.Session(config=tf.ConfigProto(virtual_gpus=1)) as sess:
        np.testing.assert_allclose(sess.run(out), np.array(X) * 3.0)
        placed = {row["name"]: row["device"] for row in sess.placement(out)["nodes"]}
    assert placed["on_gpu/while/mul"].endswith("GPU:0")
    assert placed["on_gpu/TensorArray"].endswith("GPU:0")
