"""py_func / numpy_function / py_function, custom_gradient, grad_pass_through, hessians, make_template and
variable_creator_scope against real TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.sparse.support import real_tf, same, same_error, same_gradients

oracle = pytest.mark.tf_oracle


# ---- py_func & co ------------------------------------------------------------------------------------------------
@oracle
def test_py_func_values_types_and_shapes():
    def build(m):
        x = m.constant([[1.0, 2.0], [3.0, 4.0]])
        s = m.constant(["ab", "c"])
        total, count = m.py_func(lambda a: (a.sum(), np.int64(a.size)), [x], [m.float32, m.int64])
        upper = m.py_func(lambda b: np.array([v.upper() for v in b], dtype=object), [s], m.string)
        scalar_in = m.py_func(lambda a: np.asarray(a.ndim, np.int32), [m.constant(3.0)], m.int32)
        stateless = m.py_func(lambda a: a * 2, [x], m.float32, stateful=False)
        numpy_fn = m.numpy_function(np.flip, [m.constant([1, 2, 3])], m.int32)
        eager = m.py_function(lambda a: float(a.numpy().max()) + 0.5, [x], m.float32)
        eager_list = m.py_function(lambda a, b: [a * 2, b], [x, s], [m.float32, m.string])
        return [total, count, upper, scalar_in, stateless, numpy_fn, eager, *eager_list]

    same(build)


@oracle
def test_py_func_op_types_and_no_outputs():
    for m in (real_tf(), tf):
        with m.Graph().as_default(), m.Session() as sess:
            calls = []
            op = m.py_func(lambda calls=calls: calls.append(1), [], [])
            assert op.type == "PyFunc"
            sess.run(op)
            assert calls == [1]
            assert m.py_func(lambda x: x, [1.0], m.float32, stateful=False).op.type == "PyFuncStateless"
            assert m.py_function(lambda x: x, [1.0], m.float32).op.type == "EagerPyFunc"


@oracle
@pytest.mark.parametrize(
    "fn,tout",
    [
        (lambda x: 1.0, "float32"),  # a Python float is float64: refused, as in TF
        (lambda x: (x, x), "float32"),  # two results for one type
        (lambda x: x.astype(np.int32), "float32"),
        (lambda x: int("nope"), "float32"),  # ValueError -> InvalidArgumentError
        (lambda x: next(iter([])), "float32"),  # StopIteration -> OutOfRangeError
        (lambda x: {}["missing"], "float32"),  # KeyError -> UnknownError
        (lambda x: (_ for _ in ()).throw(NotImplementedError("later")), "float32"),
    ],
)
def test_py_func_errors_match_tensorflow(fn, tout):
    same_error(lambda m: m.py_func(fn, [m.constant([1.0])], getattr(m, tout)))


def test_py_func_gradient_and_missing_function():
    with tf.Graph().as_default():
        x = tf.constant([1.0])
        y = tf.py_func(lambda a: a, [x], tf.float32)
        assert tf.gradients(y, x) == [None]
        z = tf.py_function(lambda a: a, [x], tf.float32)
        with pytest.raises(LookupError, match="EagerPyFunc"):
            tf.gradients(z, x)
    # A graph whose function is not in this process (as on another task) refuses to run it, saying why.
    with tf.Graph().as_default() as g:
        y = tf.py_func(lambda a: a, [tf.constant([1.0])], tf.float32)
    g._extra["py_funcs"].clear()
    import gc

    gc.collect()
    with tf.Session(graph=g) as sess, pytest.raises(tf.errors.InvalidArgumentError, match="not in this process"):
        sess.run(y)


# ---- custom_gradient, grad_pass_through, hessians ----------------------------------------------------------------
@oracle
def test_custom_gradient_matches_tensorflow():
    def build(m, x, y):
        @m.custom_gradient
        def clipped_product(a, b):
            def grad(dz):
                return m.clip_by_value(dz * b, -0.5, 0.5), dz * a * 10.0

            return a * b, grad

        @m.custom_gradient
        def log1pexp(a):
            e = m.exp(a)
            return m.log(1 + e), lambda dy: dy * (1 - 1 / (1 + e))

        return [clipped_product(x, y) * 3.0, log1pexp(x)]

    same_gradients(build, [np.array([1.0, -2.0, 30.0]), np.array([0.1, 0.2, 0.3])])


@oracle
def test_custom_gradient_with_variables():
    def build(m):
        x = m.constant([1.0, 2.0])
        with m.variable_scope("cg"):

            @m.custom_gradient
            def scaled(a):
                w = m.get_variable("w", [], initializer=m.constant_initializer(3.0))

                def grad(dy, variables=None):
                    return dy * 7.0, [m.reduce_sum(dy) * 100.0 for _ in variables]

                return a * w, grad

            y = scaled(x)
        w = m.global_variables()[0]
        return [y, *m.gradients(y, [x, w])]

    with pytest.raises(TypeError, match="variables"):
        with tf.Graph().as_default():

            @tf.custom_gradient
            def bad(a):
                return a * tf.Variable(2.0), lambda dy: dy

            bad(tf.constant(1.0))
    tf1 = real_tf()
    for m in (tf1, tf):
        with m.Graph().as_default():
            out = build(m)
            with m.Session() as sess:
                sess.run(m.global_variables_initializer())
                got = sess.run(out)
        if m is tf1:
            expected = got
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b)


@oracle
def test_grad_pass_through_and_hessians():
    same_gradients(lambda m, x: m.grad_pass_through(m.round)(x) * 2.0, [np.array([0.4, 1.6, -2.2])])

    def cubes(m):
        x = m.constant([1.0, 2.0, 3.0])
        return m.hessians(m.reduce_sum(x**3), x)

    same(cubes)

    def hessian_of_product(m):
        x = m.constant([[1.0, 2.0], [3.0, 4.0]])
        y = m.constant([0.5, -1.0])
        loss = m.reduce_sum(m.sin(x) * m.square(x)) + m.reduce_sum(y * y * y)
        return m.hessians(loss, [x, y])

    same(hessian_of_product, rtol=1e-5)


# ---- make_template -----------------------------------------------------------------------------------------------
def _dense(m, x, units):
    w = m.get_variable("w", [x.shape[-1], units], initializer=m.ones_initializer())
    b = m.get_variable("b", [units], initializer=m.zeros_initializer())
    return m.matmul(x, w) + b


def _dense_kw(x, units, m):
    return _dense(m, x, units)


@oracle
@pytest.mark.parametrize("create_scope_now", [False, True])
def test_make_template_shares_variables_like_tensorflow(create_scope_now):
    def names(m):
        with m.Graph().as_default():
            layer = m.make_template("layer", lambda x: _dense(m, x, units=3), create_scope_now_=create_scope_now)
            bound = m.make_template("bound", _dense_kw, units=2, m=m)
            bound(m.ones([1, 3]))
            bound(m.ones([2, 3]))
            with m.variable_scope("outer"):
                a = layer(m.ones([2, 4]))
            b = layer(m.zeros([5, 4]))
            unique = m.make_template("x", lambda t: _dense(m, t, 1), unique_name_="fixed")
            unique(m.ones([1, 2]))
            second = m.make_template("layer", lambda x: _dense(m, x, units=1))
            second(m.ones([1, 2]))
            return (
                [v.name for v in m.global_variables()],
                [v.name for v in layer.trainable_variables],
                layer.variable_scope_name,
                a.op.name,
                b.op.name,
            )

    assert names(tf) == names(real_tf())


@oracle
def test_make_template_refuses_new_trainable_variables():
    for m in (real_tf(), tf):
        with m.Graph().as_default():
            leaky = m.make_template("leaky", lambda m=m: m.Variable(1.0))
            leaky()
            with pytest.raises(ValueError, match="Trainable variable created"):
                leaky()
        with pytest.raises(ValueError):
            m.make_template(None, lambda: None)


# ---- variable_creator_scope --------------------------------------------------------------------------------------
@oracle
def test_variable_creator_scope_matches_tensorflow():
    def run(m):
        seen = []

        def outer(next_creator, **kwargs):
            seen.append(("outer", kwargs["name"]))
            return next_creator(**kwargs)

        def inner(next_creator, **kwargs):
            seen.append(("inner", kwargs["name"]))
            kwargs["trainable"] = False
            return next_creator(**kwargs)

        with m.Graph().as_default():
            with m.variable_creator_scope(outer), m.variable_creator_scope(inner):
                m.Variable(1.0, name="v")
                m.get_variable("w", [2])
            m.Variable(2.0, name="after")
            return seen, [v.name for v in m.trainable_variables()], [v.name for v in m.global_variables()]

    assert run(tf) == run(real_tf())


@pytest.mark.slow
@pytest.mark.cluster
def test_py_func_on_a_task_of_another_process_refuses_clearly():
    """The function lives in this (client) process: a server process has only its token, and says so."""
    from tests.distributed.cluster_util import LocalCluster

    with LocalCluster(jobs={"worker": 1}) as cluster, tf.Graph().as_default():
        with tf.device("/job:worker/task:0"):
            y = tf.py_func(lambda a: a * 2, [tf.constant([1.0])], tf.float32)
            z = tf.constant([3.0]) * 2.0
        with tf.Session(cluster.target("worker", 0)) as sess:
            assert sess.run(z).tolist() == [6.0]  # the task itself works
            with pytest.raises(tf.errors.InvalidArgumentError, match="not in this process"):
                sess.run(y)
