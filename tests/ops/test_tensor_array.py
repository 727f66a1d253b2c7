"""tf.TensorArray against TF1's graph mode: each method's values and static shapes, run-time errors with TF's
classes and messages, gradients (TF1's tensor_array_grad), graph names; arrays made fresh each run, placed with
their first write, safe under parallel loop iterations, and on a cluster."""

from __future__ import annotations

import re

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook import errors


def _real_tf():
    real = pytest.importorskip("tensorflow").compat.v1
    real.disable_eager_execution()
    real.disable_control_flow_v2()
    return real


def _static(t):
    return None if t.shape.ndims is None else t.shape.as_list()


def _run_both(build):
    """``build(lib)`` -> list of tensors, with each library: [(values, static shapes), ...]."""
    results = []
    for lib in (tf, _real_tf()):
        with lib.Graph().as_default():
            fetches = build(lib)
            shapes = [_static(t) for t in fetches]
            with lib.Session() as sess:
                results.append((sess.run(fetches), shapes))
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
            np.testing.assert_allclose(a, b, rtol=1e-6)


def _normalized(message):
    # The run-time name of an array has a process-wide counter in it: "TensorArray TensorArray_7: ..."
    return re.sub(r"TensorArray [^\s:]+(:| has)", r"TensorArray X\1", message)


def _run_error(lib, build):
    with lib.Graph().as_default():
        fetches = build(lib)
        with lib.Session() as sess:
            try:
                sess.run(fetches)
            except Exception as e:  # noqa: BLE001 - both libraries' errors are compared below
                return type(e).__name__, str(getattr(e, "message", e))
    return None, ""


def _ta(lib, **kwargs):
    return lib.TensorArray(lib.float32, **kwargs)


def _closed_then_read(lib):
    ta = _ta(lib, size=3).write(0, 1.0)
    with lib.control_dependencies([ta.close()]):
        return [ta.read(0)]


def _concat_grad_case(lib):
    x = lib.constant([1.0, 2.0, 3.0])
    ta = _ta(lib, size=2, infer_shape=False).split(x * x, [1, 2])
    return lib.gradients(lib.reduce_sum(ta.concat() * lib.constant([1.0, 10.0, 100.0])), [x])


VALUE_CASES = {
    "write_read_stack": lambda L: [_ta(L, size=3).write(0, [1.0, 2.0]).write(2, [3.0, 4.0]).stack()],
    "dynamic_size": lambda L: (lambda t: [t.stack(), t.size()])(
        _ta(L, size=0, dynamic_size=True, element_shape=[]).write(4, 1.0).write(1, 2.0)
    ),
    "element_shape_unwritten_zeros": lambda L: (lambda t: [t.stack(), t.gather([2, 0]), t.read(0)])(
        _ta(L, size=3, element_shape=[2], clear_after_read=False).write(1, [1.0, 2.0])
    ),
    "unstack_read_size": lambda L: (lambda t: [t.read(0), t.read(2), t.size()])(
        L.TensorArray(L.int32, size=3).unstack([[1, 2], [3, 4], [5, 6]])
    ),
    "scatter_gather": lambda L: (lambda t: [t.gather([3, 1, 0])])(
        _ta(L, size=4, element_shape=[1]).scatter([3, 1], [[1.0], [2.0]])
    ),
    "concat_lengths_differ": lambda L: [
        _ta(L, size=3, infer_shape=False)
        .write(0, [[1.0]])
        .write(1, [[2.0], [3.0]])
        .write(2, [[4.0], [5.0], [6.0]])
        .concat()
    ],
    "concat_static_length": lambda L: [_ta(L, size=2).write(0, [1.0, 2.0]).write(1, [3.0, 4.0]).concat()],
    "split": lambda L: (lambda t: [t.read(0), t.read(1), t.concat()])(
        _ta(L, size=2, infer_shape=False, clear_after_read=False).split([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [1, 2])
    ),
    "split_equal_lengths_shape": lambda L: [_ta(L, size=2).split([1.0, 2.0, 3.0, 4.0], [2, 2]).stack()],
    "strings": lambda L: (lambda t: [t.stack(), t.concat(), t.read(1)])(
        L.TensorArray(L.string, size=2, clear_after_read=False).write(0, ["a"]).write(1, ["bc"])
    ),
    "identity": lambda L: [_ta(L, size=2).unstack([1.0, 2.0]).identity().stack()],
    "read_many_without_clearing": lambda L: (lambda t: [t.read(0), t.read(0), t.stack()])(
        _ta(L, size=1, clear_after_read=False).write(0, 3.0)
    ),
    "size_from_a_tensor": lambda L: [_ta(L, size=L.placeholder_with_default(4, [])).unstack(L.range(0.0, 4.0)).stack()],
    "while_loop_writes": lambda L: [
        L.while_loop(
            lambda i, t: i < 5, lambda i, t: (i + 1, t.write(i, L.cast(i, L.float32) * 2.0)), [0, _ta(L, size=5)]
        )[1].stack()
    ],
    "while_loop_dynamic": lambda L: [
        L.while_loop(
            lambda i, t: i < 4,
            lambda i, t: (i + 1, t.write(i, [i, i * i])),
            [0, L.TensorArray(L.int32, size=0, dynamic_size=True)],
        )[1].stack()
    ],
    "through_cond": lambda L: (
        lambda t: [L.cond(L.constant(True), lambda: t.write(1, 5.0), lambda: t.write(1, 7.0)).stack()]
    )(_ta(L, size=2, element_shape=[]).write(0, 1.0)),
    "empty_gather_with_shape": lambda L: [_ta(L, size=2, element_shape=[3]).gather(L.zeros([0], L.int32))],
    "size_zero_with_shape": lambda L: [
        _ta(L, size=0, element_shape=[2]).stack(),
        _ta(L, size=0, element_shape=[2]).concat(),
    ],
    "int64_and_bool": lambda L: [
        L.TensorArray(L.int64, size=2).unstack(L.constant([[1], [2]], L.int64)).stack(),
        L.TensorArray(L.bool, size=2, element_shape=[]).write(1, True).stack(),
    ],
}

ERROR_CASES = {
    "read_unwritten_shape_unknown": lambda L: [_ta(L, size=3, infer_shape=False).write(0, [1.0]).read(1)],
    "read_twice_cleared": lambda L: (lambda t: [t.read(0), t.read(0)])(_ta(L, size=3).write(0, 1.0)),
    "write_twice": lambda L: [_ta(L, size=3).write(0, 1.0).write(0, 2.0).flow],
    "write_out_of_range": lambda L: [_ta(L, size=3).write(3, 1.0).flow],
    "write_negative_index": lambda L: [_ta(L, size=2, dynamic_size=True).write(-1, 1.0).flow],
    "read_out_of_range": lambda L: [_ta(L, size=3).write(0, 1.0).read(5)],
    "split_size_mismatch": lambda L: [_ta(L, size=2).split([1.0, 2.0, 3.0], [1, 1, 1]).flow],
    "split_lengths_sum": lambda L: [_ta(L, size=2).split([1.0, 2.0, 3.0], [1, 1]).flow],
    "split_scalar": lambda L: [_ta(L, size=1).split(L.placeholder_with_default(1.0, None), [1]).flow],
    "scatter_length_mismatch": lambda L: [
        _ta(L, size=3).scatter([0, 1], L.placeholder_with_default([[1.0], [2.0], [3.0]], [None, 1])).flow
    ],
    "stack_inconsistent_shapes": lambda L: [
        _ta(L, size=2, infer_shape=False).write(0, [1.0]).write(1, [2.0, 3.0]).stack()
    ],
    "concat_inconsistent_shapes": lambda L: [
        _ta(L, size=2, infer_shape=False).write(0, [[1.0]]).write(1, [[2.0, 3.0]]).concat()
    ],
    "concat_scalar": lambda L: [
        _ta(L, size=1, infer_shape=False).write(0, L.placeholder_with_default(1.0, None)).concat()
    ],
    "stack_size_zero_unknown_shape": lambda L: [_ta(L, size=0).stack()],
    "concat_size_zero_unknown_shape": lambda L: [_ta(L, size=0).concat()],
    "write_shape_differs_at_run_time": lambda L: [
        _ta(L, size=3).write(0, [1.0, 2.0]).write(1, L.placeholder_with_default([1.0, 2.0, 3.0], [None])).flow
    ],
    "negative_size": lambda L: [_ta(L, size=L.placeholder_with_default(-1, [])).flow],
    "write_other_dtype": lambda L: [_ta(L, size=2).write(0, L.constant(1, L.int32)).flow],
    "read_closed": _closed_then_read,
    "zeros_of_strings": lambda L: [L.TensorArray(L.string, size=2).write(0, "a").stack()],
    "named_array": lambda L: [
        L.TensorArray(L.float32, size=1, tensor_array_name="foo").write(0, 1.0).write(0, 1.0).flow
    ],
}

GRAD_CASES = {
    "read": lambda L: (
        lambda x: L.gradients(
            (lambda t: t.read(1) * 3.0 + t.read(2) * t.read(1))(
                _ta(L, size=3, clear_after_read=False).unstack(x * 2.0)
            ),
            [x],
        )
    )(L.constant([1.0, 2.0, 3.0])),
    "stack": lambda L: (
        lambda x: L.gradients(
            L.reduce_sum(
                _ta(L, size=2).write(0, x[0] * x[1]).write(1, x[1]).stack() * L.constant([[1.0, 2.0], [3.0, 4.0]])
            ),
            [x],
        )
    )(L.constant([[1.0, 2.0], [3.0, 4.0]])),
    "scatter_gather": lambda L: (
        lambda x: L.gradients(
            L.reduce_sum(
                _ta(L, size=4, element_shape=[]).scatter([3, 0, 1], x[:3] ** 2).gather([0, 3]) * L.constant([5.0, 7.0])
            ),
            [x],
        )
    )(L.constant([1.0, 2.0, 3.0, 4.0])),
    "split_concat": _concat_grad_case,
    "two_gradient_calls": lambda L: (
        lambda x: (lambda y: L.gradients(y, [x]) + L.gradients(y * 3.0, [x]))(_ta(L, size=2).unstack(x).stack() * 2.0)
    )(L.constant([1.0, 2.0])),
    "unread_elements_get_zeros": lambda L: (lambda x: L.gradients(_ta(L, size=3).unstack(x).read(0), [x]))(
        L.constant([1.0, 2.0, 3.0])
    ),
    "write_in_a_loop": lambda L: (
        lambda x: L.gradients(
            L.reduce_sum(
                L.while_loop(
                    lambda i, o: i < 3,
                    lambda i, o: (i + 1, o.write(i, x[i] * L.cast(i + 1, L.float32))),
                    [0, _ta(L, size=3)],
                )[1].stack()
            ),
            [x],
        )
    )(L.constant([1.0, 2.0, 3.0])),
}


@pytest.mark.tf_oracle
@pytest.mark.parametrize("case", sorted(VALUE_CASES))
def test_values_and_static_shapes_match_tf(case):
    ours, theirs = _run_both(VALUE_CASES[case])
    _assert_same(ours, theirs)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("case", sorted(ERROR_CASES))
def test_run_time_errors_match_tf(case):
    ours = _run_error(tf, ERROR_CASES[case])
    theirs = _run_error(_real_tf(), ERROR_CASES[case])
    assert ours[0] is not None and ours[0] == theirs[0]
    first_line = ours[1].splitlines()[0]
    assert _normalized(first_line) in _normalized(theirs[1])


def test_errors_name_the_node_and_the_array():
    ta = tf.TensorArray(tf.float32, size=1, tensor_array_name="foo", name="bar")
    twice = ta.write(0, 1.0).write(0, 2.0, name="again")
    with tf.Session() as sess:
        with pytest.raises(
            errors.InvalidArgumentError, match=r"(?s)TensorArray foo_\d+: Could not write .*node again/again"
        ):
            sess.run(twice.flow)


@pytest.mark.tf_oracle
def test_build_time_errors_match_tf():
    for lib in (tf, _real_tf()):
        with lib.Graph().as_default():
            with pytest.raises(ValueError, match=r"Inconsistent shapes: saw \(3,\) but expected \(2,\)"):
                _ta(lib, size=3).write(0, [1.0, 2.0]).write(1, [1.0, 2.0, 3.0])
            with pytest.raises(ValueError, match="`size` must be provided"):
                _ta(lib)
            handle = _ta(lib, size=1).handle
            with pytest.raises(ValueError, match="both a `handle` and `size`"):
                _ta(lib, size=2, handle=handle)
            with pytest.raises(ValueError, match="flow must not be None"):
                _ta(lib, handle=handle)
            with pytest.raises(TypeError, match="Expected `handle` to be a Tensor"):
                _ta(lib, handle=3, flow=handle)
            with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
                _ta(lib, size=2).read([0])
            with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 0"):
                _ta(lib, size=2).gather(0)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("case", sorted(GRAD_CASES))
def test_gradients_match_tf(case):
    (ours, _), (theirs, _) = _run_both(GRAD_CASES[case])
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6)


@pytest.mark.tf_oracle
def test_graph_names_and_attrs_match_tf():
    graphs = []
    for lib in (tf, _real_tf()):
        with lib.Graph().as_default() as g:
            x = lib.constant([1.0, 2.0], name="x")
            ta = lib.TensorArray(lib.float32, size=2).unstack(x)
            y = ta.read(1)
            lib.gradients(y, [x])
            ta.stack()
            lib.TensorArray(lib.float32, size=2).split(x, [1, 1]).concat()
            arrays = [op for op in g.get_operations() if op.type.startswith("TensorArray")]
            graphs.append(
                (
                    sorted((op.name, op.type) for op in arrays),
                    sorted(k for k in g.get_operation_by_name("TensorArray").node_def["attr"] if not k.startswith("_"))
                    if lib is tf
                    else sorted(g.get_operation_by_name("TensorArray").node_def.attr),
                    g.get_operation_by_name(
                        "gradients/TensorArrayReadV3_grad/TensorArrayGrad/TensorArrayGradV3"
                    ).get_attr("source"),
                    (ta.handle.dtype.name, ta.handle.shape.as_list(), ta.flow.dtype.name, ta.flow.shape.as_list()),
                )
            )
    ours, theirs = graphs
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1]
    assert ours[2] in (theirs[2], theirs[2].decode() if isinstance(theirs[2], bytes) else theirs[2])
    assert ours[3] == theirs[3]


def test_each_run_makes_a_fresh_array():
    x = tf.placeholder(tf.float32, [None])
    ta = tf.TensorArray(tf.float32, size=tf.shape(x)[0]).unstack(x)
    doubled = ta.read(0) * 2.0
    with tf.Session() as sess:
        for values in ([1.0, 2.0], [5.0], [7.0, 8.0, 9.0]):  # no "already written" nor "already read" across runs
            assert sess.run(doubled, {x: values}) == values[0] * 2.0


def test_a_loop_makes_a_fresh_array_each_iteration():
    def body(i, total):
        inner = tf.TensorArray(tf.int32, size=2).write(0, i).write(1, i * 10)
        return i + 1, total + tf.reduce_sum(inner.stack())

    _, total = tf.while_loop(lambda i, t: i < 4, body, [0, 0])
    with tf.Session() as sess:
        assert sess.run(total) == sum(i + i * 10 for i in range(4))


def test_parallel_iterations_write_and_read_safely():
    n = 300
    x = tf.constant(np.arange(n, dtype=np.float32))
    source = tf.TensorArray(tf.float32, size=n).unstack(x)
    out = tf.TensorArray(tf.float32, size=n)
    _, out = tf.while_loop(
        lambda i, o: i < n, lambda i, o: (i + 1, o.write(i, source.read(i) * 3.0)), [0, out], parallel_iterations=32
    )
    with tf.Session() as sess:
        for _ in range(3):
            np.testing.assert_array_equal(sess.run(out.stack()), np.arange(n, dtype=np.float32) * 3.0)


def test_the_array_is_placed_with_its_first_write():
    with tf.device("/cpu:0"):
        ta = tf.TensorArray(tf.float32, size=2)
    with tf.device("/gpu:0"):
        value = tf.constant([1.0, 2.0], name="value")
    ta = ta.write(0, value).write(1, value)
    stacked = ta.stack()
    with tf.Session(config=tf.ConfigProto(virtual_gpus=1)) as sess:
        np.testing.assert_array_equal(sess.run(stacked), [[1.0, 2.0], [1.0, 2.0]])
        placed = {row["name"]: row["device"] for row in sess.placement(stacked)["nodes"]}
    gpu = "/job:localhost/replica:0/task:0/device:GPU:0"
    assert placed["TensorArray"] == gpu and placed["TensorArrayStack/TensorArrayGatherV3"] == gpu


def test_strings_keep_the_array_on_the_cpu():
    with tf.device("/gpu:0"):
        words = tf.TensorArray(tf.string, size=1, colocate_with_first_write_call=False).write(0, "a")
    with tf.Session(config=tf.ConfigProto(virtual_gpus=1, allow_soft_placement=True)) as sess:
        assert sess.run(words.read(0)) == b"a"
        placed = {row["name"]: row["device"] for row in sess.placement(words.flow)["nodes"]}
    assert placed["TensorArray"].endswith("CPU:0")


@pytest.mark.slow
@pytest.mark.cluster
def test_arrays_live_on_the_task_of_their_op_in_a_cluster():
    from tests.distributed.cluster_util import LocalCluster

    with LocalCluster(jobs={"worker": 2}) as cluster:
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [None], name="x")
        with tf.device("/job:worker/task:1"):
            doubled = x * 2.0
            ta = tf.TensorArray(tf.float32, size=tf.shape(x)[0]).unstack(doubled)
            y = ta.read(1) + ta.read(0)
        (dx,) = tf.gradients(y, [x])
        with tf.Session(cluster.target("worker", 0)) as sess:
            for values in ([1.0, 2.0], [3.0, 4.0, 5.0]):
                got, grad = sess.run([y, dx], {x: values})
                assert got == 2.0 * (values[0] + values[1])
                np.testing.assert_array_equal(grad, [2.0, 2.0] + [0.0] * (len(values) - 2))
            placed = sess.placement([y, dx])["nodes"]
    arrays = {row["name"]: row["device"] for row in placed if row["op"].startswith("TensorArray")}
    assert arrays and {device for device in arrays.values()} == {"/job:worker/replica:0/task:1/device:CPU:0"}, arrays


def test_unpinned_arrays_stay_on_the_masters_task_while_variables_go_to_the_state_task():
    from dtf_notebook.placement.placer import place
    from dtf_notebook.runtime.local_backend import placement_nodes

    x = tf.placeholder(tf.float32, [None, 2], name="x")
    tf.map_fn(lambda r: r * 2.0, x * 3.0, name="map")
    tf.Variable(1.0, name="v")
    devices = ["/job:ps/replica:0/task:0/device:CPU:0", "/job:worker/replica:0/task:0/device:CPU:0"]
    nodes = placement_nodes(tf.get_default_graph().get_operations())
    placed, _ = place(nodes, devices, default_job="worker", default_task=0, state_task=("ps", 0))
    assert placed["v"] == devices[0]  # a variable: the cluster's state task
    for name in ("map/TensorArray", "map/while/mul", "mul"):  # a per-step array and what it is placed with: as TF
        assert placed[name] == devices[1]
