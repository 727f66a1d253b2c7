"""Graph API: naming, scopes, collections, control dependencies, colocation, devices, containers."""

from __future__ import annotations

import pytest

import dtf_notebook as dtf
import dtf_notebook.compat.v1 as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


def test_same_names_through_both_imports():
    assert dtf.Session is tf.Session and dtf.constant is tf.constant
    # dtf_notebook.train stays the package (its modules import by path) and answers every tf.train name
    assert dtf.train.Saver is tf.train.Saver and dtf.train.MonitoredTrainingSession is tf.train.MonitoredTrainingSession


def test_unique_names_and_tensor_names(fresh_graph):
    a = tf.constant(1.0, name="a")
    a1 = tf.constant(2.0, name="a")
    a2 = tf.constant(2.0, name="A")  # names are unique case-insensitively, as in TF
    assert (a.name, a1.name, a2.name) == ("a:0", "a_1:0", "A_2:0")
    assert fresh_graph.get_tensor_by_name("a_1:0") is a1
    assert fresh_graph.get_operation_by_name("a") is a.op
    assert a.op.outputs[0] is a and a.value_index == 0


def test_lookup_errors_name_the_bad_value(fresh_graph):
    tf.constant(1.0, name="a")
    with pytest.raises(KeyError, match="'b:0'"):
        fresh_graph.get_tensor_by_name("b:0")
    with pytest.raises(KeyError, match="only has 1 outputs"):
        fresh_graph.get_tensor_by_name("a:3")
    with pytest.raises(ValueError, match="looks like an \\(invalid\\) Operation name"):
        fresh_graph.get_tensor_by_name("a")
    with pytest.raises(KeyError, match="'nope'"):
        fresh_graph.get_operation_by_name("nope")


def test_name_scopes_nest_and_uniquify():
    with tf.name_scope("layer") as scope:
        assert scope == "layer/"
        a = tf.constant(1.0, name="w")
        with tf.name_scope("inner"):
            b = tf.constant(1.0, name="w")
    with tf.name_scope("layer") as scope2:
        c = tf.constant(1.0, name="w")
    with tf.name_scope("layer/"):
        d = tf.constant(1.0, name="w")
    with tf.name_scope(None):
        e = tf.constant(1.0, name="top")
    assert scope2 == "layer_1/"
    assert [t.op.name for t in (a, b, c, d, e)] == ["layer/w", "layer/inner/w", "layer_1/w", "layer/w_1", "top"]


def test_name_scope_default_name_and_values(fresh_graph):
    x = tf.constant(1.0)
    with tf.name_scope(None, "default", [x]) as scope:
        assert scope == "default/"
    other = tf.Graph()
    with other.as_default():
        y = tf.constant(2.0)
    with tf.name_scope("s", values=[y]):
        assert tf.get_default_graph() is other


def test_collections_and_variables(fresh_graph):
    v = tf.Variable(1.0, name="v")
    w = tf.Variable(2.0, name="w", trainable=False)
    local = tf.Variable(0, name="counter", trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES])
    assert tf.global_variables() == [v, w]
    assert tf.trainable_variables() == [v]
    assert tf.local_variables() == [local]
    tf.add_to_collection("mine", 3)
    tf.add_to_collections(["a", "b"], 4)
    assert tf.get_collection("mine") == [3] and tf.get_collection("b") == [4]
    tf.get_collection_ref("mine").append(5)
    assert tf.get_collection("mine") == [3, 5]
    assert [x.name for x in tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="v")] == ["v:0"]


def test_variable_structure(fresh_graph):
    with tf.device("/job:ps/task:0"):
        v = tf.Variable([1.0, 2.0], name="weights")
    assert v.name == "weights:0" and v.op.type == "VariableV2" and v.shape.as_list() == [2]
    assert v.initializer.name == "weights/Assign" and v.value().op.name == "weights/read"
    assert v.device == "/job:ps/task:0"
    assert v.initializer.device == "/job:ps/task:0" and v.value().device == "/job:ps/task:0"
    assert v.initializer.get_attr("_class") == ["loc:@weights"]
    assert v.value().op.get_attr("_class") == ["loc:@weights"]


def test_control_dependencies(fresh_graph):
    a = tf.no_op(name="a")
    b = tf.constant(1.0, name="b")
    with tf.control_dependencies([a, b]):
        c = tf.identity(b, name="c")  # b is already a data input: not added as control input
        with tf.control_dependencies(None):
            d = tf.constant(2.0, name="d")
        with tf.control_dependencies([d]):
            e = tf.constant(3.0, name="e")
    assert [op.name for op in c.op.control_inputs] == ["a"]
    assert d.op.control_inputs == []
    assert sorted(op.name for op in e.op.control_inputs) == ["a", "b", "d"]
    with pytest.raises(TypeError, match="Control input must be Operation or Tensor"):
        with tf.control_dependencies([1]):
            pass


def test_colocate_with_overrides_device_scopes(fresh_graph):
    with tf.device("/job:ps/task:1"):
        v = tf.Variable(1.0, name="v")
    with tf.device("/job:worker/task:0"):
        with tf.colocate_with(v):
            c = tf.identity(v, name="c")
            with tf.device("/gpu:1"):
                d = tf.identity(v, name="d")
        e = tf.identity(v, name="e")
    assert c.device == "/job:ps/task:1" and c.op.get_attr("_class") == ["loc:@v"]
    assert d.device == "/job:ps/task:1"
    assert e.device == "/job:worker/task:0"
    assert v.op.colocation_groups() == ["loc:@v"]


def test_device_nesting_from_seed():
    with tf.device("/job:ps/task:0/cpu:0"):
        a = tf.constant(1.0)
    with tf.device("/job:worker/task:0/gpu:1"):
        b = a + 2
    c = a + b
    assert a.device == "/job:ps/task:0/device:CPU:0"
    assert b.device == "/job:worker/task:0/device:GPU:1"
    assert c.device == ""
    with tf.device("/job:worker"):
        with tf.device("/gpu:1"):
            p1 = tf.identity(a)
            with tf.device("/task:1"):
                p2 = tf.identity(a)
        with tf.device(None):
            p3 = tf.identity(a)
    assert p1.device == "/job:worker/device:GPU:1"
    assert p2.device == "/job:worker/task:1/device:GPU:1"
    assert p3.device == ""


def test_device_function_sees_inner_spec():
    seen = []

    def fn(op):
        seen.append(op.device)
        return "/job:ps/task:2" if op.type == "VariableV2" else op.device

    with tf.device(fn):
        with tf.device("/cpu:0"):
            v = tf.Variable(1.0, name="v")
    assert v.device == "/job:ps/task:2"
    assert "/device:CPU:0" in seen


def test_container_attr(fresh_graph):
    with tf.container("exp1"):
        v = tf.Variable(1.0, name="v")
    w = tf.Variable(1.0, name="w")
    assert v.op.get_attr("container") == "exp1" and w.op.get_attr("container") == ""


def test_finalize_blocks_new_ops(fresh_graph):
    tf.constant(1.0)
    fresh_graph.finalize()
    with pytest.raises(RuntimeError, match="finalized"):
        tf.constant(2.0)


def test_tensor_properties_and_misuse(fresh_graph):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    assert str(x.shape) == "(?, 3)" and x.shape[1].value == 3 and x.get_shape().as_list() == [None, 3]
    x.set_shape([2, 3])
    assert x.shape.as_list() == [2, 3]
    with pytest.raises(ValueError):
        x.set_shape([4, 3])
    with pytest.raises(TypeError, match="not allowed"):
        bool(x)
    other = tf.Graph()
    with other.as_default():
        y = tf.constant(1.0)
    with pytest.raises(ValueError, match="same graph"):
        tf.identity(y) if False else fresh_graph.create_op("Identity", [y])


def test_reset_default_graph():
    with pytest.raises(AssertionError):
        tf.reset_default_graph()  # inside the fixture's as_default block, as TF refuses


def test_graph_def_is_plain_data(fresh_graph):
    a = tf.constant(1.0, name="a")
    with tf.control_dependencies([a]):
        tf.identity(a, name="b")
    nodes = {n["name"]: n for n in fresh_graph.as_graph_def_dict()["node"]}
    assert nodes["b"]["input"] == ["a"] and nodes["b"]["op"] == "Identity"
