"""Fewer messages per step (issue 13): small constants copied to the tasks that read them, and a targeted NoOp that
only groups other tasks' updates replaced by them, before a step is partitioned."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dtf_notebook.compat.v1 as tf
from dtf_notebook.distributed.constant_copies import MAX_COPIED_ELEMENTS, copy_small_constants
from dtf_notebook.distributed.control_edges import hoist_target_noops
from tests.distributed.cluster_util import LocalCluster

PS0, PS1, WK = (f"/job:{j}/replica:0/task:{t}/device:CPU:0" for j, t in (("ps", 0), ("ps", 1), ("worker", 0)))
WK_GPU = "/job:worker/replica:0/task:0/device:GPU:0"


def _const(name, value=0.1, inputs=()):
    return {"name": name, "op": "Const", "input": list(inputs), "attr": {"value": np.asarray(value, np.float32)}}


def _node(name, op="AssignAdd", inputs=()):
    return {"name": name, "op": op, "input": list(inputs)}


def _inputs(nodes):
    return {n["name"]: n["input"] for n in nodes}


def _copy(nodes, placement, keep=()):
    types = {n["name"]: [("float32", ())] for n in nodes}
    return copy_small_constants(nodes, placement, types, set(keep)), types


def test_a_constant_read_on_other_tasks_gets_one_copy_per_reading_device():
    nodes = [_const("lr"), _node("a", inputs=["w", "lr"]), _node("b", inputs=["^lr"]), _node("c", inputs=["lr:0"])]
    placement = {"lr": WK, "a": PS0, "b": PS1, "c": PS0}
    out, types = _copy(nodes, placement)
    assert _inputs(out) == {
        "lr/_copy_0": [],
        "lr/_copy_1": [],
        "a": ["w", "lr/_copy_0"],
        "b": ["^lr/_copy_1"],
        "c": ["lr/_copy_0:0"],
    }
    assert placement["lr/_copy_0"] == PS0 and placement["lr/_copy_1"] == PS1 and "lr" not in placement
    assert types["lr/_copy_1"] == types["lr"]
    assert _inputs(nodes)["a"] == ["w", "lr"]  # the caller's nodes are not changed


def test_a_constant_read_at_home_or_fetched_stays_and_one_that_waits_or_is_large_is_not_copied():
    nodes = [_const("lr"), _node("here", inputs=["lr"]), _node("there", inputs=["lr"])]
    out, _ = _copy(nodes, {"lr": WK, "here": WK_GPU, "there": PS0})
    assert [n["name"] for n in out] == ["lr", "lr/_copy_0", "here", "there"]  # the same task: no copy for "here"
    out, _ = _copy(nodes[:1] + nodes[2:], {"lr": WK, "there": PS0}, keep={"lr"})
    assert [n["name"] for n in out] == ["lr", "lr/_copy_0", "there"]
    waits = [_const("lr", inputs=["^x"]), _node("there", inputs=["lr"])]
    assert _inputs(_copy(waits, {"lr": WK, "there": PS0})[0])["there"] == ["lr"]
    large = [_const("big", np.zeros(MAX_COPIED_ELEMENTS + 1)), _node("there", inputs=["big"])]
    assert _inputs(_copy(large, {"big": WK, "there": PS0})[0])["there"] == ["big"]


def test_a_targeted_noop_grouping_other_tasks_updates_is_replaced_by_them():
    nodes = [_node("a"), _node("b"), _node("train", "NoOp", ["^a", "^b"])]
    out, targets = hoist_target_noops(nodes, {"a": PS0, "b": PS1, "train": WK}, ["train"])
    assert [n["name"] for n in out] == ["a", "b"] and targets == ["a", "b"]


def test_a_noop_read_or_waited_on_local_only_untargeted_or_in_control_flow_stays():
    placement = {"a": PS0, "b": PS1, "train": WK, "after": WK, "m": WK}
    group = [_node("a"), _node("b"), _node("train", "NoOp", ["^a", "^b"])]
    cases = [
        (group + [_node("after", inputs=["^train"])], ["train", "after"]),  # something waits on it
        ([_node("a"), _node("train", "NoOp", ["^a"])], ["train"]),  # groups nothing of another task (a on WK)
        (group, []),  # not a target of the step
        (group + [_node("m", "Merge", [])], ["train"]),  # control flow
    ]
    for nodes, targets in cases:
        local = dict(placement, a=WK) if len(nodes) == 2 else placement
        out, new_targets = hoist_target_noops(nodes, local, targets)
        assert "train" in {n["name"] for n in out} and new_targets == targets


def _embedding_graph(setter):
    with tf.device(setter):
        embedding = tf.get_variable(
            "embedding", [30, 4], initializer=tf.constant_initializer(0.5), partitioner=tf.fixed_size_partitioner(3)
        )
        ids = tf.placeholder(tf.int64, [6], name="ids")
        loss = tf.reduce_sum(tf.square(tf.nn.embedding_lookup(embedding, ids)))
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return ids, loss, train_op, embedding


@pytest.mark.slow
@pytest.mark.cluster
def test_a_partitioned_embedding_step_sends_no_constant_and_no_update_signal_between_tasks():
    feeds = [np.array([0, 1, 11, 12, 25, 29]), np.array([3, 3, 14, 22, 28, 0])]
    with tf.Graph().as_default():
        ids, loss, train_op, embedding = _embedding_graph(None)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            local = [sess.run([train_op, loss], {ids: f})[1] for f in feeds]
            local_table = sess.run(tf.concat(list(embedding), 0))
    with LocalCluster(ps=3, workers=1) as cluster, tf.Graph().as_default():
        spec = tf.train.ClusterSpec(cluster.spec)
        setter = tf.train.replica_device_setter(cluster=spec, worker_device="/job:worker/task:0")
        ids, loss, train_op, embedding = _embedding_graph(setter)
        with tf.Session(cluster.target("worker", 0)) as sess:
            sess.run(tf.global_variables_initializer())
            metadata, losses = tf.RunMetadata(), []
            for f in feeds:
                options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
                losses.append(sess.run([train_op, loss], {ids: f}, options=options, run_metadata=metadata)[1])
            table = sess.run(tf.concat(list(embedding), 0))
    np.testing.assert_allclose(losses, local, rtol=1e-6)
    np.testing.assert_allclose(table, local_table, rtol=1e-6)
    sends = [n.name for n in metadata.cost_graph.node if "/_send_" in n.name]
    # The ids and the gathered rows, the gradient's values and indices, and the optimizer's gate on the gradients:
    # no learning rate, no shape constant, no "update done" signal back to the worker.
    assert not [s for s in sends if "learning_rate" in s or "/Shape/" in s or "ScatterSub/_send_ctrl" in s], sends
    assert len(sends) == 15, sends


def _ps_partition_reading_from_the_worker():
    """A ps partition ``y = Identity(_Recv(x))`` whose ``x`` comes from the worker, registered on a ps worker."""
    from dtf_notebook.distributed import wire
    from dtf_notebook.distributed.worker_service import WorkerService
    from dtf_notebook.placement.partition import partition, rendezvous_key
    from dtf_notebook.runtime.config import ConfigProto

    nodes = [
        {"name": "x", "op": "Placeholder", "input": [], "device": "", "attr": {"dtype": tf.float32, "shape": ()}},
        {"name": "y", "op": "Identity", "input": ["x"], "device": "", "attr": {"T": tf.float32}},
    ]
    ps_device = "/job:ps/replica:0/task:0/device:CPU:0"
    parts = partition(nodes, {"x": WK, "y": ps_device}, {"x": [("float32", ())], "y": [("float32", ())]})
    (recv,) = [n for n in parts["/job:ps/replica:0/task:0"] if n["op"] == "_Recv"]
    worker = WorkerService("ps", 0, ConfigProto(), peers=None)
    plain, tensors = wire.encode_graph_def({"node": parts["/job:ps/replica:0/task:0"]})
    handle = worker.handle("RegisterGraph", {"graph": plain, "session": "s"}, tensors)[0]["graph_handle"]
    return worker, handle, rendezvous_key(recv["attr"])


def test_a_run_graph_request_carries_the_tensors_its_master_pushed_to_the_partition():
    worker, handle, key = _ps_partition_reading_from_the_worker()
    request = {"graph_handle": handle, "step_id": 7, "feeds": [], "fetches": ["y:0"], "targets": [], "timeout": 5}
    _, out = worker.handle("RunGraph", {**request, "sent_keys": [key]}, [np.float32(2.5)])
    assert float(out[0]) == 2.5
    with pytest.raises(tf.errors.InvalidArgumentError, match="1 tensors for 0 feeds and 0 sent"):
        worker.handle("RunGraph", {**request, "step_id": 8}, [np.float32(1.0)])
    with pytest.raises(tf.errors.InvalidArgumentError, match="must list keys"):
        worker.handle("RunGraph", {**request, "step_id": 9, "sent_keys": "x"}, [])


def test_run_graph_names_are_resolved_once_per_signature_and_forgotten_with_their_graph():
    worker, handle, key = _ps_partition_reading_from_the_worker()
    request = {"graph_handle": handle, "feeds": [], "fetches": ["y:0"], "targets": [], "timeout": 5}
    for step_id in (11, 12):
        _, out = worker.handle("RunGraph", {**request, "step_id": step_id, "sent_keys": [key]}, [np.float32(step_id)])
        assert float(out[0]) == step_id
    assert list(worker._resolved) == [(handle, ("y:0",), (), ())]  # one entry for both runs
    with pytest.raises(tf.errors.InvalidArgumentError, match="RunGraph on /job:ps"):
        worker.handle("RunGraph", {**request, "step_id": 13, "fetches": ["nope:0"]}, [])
    with pytest.raises(tf.errors.InvalidArgumentError, match="RunGraph on /job:ps"):
        worker.handle("RunGraph", {**request, "step_id": 14, "fetches": [["y:0"]]}, [])  # unhashable: not cached
    assert len(worker._resolved) == 1
    worker.handle("DeregisterGraph", {"graph_handle": handle}, [])
    assert worker._resolved == {}


def test_send_tensor_delivers_in_one_pass_and_an_empty_one_touches_no_step():
    worker, _, key = _ps_partition_reading_from_the_worker()
    worker.handle("SendTensor", {"step_id": 21, "keys": []}, [])
    assert 21 not in worker.rendezvous._steps
    worker.handle("SendTensor", {"step_id": 22, "keys": [key, "other;0:0"]}, [np.array(1.5, np.float32), np.arange(3)])
    rendezvous = worker.rendezvous.get(22)
    value = rendezvous.recv(key, deadline=None)
    assert isinstance(value, torch.Tensor) and float(value) == 1.5
    assert rendezvous.recv("other;0:0", deadline=None).tolist() == [0, 1, 2]
    worker.handle("SendTensor", {"step_id": 22, "keys": ["twice;0:0"]}, [np.arange(2)])
    with pytest.raises(tf.errors.AlreadyExistsError, match="sent twice"):
        worker.handle("SendTensor", {"step_id": 22, "keys": ["twice;0:0"]}, [np.arange(2)])
    with pytest.raises(tf.errors.InvalidArgumentError, match="one tensor per key"):
        worker.handle("SendTensor", {"step_id": 22, "keys": ["a;0:0", "b;0:0"]}, [np.arange(2)])
