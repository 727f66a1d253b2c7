"""Per-peer caps in one process: the ledger's arithmetic, and a ServiceSocket refusing what goes over them."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from dtf_notebook import errors
from dtf_notebook.distributed import wire
from dtf_notebook.distributed.client import Client
from dtf_notebook.distributed.peer_limits import PeerLedger, PeerLimits, current_peer
from dtf_notebook.distributed.service_socket import ServiceSocket
from dtf_notebook.distributed.wire_stream import StreamAssembler, StreamError, stream_messages


def test_limits_must_be_positive_ints():
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="max_sessions must be an int >= 1"):
            PeerLimits(max_sessions=bad)


def test_the_ledger_counts_each_peer_apart_and_forgets_peers_holding_nothing():
    ledger = PeerLedger(PeerLimits(max_requests=2, max_streams=1, max_inflight_bytes=100))
    ledger.admit_request(b"a", 10)
    ledger.admit_request(b"a", 10)
    with pytest.raises(errors.ResourceExhaustedError, match="2 requests in flight"):
        ledger.admit_request(b"a", 10)
    ledger.admit_request(b"b", 90)  # another peer has its own allowance
    ledger.admit_stream(b"b", 10)
    with pytest.raises(errors.ResourceExhaustedError, match="large requests at once"):
        ledger.admit_stream(b"b", 1)
    ledger.stream_complete(b"b")  # now a request of 10 bytes
    assert ledger.usage(b"b") == {"sessions": 0, "bytes": 100, "requests": 2, "streams": 0}
    ledger.release_request(b"b", 90)
    ledger.release_request(b"b", 10)
    ledger.admit_stream(b"c", 50)
    ledger.stream_dropped(b"c", 50)
    assert ledger.peers() == 1  # only "a" still holds something
    ledger.open_session(None)  # calls from this process are not counted
    assert ledger.peers() == 1


def test_a_stream_over_its_peers_cap_is_refused_before_its_buffers_are_reserved():
    refused = []

    def admit(key, nbytes):
        refused.append((key, nbytes))
        raise errors.ResourceExhaustedError(None, None, "over the cap")

    assembler = StreamAssembler(admit=admit)
    messages = stream_messages(wire.encode_message({"id": 1}, [np.zeros(8, np.float32)] * 2), 7, min_bytes=0)
    with pytest.raises(errors.ResourceExhaustedError):
        assembler.feed("peer", messages[0])
    assert refused == [("peer", 64)] and len(assembler) == 0
    assert all(assembler.feed("peer", m) is None for m in messages[1:])  # its parts are dropped quietly


def test_a_dropped_stream_reports_the_bytes_it_was_admitted_with():
    dropped = []
    assembler = StreamAssembler(stale_after=0.0, on_drop=lambda peer, e: dropped.append(e.reserved))
    head = stream_messages(wire.encode_message({"id": 4}, [np.zeros(2, np.float32)] * 2), 1, min_bytes=0)[0]
    assembler.feed("peer", head)
    assembler.expire()
    assert dropped == [16]
    assert isinstance(StreamError("x", None, 5), wire.WireError)


@pytest.fixture
def blocking_server():
    """A socket whose "Hold" requests wait until released, with small caps; and a key-less client."""
    release = threading.Event()
    peers = []

    def handler(method, header, tensors):
        peers.append(current_peer.get())
        if method == "Hold":
            release.wait(30)
        return {"n": sum(int(np.asarray(t).nbytes) for t in tensors)}, []

    ledger = PeerLedger(PeerLimits(max_inflight_bytes=(3 << 20) + (1 << 19), max_requests=8))  # three 1 MiB requests
    server = ServiceSocket("127.0.0.1:0", handler, ledger=ledger)
    yield server, release, peers
    release.set()
    server.close()


def test_a_peer_over_its_byte_cap_gets_resource_exhausted_and_another_peer_does_not(blocking_server):
    server, release, peers = blocking_server
    greedy, other = Client(), Client()
    try:
        mib = np.zeros(1 << 18, np.float32)  # 1 MiB
        # One connection (the client's I/O thread) sends four 1 MiB requests at once; each waits in the handler.
        held = [greedy.call_async(server.address, "Hold", {}, [mib]) for _ in range(4)]
        outcomes = []
        for future in held[3:]:
            with pytest.raises(errors.ResourceExhaustedError, match="bytes of requests in flight"):
                future.result(30)
            outcomes.append("refused")
        # Another peer is served meanwhile, and so is the greedy peer's next small request once it has room.
        assert other.call(server.address, "Echo", {}, [mib], timeout=10)[0]["n"] == 1 << 20
        release.set()
        assert [f.result(30)[0]["n"] for f in held[:3]] == [1 << 20] * 3
        assert greedy.call_async(server.address, "Echo", {}, [mib]).result(30)[0]["n"] == 1 << 20
        assert server.ledger.peers() == 0  # everything answered: nothing is counted any more
        assert all(isinstance(p, bytes) for p in peers)
    finally:
        greedy.close()
        other.close()


def test_nothing_stays_counted_after_a_streamed_ping_a_reused_stream_id_or_a_corrupt_stream():
    import time

    import zmq

    server = ServiceSocket("127.0.0.1:0", lambda m, h, t: ({}, []))
    raw = zmq.Context.instance().socket(zmq.DEALER)
    raw.setsockopt(zmq.LINGER, 0)
    raw.connect(f"tcp://{server.address}")
    try:
        ping = stream_messages(wire.encode_message({"id": 1, "method": "Ping"}, [np.zeros(8)] * 2), 1, min_bytes=0)
        reused = stream_messages(wire.encode_message({"id": 2, "method": "Echo"}, [np.zeros(8)] * 2), 2, min_bytes=0)
        corrupt = stream_messages(
            wire.encode_message({"id": 3, "method": "Echo"}, [np.ones(8, dtype=bool)] * 2), 3, min_bytes=0
        )
        corrupt[-1] = [corrupt[-1][0], b"\x02" * len(corrupt[-1][1])]
        for message in [*ping, reused[0], *reused, *corrupt]:  # the head of stream 2 twice
            raw.send_multipart(message)
        replies = []
        while raw.poll(2000):
            replies.append(wire.decode_message(raw.recv_multipart())[0])
        # The ping's answer, the replaced stream's error and the second one's answer, the corrupt stream's error.
        assert sorted((r["id"], "error" in r) for r in replies) == [(1, False), (2, False), (2, True), (3, True)]
        deadline = time.monotonic() + 5
        while server.ledger.peers() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert server.ledger.peers() == 0
    finally:
        raw.close(0)
        server.close()
