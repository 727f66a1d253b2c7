"""variable_scope / get_variable: naming, reuse, defaults, errors (TF1's messages), partitioning, per-graph state."""

from __future__ import annotations

import re
import threading

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.ops import variable_scope as vs


def _run(*fetches):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(list(fetches))


def _raises(exc, message):
    return pytest.raises(exc, match=re.escape(message))


# ---- naming ---------------------------------------------------------------------------------------
def test_variable_and_op_names_in_nested_scopes():
    with tf.Graph().as_default():
        with tf.variable_scope("foo") as foo:
            v = tf.get_variable("v", [2])
            c = tf.constant(1.0, name="c")
            with tf.variable_scope("bar") as bar:
                w = tf.get_variable("w", [1])
        assert (foo.name, foo.original_name_scope, bar.name, bar.original_name_scope) == (
            "foo",
            "foo/",
            "foo/bar",
            "foo/bar/",
        )
        assert (v.name, c.name, w.name) == ("foo/v:0", "foo/c:0", "foo/bar/w:0")
        assert v.initializer.name == "foo/v/Assign"
        assert v.initial_value.name == "foo/v/Initializer/random_uniform:0"


def test_reentering_by_name_and_by_object_uniquifies_name_scopes_only():
    with tf.Graph().as_default():
        with tf.variable_scope("foo") as foo:
            v = tf.get_variable("v", [2])
        with tf.variable_scope(foo) as again:
            c1 = tf.constant(1.0, name="c")
        with tf.variable_scope("foo", reuse=True) as by_name:
            c2 = tf.constant(1.0, name="c")
            assert tf.get_variable("v") is v
        assert again is not foo and (again.name, again.original_name_scope, again.reuse) == ("foo", "foo/", False)
        assert (by_name.name, by_name.original_name_scope) == ("foo", "foo_2/")
        assert (c1.op.name, c2.op.name) == ("foo_1/c", "foo_2/c")


def test_auxiliary_name_scope_false_keeps_the_current_name_scope():
    with tf.Graph().as_default():
        with tf.variable_scope("foo") as foo:
            pass
        with tf.variable_scope(foo, auxiliary_name_scope=False) as scope:
            c = tf.constant(1.0, name="c")
        with tf.name_scope("outer"), tf.variable_scope("inner", auxiliary_name_scope=False) as inner:
            d = tf.constant(1.0, name="d")
        assert (scope.name, c.op.name) == ("foo", "c")
        assert (inner.name, inner.original_name_scope, d.op.name) == ("inner", "outer/", "outer/d")
        with pytest.raises(TypeError, match="auxiliary_name_scope must be `True` or `False`"):
            tf.variable_scope("x", auxiliary_name_scope=1)


def test_default_name_is_uniquified_per_parent_scope():
    with tf.Graph().as_default():
        names = []
        for _ in range(2):
            with tf.variable_scope(None, default_name="layer") as s:
                names.append((s.name, s.original_name_scope))
        with tf.variable_scope("net"):
            for _ in range(2):
                with tf.variable_scope(None, default_name="layer") as s:
                    names.append((s.name, s.original_name_scope))
        with tf.variable_scope("net"):  # sub-scope counts restart when the parent is reopened
            with tf.variable_scope(None, default_name="layer") as s:
                names.append((s.name, s.original_name_scope))
        assert names == [
            ("layer", "layer/"),
            ("layer_1", "layer_1/"),
            ("net/layer", "net/layer/"),
            ("net/layer_1", "net/layer_1/"),
            ("net/layer", "net_1/layer/"),
        ]


def test_variables_ignore_name_scopes():
    with tf.Graph().as_default():
        with tf.name_scope("ns"), tf.variable_scope("vs") as scope:
            w = tf.get_variable("w", [3], initializer=tf.zeros_initializer())
            c = tf.constant(0, name="c")
        assert (scope.original_name_scope, w.name, c.name) == ("ns/vs/", "vs/w:0", "ns/vs/c:0")
        assert w.initial_value.name == "vs/w/Initializer/zeros:0"


def test_root_scope_and_empty_name():
    with tf.Graph().as_default():
        root = tf.get_variable_scope()
        assert (root.name, root.original_name_scope, root.reuse) == ("", "", False)
        with tf.variable_scope("") as same:
            assert same.name == "" and tf.get_variable("top", [1]).name == "top:0"


def test_variable_op_scope_is_variable_scope():
    with tf.Graph().as_default():
        x = tf.constant(1.0)
        with tf.variable_op_scope([x], None, default_name="op") as scope:
            assert scope.name == "op"


# ---- reuse ----------------------------------------------------------------------------------------
def test_reuse_is_inherited_and_reuse_variables_turns_it_on():
    with tf.Graph().as_default():
        with tf.variable_scope("a"):
            with tf.variable_scope("b"):
                v = tf.get_variable("v", [1])
        with tf.variable_scope("a", reuse=True) as a:
            with tf.variable_scope("b", reuse=False) as b:  # False means "inherit" inside a reusing scope
                assert b.reuse is True and tf.get_variable("v") is v
            assert a.reuse is True
        with tf.variable_scope("c") as c:
            w = tf.get_variable("w", [1])
            c.reuse_variables()
            assert tf.get_variable("w") is w
            with tf.variable_scope("inner") as inner:
                assert inner.reuse is True


def test_auto_reuse_creates_then_returns():
    with tf.Graph().as_default():

        def layer():
            with tf.variable_scope("layer", reuse=tf.AUTO_REUSE):
                return tf.get_variable("w", [2], initializer=tf.ones_initializer())

        first, second = layer(), layer()
        assert first is second and len(tf.global_variables()) == 1
        with tf.variable_scope("outer", reuse=tf.AUTO_REUSE):
            with tf.variable_scope("inner") as inner:
                assert inner.reuse is tf.AUTO_REUSE
                assert tf.get_variable("x", [1]) is tf.get_variable("x", [1])


def test_reuse_errors_have_tf_messages():
    with tf.Graph().as_default():
        with tf.variable_scope("foo"):
            tf.get_variable("v", [2])
        with (
            tf.variable_scope("foo"),
            _raises(
                ValueError,
                "Variable foo/v already exists, disallowed. Did you mean "
                "to set reuse=True or reuse=tf.AUTO_REUSE in VarScope?",
            ),
        ):
            tf.get_variable("v", [2])
        with pytest.raises(ValueError, match=r"Originally defined at:\n\n.*test_variable_scope\.py"):
            tf.get_variable("foo/v", [2])
        with tf.variable_scope("foo", reuse=True):
            with _raises(
                ValueError,
                "Variable foo/nope does not exist, or was not created with tf.get_variable(). "
                "Did you mean to set reuse=tf.AUTO_REUSE in VarScope?",
            ):
                tf.get_variable("nope", [1])
            with _raises(ValueError, "Trying to share variable foo/v, but specified shape (3,) and found shape (2,)."):
                tf.get_variable("v", [3])
            with _raises(
                ValueError, "Trying to share variable foo/v, but specified dtype int32 and found dtype float32."
            ):
                tf.get_variable("v", [2], dtype=tf.int32)
            assert tf.get_variable("v", [None]).name == "foo/v:0"  # compatible partial shapes are fine


@pytest.mark.parametrize(
    "kwargs, exc, message",
    [
        ({"name_or_scope": "s", "reuse": "yes"}, ValueError, "The reuse parameter must be True or False or None."),
        ({"name_or_scope": None}, TypeError, "If default_name is None then name_or_scope is required"),
        (
            {"name_or_scope": None, "default_name": "d", "reuse": True},
            ValueError,
            "reuse=True cannot be used without a name_or_scope",
        ),
        ({"name_or_scope": 3}, TypeError, "VariableScope: name_or_scope must be a string or VariableScope."),
    ],
)
def test_variable_scope_argument_errors(kwargs, exc, message):
    with tf.Graph().as_default(), _raises(exc, message):
        with tf.variable_scope(**kwargs):
            pass


def test_improper_nesting_is_detected():
    with tf.Graph().as_default():
        outer, inner = tf.variable_scope("outer"), tf.variable_scope("inner")
        outer.__enter__()
        inner.__enter__()
        with _raises(RuntimeError, "Improper nesting of variable_scope."):
            outer.__exit__(None, None, None)


def test_a_failed_enter_leaves_no_scope_open():
    with tf.Graph().as_default() as g:
        with pytest.raises(ValueError):
            with tf.variable_scope("bad name!"):
                pass
        assert tf.get_variable_scope().name == "" and g.get_name_scope() == ""


# ---- initializers and dtypes ---------------------------------------------------------------------
def test_default_initializers_and_dtypes():
    with tf.Graph().as_default():
        f = tf.get_variable("f", [20, 30])
        i = tf.get_variable("i", [2], dtype=tf.int64)
        b = tf.get_variable("b", [2], dtype=tf.bool)
        s = tf.get_variable("s", [1], dtype=tf.string)
        d = tf.get_variable("d", [2], dtype=tf.float64)
        fv, iv, bv, sv, dv = _run(f, i, b, s, d)
    assert f.dtype is tf.float32 and np.abs(fv).max() <= np.sqrt(6 / 50) and fv.std() > 0.1
    assert f.initial_value.op.name == "f/Initializer/random_uniform"
    assert iv.tolist() == [0, 0] and iv.dtype == np.int64 and bv.tolist() == [False, False]
    assert sv.tolist() == [b""] and dv.dtype == np.float64


def test_initializer_kinds():
    class MyZeros(tf.zeros_initializer):
        pass

    seen = {}

    def custom(shape, dtype=None, partition_info=None):
        seen.update(shape=shape, dtype=dtype, partition_info=partition_info)
        return tf.constant(7.0, dtype, shape)

    with tf.Graph().as_default():
        a = tf.get_variable("a", [2], initializer=custom)
        b = tf.get_variable("b", [2], initializer=tf.ones_initializer)  # a class is instantiated
        c = tf.get_variable("c", initializer=tf.constant([[1, 2]]))  # a tensor gives shape and dtype
        d = tf.get_variable("d", initializer=[1.5, 2.5])  # a value too
        e = tf.get_variable("e", [3], initializer=MyZeros(), dtype=tf.int32)
        f = tf.get_variable("f", initializer=lambda: tf.constant([4.0, 5.0]), validate_shape=True)
        values = _run(a, b, c, d, e, f)
    assert seen == {"shape": [2], "dtype": tf.float32, "partition_info": None}
    assert [v.tolist() for v in values] == [[7.0, 7.0], [1.0, 1.0], [[1, 2]], [1.5, 2.5], [0, 0, 0], [4.0, 5.0]]
    assert (c.dtype, c.shape.as_list(), d.dtype) == (tf.int32, [1, 2], tf.float32)


def test_initializer_errors():
    with tf.Graph().as_default():
        with _raises(ValueError, "Variable x did not get an initializer, so its `shape` argument must be specified."):
            tf.get_variable("x")
        with _raises(ValueError, "If initializer is a constant, do not specify shape."):
            tf.get_variable("x", [2], initializer=tf.constant([1.0, 2.0]))
        with _raises(
            ValueError, "Initializer type '<dtype: 'float32'>' and explicit dtype '<dtype: 'int32'>' don't match."
        ):
            tf.get_variable("y", dtype=tf.int32, initializer=[1.0, 2.0])
        with _raises(ValueError, "The initializer passed is not valid."):
            tf.get_variable("z", [None, 2])


def test_scope_defaults_are_inherited_and_overridable():
    with tf.Graph().as_default():
        with tf.variable_scope("s", initializer=tf.constant_initializer(3.0), dtype=tf.float64) as s:
            a = tf.get_variable("a", [1])
            with tf.variable_scope("t", initializer=tf.ones_initializer()):
                b = tf.get_variable("b", [1])
                c = tf.get_variable("c", [1], initializer=tf.zeros_initializer(), dtype=tf.float32)
            s.set_initializer(tf.constant_initializer(5.0))
            s.set_dtype(tf.float16)
            d = tf.get_variable("d", [1])
        assert (s.initializer.value, s.dtype) == (5.0, tf.float16)
        values = _run(a, b, c, d)
    assert [v.tolist() for v in values] == [[3.0], [1.0], [0.0], [5.0]]
    assert [v.dtype for v in (a, b, c, d)] == [tf.float64, tf.float64, tf.float32, tf.float16]


def test_collections_trainable_and_local_variables():
    with tf.Graph().as_default():
        with tf.variable_scope("m") as m:
            t = tf.get_variable("t", [1])
            n = tf.get_variable("n", [1], trainable=False)
            extra = tf.get_variable("x", [1], collections=["mine", tf.GraphKeys.GLOBAL_VARIABLES])
            loc = tf.get_local_variable("loc", [1], collections=["mine"])
        assert tf.trainable_variables() == [t, extra]
        assert tf.global_variables() == [t, n, extra]
        assert tf.local_variables() == [loc] and tf.get_collection("mine") == [extra, loc]
        assert m.trainable_variables() == [t, extra] and m.global_variables() == [t, n, extra]
        assert m.local_variables() == [loc]


def test_regularizer_losses():
    with tf.Graph().as_default():
        reg = lambda v: tf.multiply(tf.reduce_sum(v), 0.5, name="l")  # noqa: E731
        with tf.variable_scope("r", regularizer=reg):
            a = tf.get_variable("a", [2], initializer=tf.ones_initializer())
            tf.get_variable("b", [2], regularizer=tf.no_regularizer)
            tf.get_variable("c", [2], regularizer=lambda v: None)
        losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
        assert [t.op.name for t in losses] == ["r/a/Regularizer/l"]
        assert losses[0].op.colocation_groups() == a.op.colocation_groups()
        assert _run(losses[0]) == [1.0]


def test_custom_getters_nest():
    calls = []

    def outer_getter(getter, name, *args, **kwargs):
        calls.append(("outer", name))
        return getter(name + "_o", *args, **kwargs)

    def inner_getter(getter, name, *args, **kwargs):
        calls.append(("inner", name))
        kwargs["trainable"] = False
        return getter(name, *args, **kwargs)

    def old_style_getter(
        getter,
        name,
        shape=None,
        dtype=None,
        initializer=None,
        regularizer=None,
        reuse=None,
        trainable=None,
        collections=None,
        caching_device=None,
        partitioner=None,
        validate_shape=True,
        use_resource=None,
        synchronization=None,
        aggregation=None,
    ):
        return getter(name, shape, dtype, initializer, regularizer, reuse, trainable, collections)

    with tf.Graph().as_default():
        with tf.variable_scope("g", custom_getter=outer_getter):
            with tf.variable_scope("h", custom_getter=inner_getter):
                v = tf.get_variable("v", [1])
        w = tf.get_variable("w", [1], custom_getter=old_style_getter)
        assert calls == [("inner", "g/h/v"), ("outer", "g/h/v")]
        assert v.name == "g/h/v_o:0" and not v.trainable and w.name == "w:0"
        with _raises(ValueError, "Passed a custom_getter which is not callable: 3"):
            tf.get_variable("z", [1], custom_getter=3)


def test_caching_device_and_constraint():
    with tf.Graph().as_default():
        clip = lambda t: t  # noqa: E731
        with tf.variable_scope("d", caching_device="/cpu:0", constraint=clip):
            v = tf.get_variable("v", [1])
        assert v.value().device == "/device:CPU:0" and v.constraint is clip


# ---- partitioned variables ---------------------------------------------------------------------------
def test_partitioned_variable_creation_reuse_and_value():
    with tf.Graph().as_default():
        with tf.variable_scope("s"):
            v = tf.get_variable(
                "v",
                partitioner=lambda shape, dtype: [2, 1],
                initializer=tf.constant(np.arange(10, dtype=np.float32).reshape(5, 2)),
            )
        assert [p.name for p in v] == ["s/v/part_0:0", "s/v/part_1:0"]
        assert [p.shape.as_list() for p in v] == [[3, 2], [2, 2]] and len(v) == 2
        assert v.get_shape().as_list() == [5, 2] and v.name == "s/v" and v._get_partitions() == [2, 1]
        assert [p._save_slice_info.spec for p in v] == ["5 2 0,3:0,2", "5 2 3,2:0,2"]
        with tf.variable_scope("s", reuse=True):
            assert tf.get_variable("v") is v
            assert tf.get_variable("v", [5, 2], partitioner=lambda shape, dtype: [2, 1]) is v
        w = tf.get_variable(
            "w",
            [3, 1],
            initializer=np.array([[1.0], [2.0], [3.0]], np.float32),
            partitioner=lambda shape, dtype: [3, 1],
        )
        assert [p.shape.as_list() for p in w] == [[1, 1]] * 3
        whole = tf.convert_to_tensor(v)
        assert whole.name == "s/v:0" and whole.shape.as_list() == [5, 2]
        tensor_w = tf.convert_to_tensor(w)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(whole), np.arange(10).reshape(5, 2))
            np.testing.assert_array_equal(sess.run(tensor_w), [[1.0], [2.0], [3.0]])
            np.testing.assert_array_equal(sess.run(v._get_variable_list()[1]), [[6, 7], [8, 9]])


def test_partitioned_initializers_scale_by_the_full_shape():
    with tf.Graph().as_default():
        v = tf.get_variable("v", [400, 10], partitioner=lambda shape, dtype: [4, 1])
        parts = _run(*v)
    limit = np.sqrt(6 / 410)
    assert all(np.abs(p).max() <= limit for p in parts) and max(np.abs(p).max() for p in parts) > 0.95 * limit
    assert not np.array_equal(parts[0], parts[1])


def test_partitioned_variable_errors():
    with tf.Graph().as_default():
        tf.get_variable("v", [4, 2], partitioner=lambda shape, dtype: [2, 1])
        tf.get_variable("u", [4, 2])
        scalar = tf.get_variable("scalar", [], partitioner=lambda shape, dtype: [2])  # scalars are never split
        assert scalar.name == "scalar:0"
        with _raises(
            ValueError, "No partitioner was provided, but a partitioned version of the variable was found: v/part_0."
        ):
            tf.get_variable("v", [4, 2])
        with _raises(ValueError, "Partitioned variable with name v already exists."):
            tf.get_variable("v", [4, 2], partitioner=lambda shape, dtype: [2, 1])
        with _raises(
            ValueError, "A partitioner was provided, but an unpartitioned version of the variable was found: u."
        ):
            tf.get_variable("u", [4, 2], partitioner=lambda shape, dtype: [2, 1])
        with _raises(ValueError, "Can only slice a variable along one dimension"):
            tf.get_variable("x", [4, 2], partitioner=lambda shape, dtype: [2, 2])
        with _raises(ValueError, "does not match the Variable's rank"):
            tf.get_variable("x", [4, 2], partitioner=lambda shape, dtype: [2])
        with _raises(ValueError, "Partitioner returned zero partitions for some axes"):
            tf.get_variable("x", [4, 2], partitioner=lambda shape, dtype: [0, 1])
        with _raises(ValueError, "Partitioner must be callable, but received: 3"):
            tf.get_variable("x", [4, 2], partitioner=3)
        with tf.variable_scope("", reuse=True):
            with _raises(
                ValueError,
                "Trying to reuse partitioned variable v, but specified partitions [4, 1] and found partitions [2, 1].",
            ):
                tf.get_variable("v", [4, 2], partitioner=lambda shape, dtype: [4, 1])
            with _raises(ValueError, "PartitionedVariable y does not exist"):
                tf.get_variable("y", [4, 2], partitioner=lambda shape, dtype: [2, 1])


def test_partition_info():
    info = vs._PartitionInfo(full_shape=[10, 4], var_offset=[5, 0])
    assert info.single_slice_dim([5, 4]) == 0 and info.single_offset([5, 4]) == 5
    assert info.single_slice_dim([10, 4]) is None and info.single_offset([10, 4]) == 0
    with _raises(ValueError, "Expected 0 <= offset < shape"):
        vs._PartitionInfo(full_shape=[10], var_offset=[10])


# ---- per-graph and per-thread state ------------------------------------------------------------------
def test_stores_are_per_graph():
    g1, g2 = tf.Graph(), tf.Graph()
    with g1.as_default(), tf.variable_scope("s"):
        a = tf.get_variable("v", [1])
        with g2.as_default():
            assert tf.get_variable_scope().name == ""
            b = tf.get_variable("v", [1])
    assert a.graph is g1 and b.graph is g2 and (a.name, b.name) == ("s/v:0", "v:0")
    assert g1._extra["variable_store"] is not g2._extra["variable_store"]


def test_values_pick_the_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(1.0)
    with tf.Graph().as_default(), tf.variable_scope("s", values=[x]):
        assert tf.get_default_graph() is g and tf.get_variable("v", [1]).graph is g


def test_scope_stack_is_per_thread():
    seen = []
    with tf.Graph().as_default() as g, tf.variable_scope("main_thread"):

        def worker():
            with g.as_default():
                seen.append(tf.get_variable_scope().name)

        t = threading.Thread(target=worker)
        t.start()
        t.join()
        assert tf.get_variable_scope().name == "main_thread"
    assert seen == [""]


def test_public_names():
    for name in vs.__all__:
        assert getattr(tf, name) is getattr(vs, name)
    assert tf.VariableScope is vs.VariableScope and repr(tf.AUTO_REUSE) == "<_ReuseMode.AUTO_REUSE: 1>"


# ---- against TensorFlow ---------------------------------------------------------------------------------
def _scenario(lib):
    """Builds scopes and variables with ``lib`` (TF1 or dtf); returns the names that must match."""
    out = []
    with lib.variable_scope("foo") as foo:
        out.append(lib.get_variable("v", [2]).name)
        out.append(lib.constant(1.0, name="c").name)
        with lib.variable_scope("bar"):
            out.append(lib.get_variable("w", [1]).name)
    with lib.variable_scope(foo):
        out.append(lib.constant(1.0, name="c").name)
    with lib.variable_scope("foo", reuse=True) as again:
        out += [again.name, again.original_name_scope, lib.constant(1.0, name="c").name]
    for _ in range(2):
        with lib.variable_scope(None, default_name="layer") as layer:
            out += [layer.name, layer.original_name_scope, lib.get_variable("k", [1]).name]
    with lib.name_scope("ns"), lib.variable_scope("vs") as scope:
        out += [scope.original_name_scope, lib.get_variable("u", [1]).name, lib.constant(0, name="z").name]
    with lib.variable_scope("auto", reuse=lib.AUTO_REUSE):
        out.append(lib.get_variable("a", [1]).name == lib.get_variable("a", [1]).name)
    for build in (
        lambda: lib.get_variable("foo/v", [2]),
        lambda: lib.get_variable("nope"),
        lambda: lib.get_variable("q", [1], initializer=lib.constant([1.0])),
    ):
        with pytest.raises(ValueError) as info:
            build()
        out.append(str(info.value).split(" Originally")[0])
    with lib.variable_scope("foo", reuse=True):
        for build in (lambda: lib.get_variable("v", [3]), lambda: lib.get_variable("missing", [1])):
            with pytest.raises(ValueError) as info:
                build()
            out.append(str(info.value))
    return out


@pytest.mark.tf_oracle
def test_names_and_messages_match_tf():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    with tf1.Graph().as_default():
        expected = _scenario(tf1)
    with tf.Graph().as_default():
        assert _scenario(tf) == expected
