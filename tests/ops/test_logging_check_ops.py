"""``tf.Print``, ``tf.print``, ``tf.Assert``, the ``tf.assert_*`` family, ``check_numerics`` and ``identity_n``.

Most tests build the same graph with real TensorFlow (``tensorflow.compat.v1``, marked ``tf_oracle``) and
with dtf_notebook, and compare values, printed text, op types and names, error classes and messages.
"""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.distributed.graph_codec import decode_graph_def, encode_graph_def
from dtf_notebook.framework.graph_import import import_graph_def


@pytest.fixture(scope="module")
def tf1():
    return pytest.importorskip("tensorflow").compat.v1


VALUES = [
    np.array([True, False, True]),
    np.array([0.1, 1e10, 1 / 3, np.nan, -np.inf], np.float32),
    np.array([0.1, 1 / 3, 2.0**60], np.float64),
    np.array([[b"a", b"b\n"], [b"c'", b'd"\\']], dtype=object),
    np.arange(24, dtype=np.int64).reshape(2, 3, 4),
    np.zeros((0, 3), np.float32),
    np.array(-3, np.int8),
    np.array(0.1, np.float16),
    np.array(200, np.uint8),
    np.arange(10, dtype=np.int32),
    np.array(True),
]


_TF_LOG = re.compile(r"[IWEF]\d{4} \d\d:\d\d:|WARNING: All log messages before absl")


def _printed(capfd, fn):
    capfd.readouterr()
    fn()
    sys.stdout.flush()
    sys.stderr.flush()
    out, err = capfd.readouterr()
    # TensorFlow's own log lines (absl format: "I0000 00:00:..." and the like) are not printed text.
    return tuple("".join(x for x in t.splitlines(True) if not _TF_LOG.match(x)) for t in (out, err))


def _print_graph(m, summarize, first_n=None):
    x = m.constant([1.0, 2.0])
    data = [m.constant(v) for v in VALUES] + ["text", 7]
    return m.Print(x, data, message=f"S{summarize}: ", summarize=summarize, first_n=first_n)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("summarize", [None, 2, 5, -1, 0])
def test_print_text_matches_tensorflow(tf1, capfd, summarize):
    texts = []
    for m in (tf1, tf):
        with m.Graph().as_default():
            y = _print_graph(m, summarize)
            with m.Session() as sess:
                texts.append(
                    _printed(capfd, lambda y=y, s=sess: np.testing.assert_array_equal(s.run(y), [1.0, 2.0]))[1]
                )
    assert texts[0] == texts[1]


@pytest.mark.tf_oracle
def test_print_graph_and_first_n_match_tensorflow(tf1, capfd):
    results = []
    for m in (tf1, tf):
        with m.Graph().as_default():
            y = _print_graph(m, 3, first_n=2)
            names = [y.name, y.op.type, y.shape.as_list(), [t.name for t in y.op.inputs][-3:]]
            attrs = [y.op.get_attr("first_n"), y.op.get_attr("summarize")]
            with m.Session() as sess:
                lines = [_printed(capfd, lambda y=y, s=sess: s.run(y))[1].count("\n") for _ in range(4)]
        results.append((names, attrs, lines))
    assert results[0] == results[1]
    assert results[1][2] == [1, 1, 0, 0]


@pytest.mark.tf_oracle
def test_print_gradient_and_identity_n_match_tensorflow(tf1):
    x0 = np.array([[1.0, -2.0], [3.0, 0.5]])
    results = []
    for m in (tf1, tf):
        with m.Graph().as_default():
            x = m.constant(x0)
            p = m.Print(x, [x], "x=")
            a, b = m.identity_n([p * 2.0, m.constant(3)])
            loss = m.reduce_sum(a * a)
            (grad,) = m.gradients(loss, x)
            with m.Session() as sess:
                values = sess.run([a, b, grad])
            results.append((values, a.op.type, a.op.name, b.name, b.shape.as_list(), p.op.type))
    (e_vals, *e_meta), (g_vals, *g_meta) = results
    assert e_meta == g_meta
    for e, g in zip(e_vals, g_vals):
        np.testing.assert_allclose(g, e)


def _v2_graph(m):
    x = m.constant(np.arange(24, dtype=np.int32).reshape(2, 3, 4))
    s = m.constant([b"a", b"b\n"])
    ops = [m.print("V", *[m.constant(v) for v in VALUES], summarize=k, output_stream=sys.stdout) for k in (3, 1, -1)]
    ops.append(m.print({"b": x, "a": [1, "x", s]}, "str{}", (2.5, None), output_stream=sys.stdout, sep="|"))
    ops.append(m.print(m.constant("lone string"), output_stream=sys.stdout))
    ops.append(m.print("no tensors", 3, output_stream=sys.stdout, end="!"))
    ops.append(m.print("to stderr", x[0]))
    return ops


@pytest.mark.tf_oracle
def test_tf_print_text_and_graph_match_tensorflow(tf1, capfd):
    results = []
    for m in (tf1, tf):
        with m.Graph().as_default() as g:
            ops = _v2_graph(m)
            kinds = [(op.type, [t.op.type for t in op.inputs]) for op in ops]
            streams = [op.get_attr("output_stream") for op in ops]  # TF gives string attrs as bytes
            streams = [v.decode() if isinstance(v, bytes) else v for v in streams]
            with m.Session() as sess:
                printed = [_printed(capfd, lambda op=op: sess.run(op)) for op in ops]
            nothing = [op for op in g.get_operations() if op.type == "PrintV2" and op.outputs]
        results.append((kinds, streams, printed, nothing))
    assert results[0] == results[1]


def test_tf_print_prints_only_when_run(capfd):
    x = tf.constant([1, 2])
    show = tf.print("x:", x, output_stream=sys.stdout)
    with tf.Session() as sess:
        assert _printed(capfd, lambda: sess.run(x * 2)) == ("", "")
        with tf.control_dependencies([show]):
            y = x * 2
        assert _printed(capfd, lambda: sess.run(y))[0] == "x: [1 2]\n"


def test_tf_print_to_a_file_and_bad_streams(tmp_path):
    path = tmp_path / "log.txt"
    op = tf.print("a", tf.constant([1.5]), output_stream=f"file://{path}")
    with tf.Session() as sess:
        sess.run(op)
        sess.run(op)
    assert path.read_text() == "a [1.5]\na [1.5]\n"
    with pytest.raises(ValueError, match="Unsupported output stream"):
        tf.print("a", output_stream=print)


# ---- Assert -------------------------------------------------------------------------------------
def _assertion_line(error: Exception) -> str:
    return next(line for line in str(error).splitlines() if line.startswith(("assertion failed", "In[0]")))


ASSERT_CASES = [
    ("ints", lambda m: m.Assert(m.placeholder_with_default(False, []), [m.constant([1, 2, 3, 4, 5]), "s"])),
    ("floats", lambda m: m.Assert(m.placeholder_with_default(False, []), [m.constant([[1.5, 2.0], [3.0, 4.0]]), "s"])),
    ("summarize", lambda m: m.Assert(m.placeholder_with_default(False, []), [m.range(10), "s"], summarize=2)),
    ("all", lambda m: m.Assert(m.placeholder_with_default(False, []), [m.range(10)], summarize=-1)),
    ("vector_condition", lambda m: m.Assert([True, False], ["s"])),
]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("case", ASSERT_CASES, ids=lambda c: c[0])
def test_assert_failure_matches_tensorflow(tf1, case):
    lines = []
    for m, error in ((tf1, tf1.errors.InvalidArgumentError), (tf, tf.errors.InvalidArgumentError)):
        with m.Graph().as_default():
            op = case[1](m)
            with m.Session() as sess, pytest.raises(error) as info:
                sess.run(op)
            lines.append(_assertion_line(info.value))
    assert lines[0] == lines[1]


@pytest.mark.tf_oracle
def test_assert_graph_and_condition_type_match_tensorflow(tf1):
    results = []
    for m in (tf1, tf):
        with m.Graph().as_default():
            op = m.Assert(m.placeholder_with_default(True, []), ["s", m.constant([1, 2])], name="check")
            with m.Session() as sess:
                sess.run(op)
            errors = []
            for bad in (lambda m=m: m.Assert(1, ["s"]), lambda m=m: m.Assert(m.constant(1), ["s"])):
                with pytest.raises(TypeError) as info:
                    bad()
                errors.append(str(info.value).splitlines()[0])
            results.append((op.name, op.type, op.outputs == [] or len(op.outputs) == 0, errors))
    assert results[0] == results[1]


# ---- the assert_* family ------------------------------------------------------------------------
def _pwd(m, value, shape=None):
    # int32 or float32 data, as TF converts the Python operands they are compared with
    array = np.asarray(value)
    return m.placeholder_with_default(array.astype(np.float32 if array.dtype.kind == "f" else np.int32), shape)


STATIC_CASES = [
    ("equal", lambda m: m.assert_equal([1, 2], [1, 3], message="hey")),
    ("equal_float", lambda m: m.assert_equal(m.constant([1.5, 2.0]), 2.0)),
    ("less", lambda m: m.assert_less(2.5, 1.0)),
    ("less_equal", lambda m: m.assert_less_equal([3, 1], [2, 2])),
    ("greater", lambda m: m.assert_greater([1, 2], 2)),
    ("greater_equal", lambda m: m.assert_greater_equal([1, 2], 2, data=["custom", m.constant(5)])),
    ("none_equal", lambda m: m.assert_none_equal([1, 2], [2, 2])),
    ("positive", lambda m: m.assert_positive([1, -2])),
    ("negative", lambda m: m.assert_negative([-1, 2], message="neg")),
    ("non_negative", lambda m: m.assert_non_negative(m.constant([-1.0]))),
    ("non_positive", lambda m: m.assert_non_positive([0, 2])),
    ("rank", lambda m: m.assert_rank([1, 2], 2, message="m")),
    ("rank_at_least", lambda m: m.assert_rank_at_least([1, 2], 2)),
    ("rank_in", lambda m: m.assert_rank_in([1, 2], [0, 2])),
    ("rank_float", lambda m: m.assert_rank([1, 2], 1.0)),
    ("rank_not_scalar", lambda m: m.assert_rank([1, 2], [1])),
    ("type", lambda m: m.assert_type(m.constant(1), m.float32, message="m")),
    ("integer", lambda m: m.assert_integer(m.constant(1.0), message="ints")),
    ("scalar", lambda m: m.assert_scalar(m.constant([1]))),
    ("scalar_unknown_rank", lambda m: m.assert_scalar(m.placeholder(m.float32))),
    ("iterable_int", lambda m: m.assert_proper_iterable(3)),
    ("iterable_str", lambda m: m.assert_proper_iterable("ab")),
    ("types_differ", lambda m: m.assert_equal(m.constant(1), m.constant(1.0))),
]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("case", STATIC_CASES, ids=lambda c: c[0])
def test_static_failures_match_tensorflow(tf1, case):
    got = []
    for m in (tf1, tf):
        with m.Graph().as_default():
            with pytest.raises(Exception) as info:
                case[1](m)
        got.append((type(info.value).__name__, str(info.value).split("\n")))
    assert got[0] == got[1]


RETURN_CASES = [
    ("equal_same", lambda m: (lambda x: m.assert_equal(x, x))(m.constant(1))),
    ("equal_static_ok", lambda m: m.assert_equal([1, 2], [1, 2])),
    ("positive_dynamic", lambda m: m.assert_positive(_pwd(m, [1, 2], [2]))),
    ("rank_static_ok", lambda m: m.assert_rank([1, 2], 1)),
    ("rank_at_least_ok", lambda m: m.assert_rank_at_least(m.zeros([2, 3]), 1)),
    ("rank_in_ok", lambda m: m.assert_rank_in(m.zeros([2, 3]), [1, 2])),
    ("rank_dynamic", lambda m: m.assert_rank(_pwd(m, [1, 2]), 1)),
    ("type_ok", lambda m: m.assert_type(m.constant(1), m.int32)),
    ("integer_ok", lambda m: m.assert_integer(m.constant(1))),
    ("scalar_ok", lambda m: m.assert_scalar(m.constant(1))),
    ("iterable_ok", lambda m: m.assert_proper_iterable([3])),
    ("numeric", lambda m: [m.is_numeric_tensor(x) for x in (m.constant(1), m.constant("a"), m.constant(True), 3)]),
]


def _describe(result):
    if isinstance(result, list | type(None)):
        return result
    return (type(result).__name__.replace("SymbolicTensor", "Tensor"), result.name, getattr(result, "type", None))


@pytest.mark.tf_oracle
@pytest.mark.parametrize("case", RETURN_CASES, ids=lambda c: c[0])
def test_what_checks_return_matches_tensorflow(tf1, case):
    got = []
    for m in (tf1, tf):
        with m.Graph().as_default():
            result = case[1](m)
            described = _describe(result)
            if hasattr(result, "type"):
                with m.Session() as sess:
                    sess.run(result)
        got.append(described)
    if isinstance(got[0], tuple):  # TF names its Operation class ShouldUseWrapper in graph mode
        got = [(g[0].replace("ShouldUseWrapper", "Operation"), *g[1:]) for g in got]
    assert got[0] == got[1]


DYNAMIC_CASES = [
    ("equal", lambda m: m.assert_equal(_pwd(m, [1, 2], [2]), [1, 3], summarize=1)),
    ("less", lambda m: m.assert_less(_pwd(m, [[1, 5], [2, 6]], [2, 2]), 5, message="small")),
    ("positive", lambda m: m.assert_positive(_pwd(m, [1, -2], [2]), message="m")),
    ("negative", lambda m: m.assert_negative(_pwd(m, [1, -2], [2]))),
    ("non_positive", lambda m: m.assert_non_positive(_pwd(m, [1, -2], [2]))),
    ("non_negative", lambda m: m.assert_non_negative(_pwd(m, [1, -2], [2]))),
    ("none_equal", lambda m: m.assert_none_equal(_pwd(m, [1, 2], [2]), [3, 2])),
    ("rank", lambda m: m.assert_rank(_pwd(m, [1, 2]), 2)),
    ("rank_at_least", lambda m: m.assert_rank_at_least(_pwd(m, [1, 2]), 3)),
    ("rank_in", lambda m: m.assert_rank_in(_pwd(m, [1, 2]), [0, 2])),
    ("float_data", lambda m: m.assert_equal(_pwd(m, [1.0, 2.0], [2]), [1.0, 3.5])),
]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("case", DYNAMIC_CASES, ids=lambda c: c[0])
def test_run_time_failures_match_tensorflow(tf1, case):
    lines = []
    for m, error in ((tf1, tf1.errors.InvalidArgumentError), (tf, tf.errors.InvalidArgumentError)):
        with m.Graph().as_default():
            op = case[1](m)
            with m.Session() as sess, pytest.raises(error) as info:
                sess.run(op)
            lines.append(_assertion_line(info.value))
    assert lines[0] == lines[1]


def test_assert_near_passes_and_fails_at_run_time():
    x = tf.placeholder(tf.float32, [2])
    check = tf.assert_near(x, [1.0, 2.0], message="close")
    with tf.Session() as sess:
        sess.run(check, {x: [1.0, 2.0 + 1e-6]})
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(check, {x: [1.0, 2.1]})
    line = _assertion_line(info.value)
    assert line.startswith("assertion failed: [close.  ] [x and y not equal to tolerance rtol = Tensor(")
    assert line.endswith("[x (Placeholder:0) = ] [1 2.1] [y (assert_near/y:0) = ] [1 2]")


@pytest.mark.tf_oracle
def test_assert_near_message_matches_tensorflow(tf1):
    lines = []
    for m, error in ((tf1, tf1.errors.InvalidArgumentError), (tf, tf.errors.InvalidArgumentError)):
        with m.Graph().as_default():
            op = m.assert_near(_pwd(m, [1.0, 2.0], [2]), [1.0, 2.1], rtol=0.01)
            with m.Session() as sess, pytest.raises(error) as info:
                sess.run(op)
            lines.append(_assertion_line(info.value))
    assert lines[0] == lines[1]


def test_checks_gate_what_depends_on_them():
    x = tf.placeholder(tf.float32, [None])
    with tf.control_dependencies([tf.assert_positive(x), tf.assert_rank(x, 1)]):
        y = tf.log(x)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(y, {x: [1.0, np.e]}), [0.0, 1.0], rtol=1e-6)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Condition x > 0 did not hold"):
            sess.run(y, {x: [1.0, -1.0]})


def test_debugging_namespace_has_the_checks():
    for name in ("Assert", "assert_equal", "assert_rank_in", "check_numerics", "is_numeric_tensor", "assert_scalar"):
        assert getattr(tf.debugging, name) is getattr(tf, name)


# ---- check_numerics -----------------------------------------------------------------------------
@pytest.mark.tf_oracle
@pytest.mark.parametrize("values", [[1.0, np.nan], [np.inf, 1.0], [np.nan, -np.inf]])
def test_check_numerics_matches_tensorflow(tf1, values):
    got = []
    for m, error in ((tf1, tf1.errors.InvalidArgumentError), (tf, tf.errors.InvalidArgumentError)):
        with m.Graph().as_default():
            x = m.placeholder(m.float32, [2])
            y = m.check_numerics(x, "boom")
            (grad,) = m.gradients(m.check_numerics(x * 1.0, "in grad") * np.float32(np.nan), x)
            with m.Session() as sess:
                np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0]}), [1.0, 2.0])
                with pytest.raises(error) as first:
                    sess.run(y, {x: values})
                with pytest.raises(error) as second:
                    sess.run(grad, {x: [1.0, 2.0]})
            lines = [[s for s in str(e.value).splitlines() if " : Tensor had " in s][0] for e in (first, second)]
            # TF 2's gradient function formats the message attr as bytes (b'in grad'); TF 1 wrote the text.
            lines = [line.replace("b'in grad'", "in grad") for line in lines]
            got.append((y.op.type, y.name, lines))
    assert got[0] == got[1]
    with pytest.raises(TypeError, match="DataType int32 not in list of allowed values"):
        tf.check_numerics(tf.constant(1), "ints")


# ---- graph defs ---------------------------------------------------------------------------------
def test_graph_def_round_trip_keeps_the_ops_working(capfd):
    x = tf.placeholder(tf.float32, [2], name="x")
    p = tf.Print(x, [x, "hi"], message="p: ", summarize=1, name="p")
    a, _ = tf.identity_n([p, tf.constant(1)], name="n")
    tf.print("v2", a, output_stream=sys.stdout, name="show")
    check = tf.assert_positive(x, name="pos")
    plain, arrays = encode_graph_def(tf.get_default_graph().as_graph_def_dict())
    graph = import_graph_def(decode_graph_def(plain, arrays))
    with graph.as_default(), tf.Session(graph=graph) as sess:
        ops = {n: graph.get_operation_by_name(n) for n in ("p", "n", "show", check.name)}
        feed = {graph.get_tensor_by_name("x:0"): [1.0, 2.0]}
        out, err = _printed(capfd, lambda: sess.run([ops["n"].outputs[0], ops["show"], ops[check.name]], feed))
        assert (out, err) == ("v2 [1 2]\n", "p: [1...][hi]\n")
        with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape("[x (x:0) = ] [-1 2]")):
            sess.run(ops[check.name], {graph.get_tensor_by_name("x:0"): [-1.0, 2.0]})
