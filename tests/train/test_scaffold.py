"""tf.train.Scaffold: the defaults finalize() makes (ops, names, collections, what they report) against real TF, and
the registered resources those defaults initialise and report."""

from __future__ import annotations

from typing import Any

import pytest

import dtf_notebook.compat.v1 as dtf
from dtf_notebook.ops import resources
from dtf_notebook.train.scaffold import Scaffold


def _describe(x: Any) -> Any:
    if x is None:
        return None
    if hasattr(x, "control_inputs"):
        return x.name, x.type, sorted(i.name for i in x.control_inputs)
    return x.name, x.op.type


def _scenario(m: Any, scaffold_class: Any) -> dict[str, Any]:
    m.train.get_or_create_global_step()
    m.Variable(1.0, name="v")
    m.Variable(0.0, name="lv", collections=[m.GraphKeys.LOCAL_VARIABLES])
    m.summary.scalar("loss", m.constant(1.0))
    scaffold = scaffold_class().finalize()
    g = m.get_default_graph()
    keys = ("init_op", "ready_op", "ready_for_local_init_op", "local_init_op", "summary_op")
    seen: dict[str, Any] = {key: _describe(getattr(scaffold, key)) for key in keys}
    seen["collections"] = {key: [getattr(x, "name", None) for x in g.get_collection(key)] for key in keys}
    seen["saver"] = (type(scaffold.saver).__name__, scaffold.saver.saver_def.sharded, g.get_collection("savers"))
    seen["finalized"] = g.finalized
    with m.Session() as sess:
        seen["before"] = [list(sess.run(scaffold.ready_op)), list(sess.run(scaffold.ready_for_local_init_op))]
        sess.run(scaffold.init_op)
        seen["after init"] = [list(sess.run(scaffold.ready_op)), list(sess.run(scaffold.ready_for_local_init_op))]
        sess.run(scaffold.local_init_op)
        seen["after local init"] = list(sess.run(scaffold.ready_op))
    seen["saver"] = seen["saver"][:2] + (len(seen["saver"][2]),)
    return seen


@pytest.mark.tf_oracle
def test_finalize_makes_tf_defaults():
    tf1 = pytest.importorskip("tensorflow").compat.v1
    tf1.disable_eager_execution()
    with dtf.Graph().as_default():
        ours = _scenario(dtf, Scaffold)
    with tf1.Graph().as_default():
        theirs = _scenario(tf1, tf1.train.Scaffold)
    assert ours == theirs
    assert ours["after local init"] == []


@pytest.mark.tf_oracle
def test_an_empty_graph_gets_a_saver_and_no_summary_op_as_in_tf():
    tf1 = pytest.importorskip("tensorflow").compat.v1
    tf1.disable_eager_execution()
    seen = []
    for m, cls in ((dtf, Scaffold), (tf1, tf1.train.Scaffold)):
        with m.Graph().as_default():
            scaffold = cls().finalize()
            seen.append((_describe(scaffold.init_op), scaffold.summary_op, type(scaffold.saver).__name__))
    assert seen[0] == seen[1]


def test_given_pieces_and_copies_win_over_defaults():
    ready = dtf.constant([], dtype=dtf.string)
    base = Scaffold(ready_op=ready, init_fn=lambda scaffold, sess: None, init_feed_dict={"x": 1})
    copy = Scaffold(copy_from_scaffold=base, local_init_feed_dict={"y": 2}).finalize()
    assert copy.ready_op is ready and copy.init_feed_dict == {"x": 1} and copy.local_init_feed_dict == {"y": 2}
    assert copy.init_fn is not None
    with pytest.raises(TypeError, match="copy_from_scaffold is not a Scaffold instance"):
        Scaffold(copy_from_scaffold=object())


def test_two_init_ops_in_the_collection_must_be_chosen_between():
    dtf.add_to_collection(dtf.GraphKeys.INIT_OP, dtf.no_op())
    dtf.add_to_collection(dtf.GraphKeys.INIT_OP, dtf.no_op())
    with pytest.raises(RuntimeError, match=r'More than one item in the collection "init_op".*Scaffold\(init_op='):
        Scaffold().finalize()


def test_registered_resources_are_initialised_and_reported_by_the_defaults():
    shared = dtf.Variable(1.0, name="shared_table", collections=[])
    local = dtf.Variable(2.0, name="local_table", collections=[])
    resources.register_resource(shared, shared.initializer, dtf.is_variable_initialized(shared))
    resources.register_resource(local, local.initializer, dtf.is_variable_initialized(local), is_shared=False)
    scaffold = Scaffold().finalize()
    with dtf.Session() as sess:
        assert list(sess.run(scaffold.ready_op)) == [b"shared_table:0", b"local_table:0"]
        assert list(sess.run(scaffold.ready_for_local_init_op)) == [b"shared_table:0"]
        sess.run(scaffold.init_op)
        assert list(sess.run(scaffold.ready_op)) == [b"local_table:0"]
        sess.run(scaffold.local_init_op)
        assert list(sess.run(scaffold.ready_op)) == []
