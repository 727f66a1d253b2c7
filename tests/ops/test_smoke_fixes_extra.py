"""Names that existed but differed from TF (api_coverage's smoke check), checked against real TensorFlow."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.oracle import compare, real_tf

pytestmark = pytest.mark.tf_oracle


def _run_tf(build):
    tf1 = real_tf()
    with tf1.Graph().as_default(), tf1.Session() as sess:
        return sess.run(build(tf1))


def _run_ours(build):
    with tf.Graph().as_default(), tf.Session() as sess:
        return sess.run(build(tf))


def test_linalg_transpose_is_matrix_transpose():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    compare(lambda m, a: m.linalg.transpose(a), [x])
    assert list(inspect.signature(tf.linalg.transpose).parameters) == ["a", "name", "conjugate"]


@pytest.mark.parametrize(
    "matrix",
    [
        [[0.2, 0.4], [0.6, 0.8]],  # a negative eigenvalue: no real root, NaN everywhere
        [[-1.0, 0.0], [0.0, 4.0]],
        [[0.0, 1.0], [0.0, 0.0]],  # nilpotent: TF's infinities and NaNs
        [[0.0, -1.0], [1.0, 0.0]],  # complex eigenvalues: a 2x2 Schur block
        [[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]],
        [[1.0, 2.0, 0.0, 0.3], [-3.0, 4.0, 0.1, 0.0], [0.0, 0.5, 2.0, -1.0], [0.2, 0.0, 1.0, 2.0]],
    ],
)
def test_sqrtm_matches_tf_including_nan(matrix):
    a = np.array(matrix, np.float64)
    expected = _run_tf(lambda m: m.linalg.sqrtm(a))
    got = _run_ours(lambda m: m.linalg.sqrtm(a))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(expected))
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)


def test_sqrtm_batch_and_float32():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(3, 3, 3))
    a = (a @ np.swapaxes(a, 1, 2) + np.eye(3)).astype(np.float32)
    compare(lambda m, x: m.sqrtm(x) if hasattr(m, "sqrtm") else m.linalg.sqrtm(x), [a], grad=False, rtol=1e-4)


@pytest.mark.parametrize(
    "args",
    [
        (np.array([0.3, 0.6], np.float32), 2, 2),
        (2.0, 3, np.float32(0.5)),
        (np.array([0.3], np.float64), 2.5, 1),
    ],
)
def test_betainc_converts_python_numbers_like_tf(args):
    def build(m):
        a = m.constant(args[0]) if isinstance(args[0], np.ndarray) else args[0]
        return m.betainc(a, *args[1:])

    np.testing.assert_allclose(_run_ours(build), _run_tf(build), rtol=1e-6)


@pytest.mark.parametrize(
    "args",
    [
        lambda m: (2, 3, m.constant([0.5])),  # a Python int first: int32, refused
        lambda m: (m.constant([1.0]), 2, m.constant([0.5], m.float64)),  # a tensor of another dtype
    ],
)
def test_betainc_refuses_what_tf_refuses(args):
    tf1 = real_tf()
    with tf1.Graph().as_default():
        with pytest.raises(TypeError) as theirs:
            tf1.betainc(*args(tf1))
    with tf.Graph().as_default():
        with pytest.raises(TypeError) as mine:
            tf.betainc(*args(tf))
    assert str(mine.value) == str(theirs.value)


@pytest.mark.parametrize(
    "name",
    ["Copy", "DeleteRecursively", "Exists", "Glob", "IsDirectory", "ListDirectory", "MakeDirs", "MkDir", "Remove"]
    + ["Rename", "Stat", "Walk", "GFile", "Open"],
)
def test_gfile_parameter_names(name):
    theirs = inspect.signature(getattr(real_tf().gfile, name)).parameters
    mine = inspect.signature(getattr(tf.gfile, name)).parameters
    assert list(mine) == list(theirs)


def test_gfile_by_tf1_keywords(tmp_path):
    a, b = str(tmp_path / "a.txt"), str(tmp_path / "b.txt")
    tf.gfile.MakeDirs(dirname=str(tmp_path / "d" / "e"))
    with tf.gfile.GFile(a, "w") as f:
        f.write("x")
    tf.gfile.Copy(oldpath=a, newpath=b)
    tf.gfile.Rename(oldname=b, newname=str(tmp_path / "c.txt"))
    assert tf.gfile.Exists(filename=str(tmp_path / "c.txt"))
    assert tf.gfile.Glob(filename=str(tmp_path / "*.txt")) == [a, str(tmp_path / "c.txt")]
    assert tf.gfile.Stat(filename=a).length == 1
    assert tf.gfile.IsDirectory(dirname=str(tmp_path / "d"))
    assert tf.gfile.ListDirectory(dirname=str(tmp_path / "d")) == ["e"]
    tf.gfile.Remove(filename=a)
    tf.gfile.DeleteRecursively(dirname=str(tmp_path / "d"))
    tf.gfile.MkDir(dirname=str(tmp_path / "f"))
    assert sorted(tf.gfile.ListDirectory(str(tmp_path))) == ["c.txt", "f"]


def test_export_meta_graph_signature_and_scope():
    theirs = list(inspect.signature(real_tf().train.export_meta_graph).parameters)
    assert list(inspect.signature(tf.train.export_meta_graph).parameters) == theirs

    def build(m):
        with m.name_scope("a"):
            v = m.Variable(1.0, name="v", use_resource=False)
            y = m.add(m.constant(1.0, name="x"), v, name="y")
            m.add_to_collection("c", y)
        z = m.identity(y, name="z")
        with m.name_scope("a"):
            m.identity(z, name="w")
        return m.train.export_meta_graph(export_scope="a")

    tf1 = real_tf()
    with tf1.Graph().as_default():
        theirs = build(tf1)
    with tf.Graph().as_default():
        mine = build(tf)
    assert [(n.name, list(n.input)) for n in mine.graph_def.node] == [
        (n.name, list(n.input)) for n in theirs.graph_def.node
    ]
    for key in ("c", "unbound_inputs", "variables"):
        assert mine.collection_def[key].SerializeToString() == theirs.collection_def[key].SerializeToString(), key


def test_export_meta_graph_info_debug_and_extra_savers(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        tf.train.Saver([v])
        keep = tf.train.Saver([v])
        path = str(tmp_path / "m.meta")
        meta = tf.train.export_meta_graph(
            path,
            meta_info_def={"tags": ["serve"]},
            saver_def=keep.saver_def,
            clear_extraneous_savers=True,
            save_debug_info=True,
        )
    assert list(meta.meta_info_def.tags) == ["serve"]
    names = {n.name.split("/")[0] for n in meta.graph_def.node}
    assert "save_1" in names and "save" not in names
    # TF's GraphDebugInfo beside the file, as TF names it: each node's creation stack, by "<name>@".
    real_tf()
    from tensorflow.core.framework.graph_debug_info_pb2 import GraphDebugInfo

    debug = GraphDebugInfo.FromString((tmp_path / "m.debug").read_bytes())
    assert set(debug.name_to_trace_id) == {f"{n.name}@" for n in meta.graph_def.node}
    trace = debug.traces_by_id[debug.name_to_trace_id["v@"]]
    assert any(debug.files[debug.frames_by_id[f].file_index] == __file__ for f in trace.frame_id)


def test_conv3d_transpose_takes_input_keyword():
    theirs = list(inspect.signature(real_tf().nn.conv3d_transpose).parameters)
    assert list(inspect.signature(tf.nn.conv3d_transpose).parameters) == theirs
    x = np.random.default_rng(1).normal(size=(1, 2, 2, 2, 3)).astype(np.float32)
    f = np.random.default_rng(2).normal(size=(2, 2, 2, 4, 3)).astype(np.float32)
    expected = compare(
        lambda m, a, k: m.nn.conv3d_transpose(a, filters=k, output_shape=[1, 4, 4, 4, 4], strides=2),
        [x, f],
        rtol=1e-4,
        atol=1e-5,
        grad_rtol=1e-4,
        grad_atol=1e-5,
    )
    # ``value`` stays required, as in TF; ``input=`` (TF's newer name) takes over when ``value`` is None.
    build = lambda m: m.nn.conv3d_transpose(None, input=x, filters=f, output_shape=[1, 4, 4, 4, 4], strides=2)  # noqa: E731
    np.testing.assert_allclose(_run_ours(build), _run_tf(build), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_run_ours(build), expected[0], rtol=1e-6)


def test_assert_variables_initialized_like_tf():
    tf1 = real_tf()
    for m in (tf1, tf):
        with m.Graph().as_default():
            assert m.assert_variables_initialized() is None
            _, b = m.Variable(1.0, use_resource=False), m.Variable([1.0, 2.0], use_resource=False)
            one = m.assert_variables_initialized([b])
            both = m.assert_variables_initialized()
            assert (one.op.type, both.op.type, both.shape.as_list()) == ("Rank", "Pack", [2])
            with m.Session() as sess:
                with pytest.raises(m.errors.FailedPreconditionError):
                    sess.run(both)
                sess.run(m.global_variables_initializer())
                assert sess.run(both).tolist() == [0, 1]


def test_approx_min_k_refuses_k_zero_and_negative():
    x = tf.constant([[1.0, 2.0], [3.0, 0.0]])
    with pytest.raises(ValueError, match="k >= 1"):
        tf.math.approx_min_k(x, 0)
    with pytest.raises(ValueError, match="less than minimum 0"):
        tf.math.approx_max_k(x, -1)
    with pytest.raises(ValueError, match="last dimension >= k = 3"):
        tf.math.approx_min_k(x, 3)
    with tf.Session() as sess:
        values, indices = sess.run(tf.math.approx_min_k(x, 1))
    assert values.tolist() == [[1.0], [0.0]] and indices.tolist() == [[0], [1]]
