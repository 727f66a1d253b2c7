"""Gradients through tf.while_loop against TF1's graph-mode control flow (control flow v1): values of
tf.gradients for simple, nested and conditional loops, loops inside conds, captured tensors and variables,
maximum_iterations, unused loop outputs, and training through a loop with optimizers."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf

pytestmark = pytest.mark.tf_oracle


def _real_tf():
    real = pytest.importorskip("tensorflow").compat.v1
    real.disable_eager_execution()
    real.disable_control_flow_v2()
    return real


def _densify(lib, grads):
    return [lib.convert_to_tensor(g) if g is not None else None for g in grads]


def _fetchable(lib, grads):
    """The gradients, with a "None" string standing for each missing one (so that both libraries can fetch them)."""
    return [lib.constant("None") if g is None else g for g in grads]


def _run_both(build, feeds_list=({},), steps=1):
    """Builds ``build(lib)`` -> (fetches, placeholders) with each library and runs each feed ``steps`` times;
    a placeholders entry "after" names tensors fetched once more at the end (variables after training)."""
    results = []
    for lib in (tf, _real_tf()):
        with lib.Graph().as_default():
            fetches, holders = build(lib)
            after = holders.pop("after", None)
            with lib.Session() as sess:
                sess.run(lib.global_variables_initializer())
                runs = []
                for feeds in feeds_list:
                    for _ in range(steps):
                        runs.append(sess.run(fetches, {holders[k]: v for k, v in feeds.items()}))
                if after is not None:
                    runs.append(sess.run(after))
                results.append(runs)
    return results


def _assert_close(a, b):
    if isinstance(a, list | tuple):
        assert isinstance(b, list | tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            _assert_close(x, y)
    else:
        assert (a is None) == (b is None)
        if isinstance(a, bytes) or isinstance(b, bytes):
            assert a == b
        elif a is not None:
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-5, atol=1e-5)


def test_simple_loop_gradients_wrt_the_factor_and_the_initial_value():
    def build(lib):
        n = lib.placeholder(lib.int32, [], name="n")
        x = lib.placeholder(lib.float32, [], name="x")
        w = lib.placeholder(lib.float32, [], name="w")
        _, y = lib.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v * w), [0, x])
        return [y, *lib.gradients(y, [x, w])], {"n": n, "x": x, "w": w}

    feeds = [{"n": 3, "x": 2.0, "w": 3.0}, {"n": 0, "x": 2.0, "w": 3.0}, {"n": 5, "x": -1.5, "w": 0.5}]
    ours, theirs = _run_both(build, feeds)
    _assert_close(ours, theirs)
    assert ours[0][1:] == [27.0, 54.0]


def test_captured_tensor_and_variable_read_in_the_body():
    def build(lib):
        c = lib.placeholder(lib.float32, [2], name="c")
        v = lib.Variable([0.5, -0.25], name="v")
        x0 = lib.constant([1.0, 2.0])

        def body(i, x):
            return i + 1, x * c + lib.tanh(v) * lib.cast(i, lib.float32)

        _, x = lib.while_loop(lambda i, x: i < 4, body, [0, x0])
        loss = lib.reduce_sum(x * x)
        return [loss, *lib.gradients(loss, [c, v, x0])], {"c": c}

    ours, theirs = _run_both(build, [{"c": [0.9, 1.1]}, {"c": [-0.5, 2.0]}])
    _assert_close(ours, theirs)


def test_matmul_body_with_vector_and_matrix():
    def build(lib):
        x0 = lib.placeholder(lib.float32, [1, 3], name="x0")
        w = lib.Variable(np.arange(9, dtype=np.float32).reshape(3, 3) / 10.0 - 0.4, name="w")
        b = lib.Variable([0.1, -0.2, 0.3], name="b")

        def body(i, x):
            return i + 1, lib.tanh(lib.matmul(x, w) + b)

        _, x = lib.while_loop(lambda i, x: i < 5, body, [0, x0])
        loss = lib.reduce_sum(lib.square(x - 0.5))
        return [loss, *lib.gradients(loss, [x0, w, b])], {"x0": x0}

    ours, theirs = _run_both(build, [{"x0": [[1.0, -1.0, 0.5]]}])
    _assert_close(ours, theirs)


def test_nested_loops_with_a_varying_inner_count():
    def build(lib):
        x = lib.placeholder(lib.float32, [], name="x")
        w = lib.placeholder(lib.float32, [], name="w")
        n = lib.placeholder(lib.int32, [], name="n")

        def outer(i, v):
            def inner(j, u):
                return j + 1, u * w + lib.cast(j, lib.float32) * 0.1

            _, v = lib.while_loop(lambda j, u: j < i + 1, inner, [0, v])
            return i + 1, lib.tanh(v) + v * w

        _, y = lib.while_loop(lambda i, v: i < n, outer, [0, x])
        return [y, *lib.gradients(y, [x, w])], {"x": x, "w": w, "n": n}

    feeds = [{"x": 0.7, "w": 0.9, "n": 3}, {"x": -0.3, "w": 1.1, "n": 1}, {"x": 0.2, "w": 0.5, "n": 0}]
    ours, theirs = _run_both(build, feeds)
    _assert_close(ours, theirs)


def test_cond_inside_loop():
    def build(lib):
        x = lib.placeholder(lib.float32, [2], name="x")
        w = lib.Variable([1.5, -0.5], name="w")

        def body(i, v):
            big = lib.reduce_sum(v) > 1.0
            return i + 1, lib.cond(big, lambda: v * w, lambda: v + w * w)

        _, y = lib.while_loop(lambda i, v: i < 6, body, [0, x])
        loss = lib.reduce_sum(y)
        return [y, *lib.gradients(loss, [x, w])], {"x": x}

    ours, theirs = _run_both(build, [{"x": [0.4, 0.3]}, {"x": [2.0, 1.0]}, {"x": [-1.0, 0.2]}])
    _assert_close(ours, theirs)


def test_nested_conds_inside_loop_with_unknown_shapes():
    def build(lib):
        x = lib.placeholder(lib.float32, [None], name="x")
        w = lib.placeholder(lib.float32, [None], name="w")

        def body(i, v):
            def taken():
                return lib.cond(lib.equal(lib.mod(i, 3), 0), lambda: v * w, lambda: lib.square(v))

            return i + 1, lib.cond(lib.equal(lib.mod(i, 2), 0), taken, lambda: v - w)

        _, y = lib.while_loop(lambda i, v: i < 7, body, [0, x], shape_invariants=[lib.TensorShape([]), None])
        return [y, *lib.gradients(lib.reduce_sum(y), [x, w])], {"x": x, "w": w}

    feeds = [{"x": [0.5, 1.0, -0.5], "w": [1.1, 0.9, 0.3]}, {"x": [0.2], "w": [2.0]}]
    ours, theirs = _run_both(build, feeds)
    _assert_close(ours, theirs)


def test_loop_inside_cond():
    def build(lib):
        p = lib.placeholder(lib.bool, [], name="p")
        x = lib.placeholder(lib.float32, [], name="x")
        w = lib.Variable(1.2, name="w")

        def looped():
            return lib.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * w + 1.0), [0, x])[1]

        y = lib.cond(p, looped, lambda: x * w * 2.0)
        return [y, *lib.gradients(y, [x, w])], {"p": p, "x": x}

    ours, theirs = _run_both(build, [{"p": True, "x": 2.0}, {"p": False, "x": 2.0}, {"p": True, "x": -1.0}])
    _assert_close(ours, theirs)


def test_loop_inside_cond_inside_loop():
    def build(lib):
        x = lib.placeholder(lib.float32, [], name="x")
        w = lib.Variable(0.9, name="w")

        def body(i, v):
            def with_loop():
                return lib.while_loop(lambda j, u: j < i, lambda j, u: (j + 1, u * w + 0.1), [0, v])[1]

            return i + 1, lib.cond(lib.equal(lib.mod(i, 2), 1), with_loop, lambda: v * 2.0 - w)

        y = lib.while_loop(lambda i, v: i < 6, body, [0, x])[1]
        return [y, *lib.gradients(y, [x, w])], {"x": x}

    ours, theirs = _run_both(build, [{"x": 0.5}, {"x": -1.0}])
    _assert_close(ours, theirs)


def test_nested_loops_reading_outer_values_and_initial_values_with_unknown_shapes():
    def build(lib):
        x = lib.placeholder(lib.float32, [None], name="x")
        w = lib.placeholder(lib.float32, [None], name="w")

        def outer(i, v, extra):
            scale = v * 0.5 + w  # a value of the outer loop, an invariant of the inner one
            _, v, unused = lib.while_loop(
                lambda j, u, e: j < 2, lambda j, u, e: (j + 1, u * scale, e + u), [0, v, extra]
            )
            return i + 1, v + 1.0, extra + w  # w is also the initial value of `extra`

        _, y, _ = lib.while_loop(lambda i, v, e: i < 3, outer, [0, x, w])
        return lib.gradients(lib.reduce_sum(y), [x, w]), {"x": x, "w": w}

    ours, theirs = _run_both(build, [{"x": [0.3, 0.6], "w": [0.5, -0.25]}])
    _assert_close(ours, theirs)


def test_a_variable_whose_next_value_ignores_its_current_one():
    def build(lib):
        x = lib.placeholder(lib.float32, [None], name="x")
        a0 = lib.placeholder(lib.float32, [None], name="a0")
        w = lib.Variable(0.9, name="w")
        k = lib.constant([1.0, 2.0])

        def body(i, v, a, b):
            return i + 1, v * a * b, lib.zeros_like(a) + w * 2.0, k * w

        _, y, _, _ = lib.while_loop(lambda i, *_: i < 3, body, [0, x, a0, k])
        return lib.gradients(lib.reduce_sum(y), [x, a0, w]), {"x": x, "a0": a0}

    ours, theirs = _run_both(build, [{"x": [0.3, 1.0], "a0": [1.5, 2.0]}])
    _assert_close(ours, theirs)


def test_many_iterations_one_at_a_time_and_in_parallel():
    def build(lib):
        x = lib.placeholder(lib.float32, [], name="x")
        w = lib.Variable(0.9, name="w")
        outs = []
        for parallel in (1, 10):
            y = lib.while_loop(
                lambda i, v: i < 40,
                lambda i, v: (i + 1, lib.tanh(v * w + 0.3)),
                [0, x],
                parallel_iterations=parallel,
            )[1]
            outs += [y, *lib.gradients(y, [x, w])]
        return outs, {"x": x}

    ours, theirs = _run_both(build, [{"x": 0.3}, {"x": -2.0}])
    _assert_close(ours, theirs)


def test_maximum_iterations():
    def build(lib):
        x = lib.placeholder(lib.float32, [], name="x")
        m = lib.placeholder(lib.int32, [], name="m")
        w = lib.constant(1.5)
        y = lib.while_loop(lambda v: v < 100.0, lambda v: v * w + 0.5, [x], maximum_iterations=m)
        return [y, *lib.gradients(y, [x, w])], {"x": x, "m": m}

    feeds = [{"x": 1.0, "m": 4}, {"x": 1.0, "m": 100}, {"x": 1.0, "m": 0}, {"x": 50.0, "m": 5}]
    ours, theirs = _run_both(build, feeds)
    _assert_close(ours, theirs)


def test_multiple_outputs_only_some_used():
    def build(lib):
        a0 = lib.placeholder(lib.float32, [], name="a0")
        b0 = lib.placeholder(lib.float32, [], name="b0")
        c0 = lib.placeholder(lib.float32, [], name="c0")
        w = lib.Variable(0.8, name="w")

        def body(i, a, b, c):
            return i + 1, a * w, b + a * c, c * 2.0

        _, a, b, c = lib.while_loop(lambda i, *_: i < 4, body, [0, a0, b0, c0])
        grads_b = _fetchable(lib, lib.gradients(b, [a0, b0, c0, w]))
        grads_a = _fetchable(lib, lib.gradients(a * 3.0, [a0, b0, c0, w]))
        grads_c = _fetchable(lib, lib.gradients(c, [a0, b0, c0, w]))
        return [b, grads_b, grads_a, grads_c], {"a0": a0, "b0": b0, "c0": c0}

    ours, theirs = _run_both(build, [{"a0": 1.5, "b0": -0.5, "c0": 0.25}])
    _assert_close(ours, theirs)


def test_gather_of_a_variable_in_the_body_gives_summed_slices():
    def build(lib):
        emb = lib.Variable(np.arange(12, dtype=np.float32).reshape(4, 3) / 10.0, name="emb")
        ids = lib.constant([2, 0, 2, 3])

        def body(i, h):
            return i + 1, lib.tanh(h + lib.gather(emb, lib.gather(ids, i)))

        _, h = lib.while_loop(lambda i, h: i < 4, body, [0, lib.zeros([3])])
        (grad,) = lib.gradients(lib.reduce_sum(h), [emb])
        return _densify(lib, [grad]), {}

    ours, theirs = _run_both(build)
    _assert_close(ours, theirs)


def _no_gradient_without_back_prop(lib):
    with lib.Graph().as_default():
        x = lib.constant(2.0)
        w = lib.constant(3.0)
        y = lib.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * w), [0, x], back_prop=False)[1]
        return lib.gradients(y, [x, w])


def test_back_prop_false_gives_no_gradient_like_tf():
    assert _no_gradient_without_back_prop(tf) == _no_gradient_without_back_prop(_real_tf()) == [None, None]


def _second_order(lib):
    with lib.Graph().as_default():
        x = lib.constant(0.3)
        y = lib.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * v), [0, x])[1]
        (dx,) = lib.gradients(y, [x])
        return lib.gradients(dx, [x])


def test_second_order_gradient_of_a_loop_is_none_like_tf():
    # TF1 does not differentiate a gradient loop; the first gradient reads its ys only through their shapes.
    assert _second_order(tf) == _second_order(_real_tf()) == [None]


def _gradient_through_initial_value(lib):
    with lib.Graph().as_default():
        x = lib.constant(2.0)

        def body(v):
            lib.gradients(v * 2.0, [x])
            return v

        lib.while_loop(lambda v: v < 3.0, body, [x])


def test_gradient_through_an_initial_value_inside_the_body_is_an_error_like_tf():
    for lib in (tf, _real_tf()):
        with pytest.raises(ValueError, match="initial value of a loop variable"):
            _gradient_through_initial_value(lib)


def test_gradient_with_respect_to_body_parameters_inside_the_body():
    def build(lib):
        w = lib.Variable(2.0, name="w")

        def body(i, acc):
            (dw,) = lib.gradients(lib.square(w * lib.cast(i, lib.float32)), [w])
            return i + 1, acc + dw

        def body_with_cond(i, acc):
            def grad():
                return lib.gradients(lib.square(w) * lib.cast(i, lib.float32), [w])[0]

            return i + 1, acc + lib.cond(i > 1, grad, lambda: lib.constant(0.0))

        loops = [lib.while_loop(lambda i, acc: i < 4, fn, [0, 0.0])[1] for fn in (body, body_with_cond)]
        return loops, {}

    ours, theirs = _run_both(build)
    _assert_close(ours, theirs)


@pytest.mark.parametrize("optimizer", ["GradientDescentOptimizer", "AdamOptimizer"])
def test_training_through_a_loop_matches_tf(optimizer):
    def build(lib):
        inputs = lib.constant([[0.5, -1.0], [1.0, 0.25], [-0.5, 0.75], [0.2, 0.1]])
        target = lib.constant([[0.3, -0.6, 0.1]])
        w = lib.Variable([[0.2, -0.1, 0.3], [0.05, 0.4, -0.2], [-0.3, 0.1, 0.2]], name="w")
        u = lib.Variable([[0.1, 0.2, -0.1], [0.3, -0.2, 0.05]], name="u")
        b = lib.Variable([0.0, 0.1, -0.1], name="b")

        def step(i, h):
            x = lib.reshape(lib.gather(inputs, i), [1, 2])
            return i + 1, lib.tanh(lib.matmul(h, w) + lib.matmul(x, u) + b)

        _, h = lib.while_loop(lambda i, h: i < 4, step, [0, lib.zeros([1, 3])])
        loss = lib.reduce_sum(lib.square(h - target))
        train = getattr(lib.train, optimizer)(0.1).minimize(loss)
        return [loss, train], {"after": [w, u, b]}

    ours, theirs = _run_both(build, steps=6)
    _assert_close([r[0] for r in ours[:-1]], [r[0] for r in theirs[:-1]])
    _assert_close(ours[-1], theirs[-1])  # the variables after six steps
    assert ours[-2][0] < ours[0][0]


def test_a_loop_gradient_runs_again_with_fresh_stacks():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * v), [0, x])[1]
        (dx,) = tf.gradients(y, [x])
        with tf.Session() as sess:
            first = [sess.run(dx, {x: 1.1}) for _ in range(3)]
            assert first[0] == first[1] == first[2]
            assert sess.run([y, dx], {x: 2.0}) == [256.0, 1024.0]
