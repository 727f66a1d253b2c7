"""``tf.summary.get_summary_description`` against real TensorFlow."""

from __future__ import annotations

import pytest

import dtf_notebook.compat.v1 as tf

pytestmark = pytest.mark.tf_oracle


@pytest.mark.parametrize("description", [b'{"type_hint": "scalar"}', b'{"typeHint": "image"}', b"{}"])
def test_reads_tensor_summary_nodes_like_tf(description):
    tf1 = pytest.importorskip("tensorflow").compat.v1
    from tensorflow.core.framework import node_def_pb2

    node = node_def_pb2.NodeDef(name="s", op="TensorSummary")
    node.attr["description"].s = description
    expected = tf1.summary.get_summary_description(node)
    for given in (node, {"name": "s", "op": "TensorSummary", "attr": {"description": description}}):
        got = tf.summary.get_summary_description(given)
        assert got.type_hint == expected.type_hint
        assert str(got) == str(expected)


def test_refuses_other_nodes_like_tf():
    tf1 = pytest.importorskip("tensorflow").compat.v1
    from tensorflow.core.framework import node_def_pb2

    with pytest.raises(ValueError) as theirs:
        tf1.summary.get_summary_description(node_def_pb2.NodeDef(op="Add"))
    with tf.Graph().as_default():
        op = tf.add(1.0, 2.0).op
    with pytest.raises(ValueError) as mine:
        tf.summary.get_summary_description(op.node_def)
    assert str(mine.value) == str(theirs.value)
    with pytest.raises(ValueError, match="not JSON"):
        tf.summary.get_summary_description({"op": "TensorSummary", "attr": {"description": "type_hint: x"}})
