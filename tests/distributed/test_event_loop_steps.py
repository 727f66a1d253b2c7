"""A training step served on a task's event loop (issue 13): the loop's own requests to other tasks
(``LoopPeers``), requests answered later through a ``Reply``, and the NoOps bypassed before partitioning."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
import zmq

from dtf_notebook import errors
from dtf_notebook.distributed.control_edges import bypass_noops
from dtf_notebook.distributed.loop_peers import LoopPeers
from dtf_notebook.distributed.service_socket import ServiceSocket
from tests.distributed.cluster_util import pump_loop_peers

PS0, PS1, WK = (f"/job:{j}/replica:0/task:{t}/device:CPU:0" for j, t in (("ps", 0), ("ps", 1), ("worker", 0)))


def _node(name, op="AssignAdd", inputs=()):
    return {"name": name, "op": op, "input": list(inputs)}


def _inputs(nodes):
    return {n["name"]: n["input"] for n in nodes}


def test_an_optimizers_update_noop_between_ps_tasks_is_bypassed():
    # minimize(global_step=...): update (NoOp on the worker) groups both ps updates; the step's increment waits on it.
    nodes = [_node("a"), _node("b"), _node("update", "NoOp", ["^a", "^b"]), _node("step", inputs=["^update"])]
    placement = {"a": PS0, "b": PS1, "update": WK, "step": PS0}
    out = bypass_noops(nodes, placement, keep={"step"})
    assert _inputs(out) == {"a": [], "b": [], "step": ["^a", "^b"]}
    assert _inputs(nodes)["step"] == ["^update"]  # the caller's list is not changed


def test_a_fetched_or_data_used_or_local_only_noop_is_kept():
    nodes = [_node("a"), _node("b"), _node("update", "NoOp", ["^a", "^b"]), _node("step", inputs=["^update"])]
    placement = {"a": PS0, "b": PS1, "update": WK, "step": PS0}
    assert [n["name"] for n in bypass_noops(nodes, placement, keep={"update", "step"})] == [
        "a",
        "b",
        "update",
        "step",
    ]
    # A NoOp whose bypass would add edges between tasks (two sources, consumers on three workers) stays: 4 edges
    # (2 in, 2 out) against 6 (each source to each worker).
    fan = [_node("a"), _node("b"), _node("g", "NoOp", ["^a", "^b"])]
    fan += [_node(f"c{i}", inputs=["^g"]) for i in range(3)]
    workers = [f"/job:worker/replica:0/task:{i}/device:CPU:0" for i in range(3)]
    spread = {"a": PS0, "b": PS1, "g": WK, **{f"c{i}": w for i, w in enumerate(workers)}}
    assert _inputs(bypass_noops(fan, spread, keep=set()))["c1"] == ["^g"]


def test_a_step_with_control_flow_is_left_as_it_is():
    nodes = [_node("a"), _node("update", "NoOp", ["^a"]), _node("m", "Merge", ["^update"])]
    placement = {"a": PS0, "update": WK, "m": PS0}
    assert bypass_noops(nodes, placement, keep=set()) is nodes


def _pump(peers: LoopPeers, poller, until, timeout=10.0):
    assert pump_loop_peers(peers, poller, until, timeout)


def test_loop_peers_carry_tensors_and_errors_to_the_callback():
    def handler(method, header, tensors):
        if method == "Fail":
            raise errors.NotFoundError(None, None, "no such thing")
        return {"n": len(tensors)}, [t * 2 for t in tensors]

    server = ServiceSocket("127.0.0.1:0", handler)
    peers, poller, got = LoopPeers(), zmq.Poller(), []
    try:
        big = np.arange(1 << 20, dtype=np.float32)
        peers.request(server.address, "Echo", {}, [big], lambda h, t, e: got.append((h, t, e)), poller)
        peers.request(server.address, "Fail", {}, [], lambda h, t, e: got.append((h, t, e)), poller)
        _pump(peers, poller, lambda: len(got) == 2)
        (header, tensors, error), (_, _, failure) = sorted(got, key=lambda g: g[2] is not None)
        assert error is None and header["n"] == 1
        np.testing.assert_array_equal(tensors[0], big * 2)
        assert isinstance(failure, errors.NotFoundError) and "no such thing" in failure.message
        assert peers.outstanding == 0
    finally:
        peers.close()
        server.close()


def test_loop_peers_fail_requests_to_a_silent_task_with_unavailable():
    peers, poller, got = LoopPeers(heartbeat_interval=0.05, dead_after=0.3), zmq.Poller(), []
    router = zmq.Context.instance().socket(zmq.ROUTER)  # takes requests and never answers
    port = router.bind_to_random_port("tcp://127.0.0.1")
    try:
        peers.request(f"127.0.0.1:{port}", "Hang", {}, [], lambda h, t, e: got.append(e), poller)
        _pump(peers, poller, lambda: bool(got))
        assert isinstance(got[0], errors.UnavailableError)
        assert peers.outstanding == 0
    finally:
        peers.close()
        router.close(0)


def test_a_loop_held_up_does_not_blame_a_peer_for_the_time_it_was_not_listening():
    peers, poller = LoopPeers(heartbeat_interval=0.05, dead_after=0.3), zmq.Poller()
    router = zmq.Context.instance().socket(zmq.ROUTER)
    port = router.bind_to_random_port("tcp://127.0.0.1")
    try:
        peers.request(f"127.0.0.1:{port}", "Hang", {}, [], lambda h, t, e: None, poller)
        polled = time.monotonic()
        peers.heartbeat(polled + 10.0, polled)  # held up for 10 s after its last poll: no silence seen yet
        assert peers.outstanding == 1
        peers.heartbeat(polled + 10.0, polled + 10.0)  # then it polled, and nothing had come
        assert peers.outstanding == 0
    finally:
        peers.close()
        router.close(0)


def test_loop_peers_report_a_oneway_message_nobody_takes():
    lost = []
    peers = LoopPeers(dead_after=0.3, undeliverable=lambda method, header, error: lost.append((method, error)))
    poller = zmq.Poller()
    try:
        from dtf_notebook.distributed.local_process import free_port

        peers.send_oneway(f"127.0.0.1:{free_port()}", "SendTensor", {"step_id": 1}, [np.ones(3)], poller)
        _pump(peers, poller, lambda: bool(lost))
        assert lost[0][0] == "SendTensor" and isinstance(lost[0][1], errors.UnavailableError)
    finally:
        peers.close()


@pytest.mark.parametrize("answer", ["ok", "fail"])
def test_a_request_taken_by_the_start_hook_is_answered_later_from_another_thread(answer):
    from dtf_notebook.distributed.client import Client

    def start(method, header, tensors, reply):
        if method != "Later":
            return False
        if answer == "ok":
            threading.Timer(0.02, reply.ok, [{"x": header["x"]}, [np.full(2, header["x"])]]).start()
        else:
            threading.Timer(0.02, reply.fail, [errors.AbortedError(None, None, "gave up")]).start()
        return True

    server = ServiceSocket("127.0.0.1:0", lambda m, h, t: ({"threaded": True}, []), start=start)
    client = Client()
    try:
        assert client.call(server.address, "Other", {}, timeout=5)[0]["threaded"] is True
        if answer == "ok":
            header, tensors = client.call(server.address, "Later", {"x": 3}, timeout=5)
            assert header["x"] == 3 and tensors[0].tolist() == [3, 3]
        else:
            with pytest.raises(errors.AbortedError, match="gave up"):
                client.call(server.address, "Later", {"x": 3}, timeout=5)
    finally:
        client.close()
        server.close()
