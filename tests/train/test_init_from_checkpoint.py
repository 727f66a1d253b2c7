"""``tf.train.init_from_checkpoint``: TF1's assignment-map forms (names, objects, scopes, the root, partitioned
variables re-partitioned), placement of the reads, errors, and the same scenarios run by TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf

W = np.arange(6, dtype=np.float32).reshape(2, 3)
B = np.array([10.0, 20.0, 30.0], np.float32)
EMB = np.arange(14, dtype=np.float32).reshape(7, 2) * 0.5
X = np.float32(42.0)


def _save(tf_mod, directory: str) -> str:
    """The checkpoint every scenario reads: ``old/{w,b,emb (3 parts)}`` and ``other/x``."""
    with tf_mod.Graph().as_default():
        tf_mod.get_variable("old/w", initializer=W, use_resource=False)
        tf_mod.get_variable("old/b", initializer=B, use_resource=False)
        tf_mod.get_variable(
            "old/emb",
            initializer=tf_mod.constant(EMB),
            partitioner=tf_mod.fixed_size_partitioner(3),
            use_resource=False,
        )
        tf_mod.get_variable("other/x", initializer=X, use_resource=False)
        with tf_mod.Session() as sess:
            sess.run(tf_mod.global_variables_initializer())
            return tf_mod.train.Saver().save(sess, f"{directory}/model")


def _scenarios(tf_mod, directory: str) -> dict:
    """Each assignment-map form, in a graph of its own; the variables' values after initialisation."""
    _save(tf_mod, directory)
    results = {}

    def run(fetch):
        with tf_mod.Session() as sess:
            sess.run(tf_mod.global_variables_initializer())
            return sess.run(fetch)

    with tf_mod.Graph().as_default():  # scope to scope, the embedding partitioned differently
        w = tf_mod.get_variable("new/w", [2, 3], use_resource=False)
        b = tf_mod.get_variable("new/b", [3], use_resource=False)
        emb = tf_mod.get_variable("new/emb", [7, 2], partitioner=tf_mod.fixed_size_partitioner(2), use_resource=False)
        kept = tf_mod.get_variable("kept", initializer=np.float32(-1.0), use_resource=False)
        tf_mod.train.init_from_checkpoint(directory, {"old/": "new/", "other/x": "kept"})
        results["scope"] = run([w, b, list(emb), kept])
    with tf_mod.Graph().as_default():  # names, objects and lists of parts
        x = tf_mod.Variable(0.0, name="plain", use_resource=False)
        emb = tf_mod.get_variable("e", [7, 2], partitioner=tf_mod.fixed_size_partitioner(4), use_resource=False)
        whole = tf_mod.get_variable("whole", [7, 2], use_resource=False)
        untouched = tf_mod.get_variable("untouched", initializer=np.float32(5.0), use_resource=False)
        tf_mod.train.init_from_checkpoint(f"{directory}/model", {"other/x": x, "old/emb": list(emb)})
        tf_mod.train.init_from_checkpoint(directory, [("old/emb", "whole")])
        results["objects"] = run([x, list(emb), whole, untouched])
    with tf_mod.Graph().as_default():  # the root on both sides: same names
        with tf_mod.variable_scope("old"):
            w = tf_mod.get_variable("w", [2, 3], use_resource=False)
            emb = tf_mod.get_variable("emb", [7, 2], use_resource=False)
        tf_mod.train.init_from_checkpoint(directory, {"/": "/"})
        results["root"] = run([w, emb])
    with tf_mod.Graph().as_default():  # a checkpoint scope onto the root
        w = tf_mod.get_variable("w", [2, 3], use_resource=False)
        tf_mod.train.init_from_checkpoint(directory, {"old/": "/"})
        results["scope_to_root"] = run(w)
    with tf_mod.Graph().as_default():  # the root onto a scope
        with tf_mod.variable_scope("outer"):
            x = tf_mod.get_variable("other/x", [], use_resource=False)
        tf_mod.train.init_from_checkpoint(directory, {"/": "outer/"})
        results["root_to_scope"] = run(x)
    return results


def _errors(tf_mod, directory: str) -> list[type]:
    _save(tf_mod, directory)
    kinds = []
    for build, mapping in [
        (lambda: tf_mod.get_variable("w", [2, 3], use_resource=False), {"missing": "w"}),
        (lambda: tf_mod.get_variable("w", [3, 3], use_resource=False), {"old/w": "w"}),
        (lambda: tf_mod.get_variable("s/w", [2, 3], use_resource=False), {"old": "s/"}),
        (lambda: tf_mod.get_variable("s/zz", [2, 3], use_resource=False), {"old/": "s/"}),
    ]:
        with tf_mod.Graph().as_default():
            build()
            try:
                tf_mod.train.init_from_checkpoint(directory, mapping)
                kinds.append(None)
            except Exception as e:  # noqa: BLE001 - the kind is compared with TF's
                kinds.append(type(e).__name__)
    return kinds


def test_assignment_map_forms(tmp_path):
    got = _scenarios(tf, str(tmp_path))
    w, b, emb_parts, kept = got["scope"]
    np.testing.assert_array_equal(w, W)
    np.testing.assert_array_equal(b, B)
    np.testing.assert_array_equal(np.concatenate(emb_parts), EMB)
    assert [len(p) for p in emb_parts] == [4, 3] and kept == X
    x, parts, whole, untouched = got["objects"]
    assert x == X and untouched == 5.0
    np.testing.assert_array_equal(np.concatenate(parts), EMB)
    np.testing.assert_array_equal(whole, EMB)
    np.testing.assert_array_equal(got["root"][0], W)
    np.testing.assert_array_equal(got["root"][1], EMB)
    np.testing.assert_array_equal(got["scope_to_root"], W)
    assert got["root_to_scope"] == X


def test_errors_name_the_problem(tmp_path):
    _save(tf, str(tmp_path))
    with tf.Graph().as_default():
        tf.get_variable("w", [3, 3])
        with pytest.raises(ValueError, match="Tensor missing is not found in"):
            tf.train.init_from_checkpoint(str(tmp_path), {"missing": "w"})
        with pytest.raises(ValueError, match=r"Shape of variable w:0 \(\(3, 3\)\) doesn't match .* old/w \(\[2, 3\]\)"):
            tf.train.init_from_checkpoint(str(tmp_path), {"old/w": "w"})
        with pytest.raises(ValueError, match="Should be 'scope/': 'other_scope/'"):
            tf.train.init_from_checkpoint(str(tmp_path), {"old": "s/"})
        with pytest.raises(ValueError, match=r"Tensor other/w \(.* in other/\) is not found"):
            tf.train.init_from_checkpoint(str(tmp_path), {"other/": "/"})
        with pytest.raises(TypeError, match="assignment_map values"):
            tf.train.init_from_checkpoint(str(tmp_path), {"old/w": 3})
    with tf.Graph().as_default():
        a = tf.get_variable("a", [4], partitioner=tf.fixed_size_partitioner(2))
        c = tf.get_variable("c", [4], partitioner=tf.fixed_size_partitioner(2))
        with pytest.raises(ValueError, match="Slices must all be from the same tensor: a != c"):
            tf.train.init_from_checkpoint(str(tmp_path), {"old/b": [list(a)[0], list(c)[1]]})
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        tf.train.init_from_checkpoint(str(tmp_path / "empty"), {})
    with pytest.raises(tf.errors.NotFoundError, match="nothing_here"):
        tf.train.init_from_checkpoint(str(tmp_path / "nothing_here"), {})


def test_reads_run_on_the_variables_task_and_only_when_initialising(tmp_path):
    _save(tf, str(tmp_path))
    with tf.Graph().as_default() as graph:
        with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
            w = tf.get_variable("w", [2, 3])
            emb = tf.get_variable("emb", [7, 2], partitioner=tf.fixed_size_partitioner(2))
        tf.train.init_from_checkpoint(str(tmp_path), {"old/w": "w", "old/emb": "emb"})
        reads = [op for op in graph.get_operations() if op.name.startswith("checkpoint_initializer")]
        # Round robin: w on ps 0, the embedding's parts on ps 1 and ps 0; each read on its variable's task's CPU.
        assert [v.device for v in [w] + list(emb)] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"]
        assert sorted(op.device for op in reads) == [
            "/job:ps/task:0/device:CPU:0",
            "/job:ps/task:0/device:CPU:0",
            "/job:ps/task:1/device:CPU:0",
        ]
        assert w.initializer.device == w.device and w.initial_value.op in reads


@pytest.mark.tf_oracle
def test_matches_tensorflow(tmp_path):
    tf_real = pytest.importorskip("tensorflow").compat.v1
    tf_real.disable_eager_execution()
    for name in ("tf", "ours", "tf_errors", "ours_errors"):
        (tmp_path / name).mkdir()
    want = _scenarios(tf_real, str(tmp_path / "tf"))
    got = _scenarios(tf, str(tmp_path / "ours"))
    assert sorted(got) == sorted(want)
    for key in want:
        flat_want, flat_got = _flatten(want[key]), _flatten(got[key])
        assert len(flat_got) == len(flat_want), key
        for g, w in zip(flat_got, flat_want):
            np.testing.assert_array_equal(g, w, err_msg=key)
    assert _errors(tf, str(tmp_path / "ours_errors")) == _errors(tf_real, str(tmp_path / "tf_errors"))


def _flatten(value):
    if isinstance(value, list):
        return [x for v in value for x in _flatten(v)]
    return [np.asarray(value)]
