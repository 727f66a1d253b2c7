"""TF1's iterator kinds (one-shot, initializable, reinitializable, feedable), their ops and errors, against real
TensorFlow 1 where TF defines the behaviour."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import dtf_notebook.compat.v1 as dtf
from tests.data.oracle import real_tf

pytestmark = pytest.mark.tf_oracle


def _both():
    return [("tf", real_tf()), ("dtf", dtf)]


def _drain(sess, tensor, feed=None, limit=1000):
    out = []
    for _ in range(limit):
        try:
            out.append(sess.run(tensor, feed))
        except (dtf.errors.OutOfRangeError, real_tf().errors.OutOfRangeError):
            return out
    return out


@pytest.mark.parametrize("which", ["tf", "dtf"])
def test_initializable_iterator_with_placeholders_restarts_on_each_initialization(which):
    m = dict(_both())[which]
    with m.Graph().as_default():
        data = m.placeholder(m.float32, [None, 2])
        scale = m.placeholder(m.float32, [])
        it = m.data.Dataset.from_tensor_slices(data).map(lambda row: row * scale).make_initializable_iterator()
        x = it.get_next()
        assert x.shape.as_list() == [2] and x.dtype == m.float32 and x.op.name == "IteratorGetNext"
        with m.Session() as sess:
            sess.run(it.initializer, {data: [[1, 2], [3, 4], [5, 6]], scale: 10.0})
            first = sess.run(x)
            sess.run(it.initializer, {data: [[7, 8]], scale: -1.0})  # a new pass, from the start
            rest = _drain(sess, x)
            with pytest.raises(m.errors.OutOfRangeError):  # and it stays at the end
                sess.run(x)
    np.testing.assert_array_equal(first, [10, 20])
    np.testing.assert_array_equal(np.array(rest), [[-7, -8]])


@pytest.mark.parametrize("which", ["tf", "dtf"])
def test_state_persists_across_runs_and_variables_are_captured_at_initialization(which):
    m = dict(_both())[which]
    with m.Graph().as_default():
        v = m.Variable(5, dtype=m.int64, name="v", use_resource=False)  # TF1's kind, whatever TF's global defaults
        it = m.data.Dataset.range(4).map(lambda x: x + v).make_initializable_iterator()
        x = it.get_next()
        assign = v.assign(100)
        with m.Session() as sess:
            sess.run(v.initializer)
            sess.run(it.initializer)
            a = sess.run(x)
            sess.run(assign)
            b = sess.run(x)  # the pass keeps the value it was initialised with
            sess.run(it.initializer)
            c = sess.run(x)
    assert (int(a), int(b), int(c)) == (5, 6, 100)


def test_reinitializable_iterator_switches_datasets_and_checks_them():
    results = {}
    for name, m in _both():
        with m.Graph().as_default():
            it = m.data.Iterator.from_structure(m.int64, m.TensorShape([]))
            x = it.get_next()
            train = it.make_initializer(m.data.Dataset.range(3))
            test = it.make_initializer(m.data.Dataset.range(100, 102))
            with m.Session() as sess:
                sess.run(train)
                got = [sess.run(x)]
                sess.run(test)
                got += _drain(sess, x)
                sess.run(train)
                got += [sess.run(x)]
            errors = []
            for bad in (
                m.data.Dataset.from_tensors(1.0),
                m.data.Dataset.range(3).batch(2),
                m.data.Dataset.from_tensors((1, 2)),
            ):
                try:
                    it.make_initializer(bad)
                except (TypeError, ValueError) as e:
                    errors.append((type(e).__name__, str(e).split("\n")[0]))
            with pytest.raises(ValueError, match="does not have an initializer"):
                _ = it.initializer
        results[name] = ([int(v) for v in got], errors)
    assert results["dtf"] == results["tf"]
    assert results["dtf"][0] == [0, 100, 101, 0]


def test_feedable_iterator_reads_whichever_iterator_its_handle_names():
    results = {}
    for name, m in _both():
        with m.Graph().as_default():
            handle = m.placeholder(m.string, [])
            feedable = m.data.Iterator.from_string_handle(handle, m.int64, m.TensorShape([]))
            x = feedable.get_next()
            train_it = m.data.Dataset.range(10).make_one_shot_iterator()
            valid_it = m.data.Dataset.range(100, 103).make_initializable_iterator()
            with m.Session() as sess:
                h_train, h_valid = sess.run([train_it.string_handle(), valid_it.string_handle()])
                got = [sess.run(x, {handle: h_train}), sess.run(x, {handle: h_train})]
                sess.run(valid_it.initializer)
                got += _drain(sess, x, {handle: h_valid})
                got += [sess.run(x, {handle: h_train})]  # the training pass kept its place
        results[name] = [int(v) for v in got]
    assert results["dtf"] == results["tf"] == [0, 1, 100, 101, 102, 2]


def test_one_shot_iterator_refuses_placeholders_and_variables_like_tf():
    for _, m in _both():
        with m.Graph().as_default():
            p = m.placeholder(m.int64, [None], name="p")
            with pytest.raises(ValueError, match=r"Cannot capture a placeholder \(name:p, type:Placeholder\)"):
                m.data.make_one_shot_iterator(m.data.Dataset.from_tensor_slices(p))
            v = m.Variable(1, dtype=m.int64, name="v")
            with pytest.raises(
                ValueError, match=r"Cannot capture a stateful node \(name:v, type:(VariableV2|VarHandleOp)\)"
            ):
                m.data.Dataset.range(3).map(lambda x, v=v: x + v).make_one_shot_iterator()


def test_one_shot_iterator_reads_its_pass_once_and_copies_the_ops_it_needs():
    with dtf.Graph().as_default():
        n = dtf.constant(3, dtf.int64) + 1  # computed ops are copied into the iterator's factory
        x = dtf.data.Dataset.range(n).make_one_shot_iterator().get_next()
        with dtf.Session() as sess:
            assert [int(v) for v in _drain(sess, x)] == [0, 1, 2, 3]
            with pytest.raises(dtf.errors.OutOfRangeError, match="End of sequence"):
                sess.run(x)


def test_uninitialized_iterator_fails_with_tfs_message():
    messages = {}
    for name, m in _both():
        with m.Graph().as_default():
            x = m.data.Dataset.range(3).make_initializable_iterator().get_next()
            with m.Session() as sess, pytest.raises(m.errors.FailedPreconditionError) as info:
                sess.run(x)
        messages[name] = [line for line in info.value.message.split("\n") if line.startswith("GetNext()")][0]
    assert messages["dtf"] == messages["tf"]


def test_iterator_properties_match_tf():
    seen = {}
    for name, m in _both():
        with m.Graph().as_default():
            ds = m.data.Dataset.from_tensor_slices(({"a": [[1.0, 2.0]]}, ["s"])).batch(1)
            it = ds.make_initializable_iterator()
            nxt = it.get_next()
            seen[name] = (
                repr(it.output_types),
                [s.as_list() for s in (it.output_shapes[0]["a"], it.output_shapes[1])],
                [t.__name__ for t in (it.output_classes[0]["a"], it.output_classes[1])],
                it.initializer.type,
                it.string_handle().dtype.name,
                nxt[0]["a"].shape.as_list(),
                nxt[1].op.name,
                it._iterator_resource.dtype.name,
            )
    assert seen["dtf"] == seen["tf"]


def test_get_single_element_matches_tf():
    for m in (real_tf(), dtf):
        with m.Graph().as_default():
            one = m.data.experimental.get_single_element(m.data.Dataset.range(5).skip(4).map(lambda x: (x, x * 2)))
            two = m.data.experimental.get_single_element(m.data.Dataset.range(2))
            none = m.data.experimental.get_single_element(m.data.Dataset.range(0))
            with m.Session() as sess:
                assert [int(v) for v in sess.run(one)] == [4, 8]
                with pytest.raises(m.errors.InvalidArgumentError, match="Dataset had more than one element"):
                    sess.run(two)
                with pytest.raises(m.errors.InvalidArgumentError, match="Dataset was empty"):
                    sess.run(none)


def test_two_iterators_over_one_dataset_are_independent():
    with dtf.Graph().as_default():
        ds = dtf.data.Dataset.range(5)
        a, b = ds.make_one_shot_iterator().get_next(), ds.make_one_shot_iterator().get_next()
        with dtf.Session() as sess:
            assert [int(sess.run(a)), int(sess.run(a)), int(sess.run(b))] == [0, 1, 0]


def test_from_generator_runs_in_this_process_and_checks_what_it_yields():
    results = {}
    for name, m in _both():
        with m.Graph().as_default():
            ds = m.data.Dataset.from_generator(
                lambda n: ((i, "x" * i) for i in range(n)), (m.int64, m.string), (m.TensorShape([]), None), args=[3]
            )
            bad_type = m.data.Dataset.from_generator(lambda: iter([1, "a"]), m.int64)
            bad_shape = m.data.Dataset.from_generator(lambda: iter([[1], [2, 3]]), m.int64, m.TensorShape([1]))
            x, t, s = (d.make_one_shot_iterator().get_next() for d in (ds, bad_type, bad_shape))
            with m.Session() as sess:
                got = [tuple(v) for v in _drain(sess, x)]
                errors = []
                for tensor in (t, s):
                    sess.run(tensor)
                    with pytest.raises(m.errors.InvalidArgumentError) as info:
                        sess.run(tensor)
                    errors.append([line for line in info.value.message.split("\n") if line.startswith("TypeError:")][0])
        results[name] = ([(int(a), bytes(b)) for a, b in got], errors)
    assert results["dtf"][0] == results["tf"][0] == [(0, b""), (1, b"x"), (2, b"xx")]
    assert results["dtf"][1][1] == results["tf"][1][1]  # the shape message
    assert results["dtf"][1][0].startswith("TypeError: `generator` yielded an element")


def test_closing_the_session_stops_the_pipeline_threads():
    before = threading.active_count()
    with dtf.Graph().as_default():
        x = dtf.data.Dataset.range(10**9).map(lambda v: v * 2, num_parallel_calls=3).prefetch(4)
        x = x.make_one_shot_iterator().get_next()
        with dtf.Session() as sess:
            assert [int(sess.run(x)) for _ in range(3)] == [0, 2, 4]
            assert threading.active_count() > before
    deadline = time.monotonic() + 10
    while threading.active_count() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert threading.active_count() <= before


def test_get_next_gives_up_at_the_step_deadline():
    def slow():
        time.sleep(5)
        yield 1

    with dtf.Graph().as_default():
        x = dtf.data.Dataset.from_generator(slow, dtf.int64).prefetch(1).make_one_shot_iterator().get_next()
        with dtf.Session() as sess:
            start = time.monotonic()
            with pytest.raises(dtf.errors.DeadlineExceededError):
                sess.run(x, options=dtf.RunOptions(timeout_in_ms=300))
            assert time.monotonic() - start < 3
