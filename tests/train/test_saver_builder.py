"""``Saver(builder=...)``: TF's parameter in TF's position, and a builder of one's own adding the ops."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.train.saver_builder import BulkSaverBuilder


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


class CountingBuilder(BulkSaverBuilder):
    """A builder subclass, as TF users write them: it records what the Saver asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = []

    def build(self, names_to_saveables, **kwargs):
        self.calls.append((list(names_to_saveables), kwargs))
        return super().build(names_to_saveables, **kwargs)


def test_a_given_builder_adds_the_ops_and_the_saver_works(tmp_path):
    v = tf.Variable([1.0, 2.0], name="v")
    builder = CountingBuilder()
    saver = tf.train.Saver([v], sharded=True, max_to_keep=3, name="ckpt", builder=builder)
    ((var_list, kwargs),) = builder.calls
    assert var_list == [v]
    assert kwargs == {
        "reshape": False,
        "sharded": True,
        "max_to_keep": 3,
        "keep_checkpoint_every_n_hours": 10000.0,
        "name": "ckpt",
        "restore_sequentially": False,
        "filename": None,
    }
    assert saver.saver_def.restore_op_name == "ckpt/restore_all" and saver.saver_def.max_to_keep == 3
    with tf.Session() as sess:
        sess.run(v.initializer)
        path = saver.save(sess, str(tmp_path / "m"))
        sess.run(tf.assign(v, [0.0, 0.0]))
        saver.restore(sess, path)
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])


def test_builder_is_not_used_with_a_saver_def_and_waits_for_a_deferred_build():
    v = tf.Variable(1.0, name="v")
    first = tf.train.Saver([v])
    builder = CountingBuilder()
    tf.train.Saver(saver_def=first.saver_def, builder=builder)
    assert builder.calls == []
    deferred = tf.train.Saver(builder=builder, defer_build=True)
    assert builder.calls == []
    deferred.build()
    assert len(builder.calls) == 1


def test_default_builder_writes_the_saver_def_policy():
    tf.Variable(1.0, name="v")
    saver = tf.train.Saver(max_to_keep=None, keep_checkpoint_every_n_hours=2.0, write_version=tf.train.SaverDef.V1)
    d = saver.saver_def
    assert (d.max_to_keep, d.keep_checkpoint_every_n_hours, d.version) == (0, 2.0, 1)


@pytest.mark.tf_oracle
def test_saver_parameters_are_tfs_in_tfs_order():
    tf_real = pytest.importorskip("tensorflow").compat.v1
    want = list(inspect.signature(tf_real.train.Saver.__init__).parameters)
    got = list(inspect.signature(tf.train.Saver.__init__).parameters)
    assert got == want
