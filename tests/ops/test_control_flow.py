"""tf.cond, tf.case, tf.switch_case and tf.while_loop against TF1's graph-mode control flow: values, gradients
through cond, the ops that run (side effects only in the branch taken), graph structure and names, errors."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook import errors


def _real_tf():
    real = pytest.importorskip("tensorflow").compat.v1
    real.disable_eager_execution()
    real.disable_control_flow_v2()
    return real


def _run_both(build, feeds_list=({},), read_after=None):
    """Builds ``build(lib)`` -> (fetches, placeholders dict) with each library; returns both result lists.

    With ``read_after`` (a name in the placeholders dict holding tensors), those are read in a run of their
    own after each step: values read in the run that updates them have no fixed order, in TF as here.
    """
    results = []
    for lib in (tf, _real_tf()):
        with lib.Graph().as_default():
            fetches, holders = build(lib)
            with lib.Session() as sess:
                sess.run(lib.global_variables_initializer())
                runs = []
                for feeds in feeds_list:
                    feed_dict = {holders[k]: v for k, v in feeds.items()}
                    runs.append(sess.run(fetches, feed_dict))
                    if read_after is not None:
                        runs.append(sess.run(holders[read_after]))
                results.append(runs)
    return results


def _assert_close(a, b):
    if isinstance(a, list | tuple):
        assert isinstance(b, list | tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            _assert_close(x, y)
    elif isinstance(a, dict):
        assert sorted(a) == sorted(b)
        for k in a:
            _assert_close(a[k], b[k])
    else:
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


pytestmark = pytest.mark.tf_oracle


def test_cond_values_and_gradients_match_tf():
    def build(lib):
        x = lib.placeholder(lib.float32, [3], name="x")
        w = lib.Variable([1.0, 2.0, 3.0], name="w")
        y = lib.cond(lib.reduce_sum(x) > 0.0, lambda: x * w * w, lambda: lib.exp(x) + w)
        loss = lib.reduce_sum(y)
        return [y, *lib.gradients(loss, [x, w])], {"x": x}

    feeds = [{"x": [1.0, 2.0, -0.5]}, {"x": [-1.0, -2.0, 0.5]}]
    ours, theirs = _run_both(build, feeds)
    _assert_close(ours, theirs)


def test_nested_cond_and_structures_match_tf():
    def build(lib):
        x = lib.placeholder(lib.float32, [], name="x")

        def positive():
            return lib.cond(x > 5.0, lambda: {"a": x * 10.0, "b": (x, x + 1.0)}, lambda: {"a": x, "b": (-x, x * x)})

        def negative():
            return {"a": lib.constant(-1.0), "b": (x * 3.0, lib.square(x))}

        out = lib.cond(x > 0.0, positive, negative)
        return [out, lib.gradients(out["b"][1] + out["a"], x)], {"x": x}

    ours, theirs = _run_both(build, [{"x": 7.0}, {"x": 2.0}, {"x": -3.0}])
    _assert_close(ours, theirs)


def test_only_the_branch_taken_runs_its_side_effects_as_in_tf():
    def build(lib):
        p = lib.placeholder(lib.bool, [], name="p")
        v = lib.Variable(0.0, name="v")
        counter = lib.Variable(0, name="counter")

        def taken():
            with lib.control_dependencies([lib.assign_add(counter, 1)]):
                return lib.assign_add(v, 10.0)

        def other():
            return lib.assign_sub(v, 1.0)

        r = lib.cond(p, taken, other)
        return r, {"p": p, "counter": counter}

    ours, theirs = _run_both(build, [{"p": True}, {"p": False}, {"p": True}], read_after="counter")
    _assert_close(ours, theirs)


def test_side_effects_in_branches_really_run_once_per_taken_step():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.bool, [])
        v = tf.Variable(0.0)
        r = tf.cond(p, lambda: tf.assign_add(v, 1.0), lambda: tf.assign_add(v, 100.0))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = [float(sess.run(r, {p: value})) for value in (True, True, False, True)]
            assert got == [1.0, 2.0, 102.0, 103.0]
            assert float(sess.run(v)) == 103.0


def test_cond_returning_ops_and_outside_tensors_match_tf():
    def build(lib):
        p = lib.placeholder(lib.bool, [], name="p")
        a = lib.constant([1, 2])
        r1 = lib.cond(p, lambda: a, lambda: a * 2)
        r2 = lib.cond(p, lambda: lib.no_op(), lambda: lib.no_op())
        r3 = lib.cond(p, lambda: [a], lambda: [a + 1], strict=True)
        return [r1, r2, r3], {"p": p}

    ours, theirs = _run_both(build, [{"p": True}, {"p": False}])
    _assert_close(ours, theirs)


def test_case_and_switch_case_match_tf():
    def build(lib):
        x = lib.placeholder(lib.int32, [], name="x")
        c = lib.case(
            [(x < 0, lambda: lib.constant(-1)), (x > 10, lambda: lib.constant(100)), (x > 0, lambda: x * 2)],
            default=lambda: lib.constant(0),
        )
        c_no_default = lib.case([(x < 0, lambda: x - 1), (x >= 0, lambda: x + 1)])
        s = lib.switch_case(
            lib.clip_by_value(x, -1, 5), [lambda: x * 0, lambda: x * 1, lambda: x * 2], default=lambda: -x
        )
        return [c, c_no_default, s], {"x": x}

    feeds = [{"x": v} for v in (-5, 0, 1, 2, 20)]
    ours, theirs = _run_both(build, feeds)
    _assert_close(ours, theirs)


def test_case_exclusive_raises_when_two_predicates_hold_like_tf():
    for lib, error in ((tf, errors.InvalidArgumentError), (_real_tf(), _real_tf().errors.InvalidArgumentError)):
        with lib.Graph().as_default():
            x = lib.placeholder(lib.int32, [])
            c = lib.case([(x > 0, lambda: x), (x > 1, lambda: -x)], default=lambda: x * 0, exclusive=True)  # noqa: B023
            with lib.Session() as sess:
                assert sess.run(c, {x: 1}) == 1
                with pytest.raises(error):
                    sess.run(c, {x: 5})


def test_while_loop_values_match_tf():
    def build(lib):
        n = lib.placeholder(lib.int32, [], name="n")
        w = lib.Variable([[0.5, 0.1], [0.2, 0.3]], name="w")
        c = lib.constant(0.25)

        def body(i, x, acc):
            return i + 1, lib.tanh(lib.matmul(x, w) + c), acc + lib.reduce_sum(x)

        i, x, acc = lib.while_loop(lambda i, x, acc: i < n, body, [0, lib.ones([1, 2]), 0.0])
        fact = lib.while_loop(lambda k, f: k <= n, lambda k, f: (k + 1, f * k), [1, 1])[1]
        capped = lib.while_loop(lambda k: k < 1000, lambda k: k + 3, [0], maximum_iterations=n)
        return [i, x, acc, fact, capped], {"n": n}

    ours, theirs = _run_both(build, [{"n": 0}, {"n": 1}, {"n": 6}])
    _assert_close(ours, theirs)


def test_nested_loops_and_cond_inside_loop_match_tf():
    def build(lib):
        n = lib.placeholder(lib.int32, [], name="n")

        def outer(i, total):
            _, inner = lib.while_loop(lambda j, t: j < i, lambda j, t: (j + 1, t + j), [0, total])
            even = lib.equal(lib.mod(i, 2), 0)
            return i + 1, lib.cond(even, lambda: inner * 2, lambda: inner - 1)

        return list(lib.while_loop(lambda i, t: i < n, outer, [0, 0])), {"n": n}

    ours, theirs = _run_both(build, [{"n": 0}, {"n": 3}, {"n": 7}])
    _assert_close(ours, theirs)


def test_loop_inside_an_untaken_branch_does_not_run_like_tf():
    def build(lib):
        p = lib.placeholder(lib.bool, [], name="p")
        v = lib.Variable(0, name="v")

        def loop():
            return lib.while_loop(lambda i: i < 4, lambda i: i + lib.assign_add(v, 1) * 0 + 1, [0])

        r = lib.cond(p, loop, lambda: lib.constant(-1))
        return [r], {"p": p}

    ours, theirs = _run_both(build, [{"p": False}, {"p": True}, {"p": False}])
    _assert_close(ours, theirs)


def test_nested_structures_shape_invariants_and_parallel_iterations_match_tf():
    def build(lib):
        def body(state, count):
            grown = lib.concat([state["seq"], state["seq"][-1:] + 1], 0)
            return {"seq": grown, "steps": state["steps"] * 2}, count + 1

        out = lib.while_loop(
            lambda state, count: count < 4,
            body,
            ({"seq": lib.constant([0]), "steps": lib.constant(1.0)}, lib.constant(0)),
            shape_invariants=({"seq": lib.TensorShape([None]), "steps": lib.TensorShape([])}, lib.TensorShape([])),
            parallel_iterations=1,
        )
        return [out], {}

    ours, theirs = _run_both(build)
    _assert_close(ours, theirs)


def test_loop_reads_a_variable_updated_between_runs():
    with tf.Graph().as_default():
        v = tf.Variable(1.0)
        out = tf.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x + v), [0, 0.0])[1]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert float(sess.run(out)) == 3.0
            sess.run(tf.assign(v, 2.0))
            assert float(sess.run(out)) == 6.0


def test_control_dependency_from_outside_the_loop_runs_first():
    with tf.Graph().as_default():
        v = tf.Variable(0.0)
        bump = tf.assign_add(v, 5.0)
        with tf.control_dependencies([bump]):
            out = tf.while_loop(lambda i: i < 2.0, lambda i: i + 1.0, [tf.constant(0.0)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert float(sess.run(out)) == 2.0 and float(sess.run(v)) == 5.0


def test_graph_structure_and_names_match_tf():
    structures = []
    for lib in (tf, _real_tf()):
        with lib.Graph().as_default() as g:
            x = lib.placeholder(lib.float32, [], name="x")
            lib.cond(x > 0, lambda: x * 2.0, lambda: -x)  # noqa: B023 (called here, in this iteration)
            lib.while_loop(lambda i: i < 3, lambda i: i + 1, [lib.constant(0)])
            ops = [(op.name, op.type) for op in g.get_operations()]
            kinds = {"Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond", "Identity"}
            structures.append(sorted((name, kind) for name, kind in ops if kind in kinds))
    assert structures[0] == structures[1]


def test_errors_match_tf():
    for lib in (tf, _real_tf()):
        with lib.Graph().as_default():
            with pytest.raises(TypeError, match="must not be a Python bool"):
                lib.cond(True, lambda: 1, lambda: 2)
            with pytest.raises(ValueError, match="must have the same type"):
                lib.cond(lib.constant(True), lambda: lib.constant(1), lambda: lib.constant(2.0))  # noqa: B023
            with pytest.raises(ValueError, match="enters the loop with shape"):
                lib.while_loop(lambda i: i < 3, lambda i: lib.stack([i, i]), [lib.constant(0)])  # noqa: B023
            with pytest.raises(TypeError):
                lib.while_loop(lambda i: i < 3, "not callable", [lib.constant(0)])


def test_an_error_inside_a_loop_body_names_the_node():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        out = tf.while_loop(lambda i: i < 3, lambda i: i + tf.cast(tf.reshape(x, [2, 2])[0, 0], tf.int32), [0])
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError, match="Reshape"):
                sess.run(out, {x: [1.0, 2.0, 3.0]})


def test_fetching_a_dead_branch_output_is_an_error():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.bool, [])
        from dtf_notebook.ops.control_flow.primitives import switch

        on_false, _ = switch(tf.constant(1.0), p)
        with tf.Session() as sess:
            assert float(sess.run(on_false, {p: False})) == 1.0
            with pytest.raises(errors.InvalidArgumentError, match="branch not taken"):
                sess.run(on_false, {p: True})


def test_cond_trains_with_every_optimizer_like_tf():
    def build(lib):
        p = lib.placeholder(lib.bool, [], name="p")
        w = lib.Variable([[1.0, -2.0], [0.5, 0.25]], name="w")
        b = lib.Variable([0.1, 0.2], name="b")
        x = lib.constant([[1.0, 2.0]])
        y = lib.cond(p, lambda: lib.matmul(x, w) + b, lambda: lib.nn.relu(lib.matmul(x, w * 2.0)) - b)
        loss = lib.reduce_sum(lib.square(y - 1.0))
        steps = [
            lib.train.GradientDescentOptimizer(0.05).minimize(loss),
            lib.train.MomentumOptimizer(0.05, 0.9).minimize(loss),
            lib.train.AdamOptimizer(0.05).minimize(loss),
        ]
        return steps, {"p": p, "variables": [w, b]}

    feeds = [{"p": value} for value in (True, False, True, True, False)]
    ours, theirs = _run_both(build, feeds, read_after="variables")
    _assert_close(ours[1::2], theirs[1::2])
