"""Local Session: fetch/feed structures, plans, variables, devices, config and errors."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.runtime.config import ConfigProto as RuntimeConfig


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


def test_hello_world_string():
    c = tf.constant("Hello, distributed TensorFlow!")
    with tf.Session() as sess:
        assert sess.run(c) == b"Hello, distributed TensorFlow!"


def test_nested_fetch_structures():
    a, b = tf.constant(1.0), tf.constant([2, 3])
    nt = collections.namedtuple("NT", ["x", "y"])
    with tf.Session() as sess:
        out = sess.run({"a": [a, (b, a)], "nt": nt(a, b), "op": tf.no_op()})
    assert out["a"][0] == 1.0 and isinstance(out["a"][1], tuple)
    np.testing.assert_array_equal(out["a"][1][0], [2, 3])
    assert isinstance(out["nt"], nt) and out["nt"].x == 1.0
    assert out["op"] is None


def test_fetch_by_name_and_variable():
    v = tf.Variable([1.0, 2.0], name="v")
    tf.identity(v, name="r")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run("r:0"), [1.0, 2.0])
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
        assert sess.run("r") is None  # an operation name fetches None


def test_fetch_returns_copies_not_live_buffers():
    v = tf.Variable([1.0, 2.0])
    inc = tf.assign_add(v, [1.0, 1.0])
    with tf.Session() as sess:
        sess.run(v.initializer)
        before = sess.run(v)
        sess.run(inc)
        np.testing.assert_array_equal(before, [1.0, 2.0])


def test_feeds_placeholders_and_any_tensor():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = tf.identity(x)
    z = tf.identity(y)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(z, {x: [[1, 2]]}), [[1, 2]])
        np.testing.assert_array_equal(sess.run(z, {y: [[5, 6]]}), [[5, 6]])  # x need not be fed
        np.testing.assert_array_equal(sess.run(z, {"x:0": np.ones((3, 2))}), np.ones((3, 2)))
        assert sess.run(z, {x: [[1, 2]]}).dtype == np.float32


def test_bad_feeds_raise_invalid_argument():
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Cannot feed value of shape \(3,\) for Tensor 'x:0'"):
            sess.run(x, {x: [1, 2, 3]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="dtype float32"):
            sess.run(x, {x: ["a", "b"]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot interpret feed_dict key"):
            sess.run(x, {"nope:0": [1, 2]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="You must feed a value for placeholder tensor 'x'"):
            sess.run(x)


def test_only_needed_subgraph_runs():
    x = tf.placeholder(tf.float32, name="x")
    unused = tf.identity(x)  # would fail: x is not fed
    c = tf.constant(3.0)
    with tf.Session() as sess:
        assert sess.run(c) == 3.0
        del unused


def test_plans_are_cached_per_signature():
    x = tf.placeholder(tf.float32, [])
    y = tf.identity(x)
    with tf.Session() as sess:
        sess.run(y, {x: 1.0})
        backend = sess.backend
        n = len(backend._plans)
        sess.run(y, {x: 2.0})
        assert len(backend._plans) == n
        sess.run([y, x], {x: 2.0})
        assert len(backend._plans) == n + 1


def test_uninitialized_variable_error_names_the_variable():
    v = tf.Variable(1.0, name="weights")
    r = tf.identity(v, name="use_it")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="Attempting to use uninitialized value weights"):
            sess.run(r)


def test_runtime_error_names_node_device_and_user_line():
    a = tf.placeholder(tf.float32, [None])
    v = tf.Variable([1.0, 2.0], name="v")
    bad = tf.assign(v, a, validate_shape=True, name="bad_assign")
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(bad, {a: [1.0, 2.0, 3.0]})
    message = str(info.value)
    assert "bad_assign" in message and "device:CPU:0" in message and "test_session.py" in message
    assert info.value.op.name == "bad_assign"


def test_local_sessions_do_not_share_variables():
    v = tf.Variable(1.0)
    inc = tf.assign_add(v, 1.0)
    with tf.Session() as s1:
        s1.run(v.initializer)
        s1.run(inc)
        with tf.Session() as s2:
            s2.run(v.initializer)
            assert s2.run(v) == 1.0
        assert s1.run(v) == 2.0


def test_closed_session_refuses_to_run():
    sess = tf.Session()
    sess.close()
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(tf.constant(1.0))


def test_default_session_eval_and_run():
    c = tf.constant(2.0)
    op = tf.no_op()
    with pytest.raises(ValueError, match="No default session"):
        c.eval()
    with tf.Session() as sess:
        assert tf.get_default_session() is sess
        assert c.eval() == 2.0
        op.run()
    assert tf.get_default_session() is None
    sess = tf.Session()
    with sess.as_default():
        assert c.eval() == 2.0
    assert c.eval(session=sess) == 2.0
    sess.close()


def test_interactive_session():
    c = tf.constant([1, 2])
    sess = tf.InteractiveSession()
    try:
        np.testing.assert_array_equal(c.eval(), [1, 2])
    finally:
        sess.close()
    assert tf.get_default_session() is None


def test_make_callable():
    x = tf.placeholder(tf.float32, [])
    y = tf.identity(x)
    with tf.Session() as sess:
        f = sess.make_callable([y], [x])
        assert f(3.0) == [3.0]
        with pytest.raises(TypeError, match="Expected 1 feed values"):
            f()


def test_use_locking_assignments_from_threads_lose_no_update():
    import threading

    v = tf.Variable(0.0)
    inc = tf.assign_add(v, 1.0, use_locking=True)
    with tf.Session() as sess:
        sess.run(v.initializer)

        def work():
            for _ in range(200):
                sess.run(inc)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sess.run(v) == 800.0


# ---- devices and config -----------------------------------------------------------------------
def test_missing_device_error_names_node_request_and_available_devices():
    with tf.device("/gpu:3"):
        c = tf.constant(1.0, name="on_gpu3")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(c)
    message = str(info.value)
    assert "on_gpu3" in message and "GPU:3" in message and "/job:localhost/replica:0/task:0/device:CPU:0" in message


def test_soft_placement_falls_back_to_cpu():
    with tf.device("/gpu:3"):
        c = tf.constant(1.0, name="on_gpu3")
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        assert sess.run(c) == 1.0


def test_virtual_gpus_place_and_run():
    with tf.device("/gpu:1"):
        c = tf.constant([1.0, 2.0], name="g1")
        d = tf.identity(c, name="g1_id")
    with tf.device("/cpu:0"):
        e = tf.identity(d, name="cpu_id")
    meta = tf.RunMetadata()
    config = tf.ConfigProto(virtual_gpus=2)
    with tf.Session(config=config) as sess:
        names = [d.name for d in sess.list_devices()]
        assert names[-1] == "/job:localhost/replica:0/task:0/device:GPU:1"
        np.testing.assert_array_equal(
            sess.run(e, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=meta), [1, 2]
        )
    devices = {s.node_name: dev.device for dev in meta.step_stats.dev_stats for s in dev.node_stats}
    assert devices["g1_id"].endswith("GPU:1") and devices["cpu_id"].endswith("CPU:0")


def test_virtual_gpus_from_environment(monkeypatch):
    monkeypatch.setenv("DTF_VIRTUAL_GPUS", "2")
    with tf.device("/gpu:1"):
        c = tf.constant(1.0)
    with tf.Session() as sess:
        assert sess.run(c) == 1.0
    monkeypatch.setenv("DTF_VIRTUAL_GPUS", "two")
    with pytest.raises(tf.errors.InvalidArgumentError, match="DTF_VIRTUAL_GPUS"):
        tf.Session()


def test_unpinned_ops_prefer_gpu_but_strings_stay_on_cpu():
    c = tf.constant(1.0, name="num")
    s = tf.constant("text", name="txt")
    with tf.device("/gpu:0"):
        s2 = tf.identity(s, name="txt_id")
    meta = tf.RunMetadata()
    with tf.Session(config=tf.ConfigProto(virtual_gpus=1, allow_soft_placement=True)) as sess:
        sess.run([c, s2], options=tf.RunOptions(trace_level=3), run_metadata=meta)
    devices = {s.node_name: dev.device for dev in meta.step_stats.dev_stats for s in dev.node_stats}
    assert devices["num"].endswith("GPU:0")
    assert devices["txt"].endswith("CPU:0") and devices["txt_id"].endswith("CPU:0")


def test_device_count_hides_gpus():
    config = tf.ConfigProto(device_count={"GPU": 0})
    with tf.Session(config=config) as sess:
        assert [d.device_type for d in sess.list_devices()] == ["CPU"]


@pytest.mark.tf_oracle
def test_list_devices_reads_as_in_tf1():
    real = pytest.importorskip("tensorflow").compat.v1
    with real.Graph().as_default(), real.Session() as sess:
        theirs = sess.list_devices()[0]
    with tf.Session() as sess:
        ours = sess.list_devices()[0]
    for attribute in ("name", "device_type", "memory_limit_bytes"):
        assert type(getattr(ours, attribute)) is type(getattr(theirs, attribute)), attribute
    assert (ours.name, ours.device_type) == (theirs.name, theirs.device_type)


@pytest.mark.tf_oracle
def test_device_count_makes_cpu_devices_as_tf1_does():
    real = pytest.importorskip("tensorflow").compat.v1

    def run(lib):
        with lib.Graph().as_default():
            with lib.device("/cpu:1"):
                doubled = lib.constant(1.0) * 2
            with lib.Session(config=lib.ConfigProto(device_count={"CPU": 3})) as sess:
                names = [d.name for d in sess.list_devices() if d.device_type == "CPU"]
                return names, float(sess.run(doubled))

    assert run(tf) == run(real)
    for lib in (tf, real):
        with pytest.raises(lib.errors.NotFoundError, match="No CPU devices are available in this process"):
            with lib.Graph().as_default(), lib.Session(config=lib.ConfigProto(device_count={"CPU": 0})) as sess:
                sess.list_devices()


def test_log_device_placement(capfd):
    tf.constant(1.0, name="logged")
    with tf.Session(config=tf.ConfigProto(log_device_placement=True)) as sess:
        sess.run("logged:0")
    err = capfd.readouterr().err
    assert "logged: (Const): /job:localhost/replica:0/task:0/device:CPU:0" in err


def test_config_round_trip_and_gpu_options():
    config = tf.ConfigProto()
    config.gpu_options.per_process_gpu_memory_fraction = 0.4
    config.gpu_options.allow_growth = True
    again = tf.ConfigProto.FromString(config.SerializeToString())
    assert again.gpu_options.per_process_gpu_memory_fraction == 0.4 and again.gpu_options.allow_growth
    runtime = RuntimeConfig.from_dict(RuntimeConfig.from_proto(config).to_dict())
    assert runtime.gpu_options.per_process_gpu_memory_fraction == 0.4 and runtime.gpu_options.allow_growth
    with pytest.raises(ValueError, match="bogus"):
        RuntimeConfig.from_dict({"bogus": 1})
    with pytest.raises(TypeError, match="config must be a tf.ConfigProto"):
        tf.Session(config={"allow_soft_placement": True})


def test_unknown_target_scheme():
    with pytest.raises(tf.errors.InvalidArgumentError, match="scheme://host:port"):
        tf.Session("localhost:2222")


def test_feeding_one_output_of_a_multi_output_op_keeps_the_fed_value():
    a, b = tf.split(tf.constant([1.0, 2.0]), 2)
    total = a + b
    with tf.Session() as sess:
        assert sess.run(total, {b: [10.0]})[0] == 11.0


def test_control_dependency_on_a_fed_placeholder():
    x = tf.placeholder(tf.float32, [])
    with tf.control_dependencies([x.op]):
        y = tf.constant(2.0)
    with tf.Session() as sess:
        assert sess.run(y, {x: 1.0}) == 2.0


def test_assigning_an_initialized_string_variable_replaces_its_value():
    with tf.Graph().as_default():
        v = tf.Variable(tf.constant([b"a", b"b"]))
        a = tf.assign(v, tf.constant([b"x", b"yy"]))
        with tf.Session() as sess:
            sess.run(v.initializer)
            sess.run(a)
            assert sess.run(v).tolist() == [b"x", b"yy"]
