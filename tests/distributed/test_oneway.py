"""Requests without replies (``Client.send_oneway``): how a task pushes a ``_Send``'s tensor to its peer. The
sender returns once the request is queued; the receiver answers nothing, and a request that fails there is
handed to ``oneway_failed`` -- a worker then aborts the step the tensor was for, so its ``_Recv`` fails at once."""

from __future__ import annotations

import queue
import time

import numpy as np
import pytest
import zmq

from dtf_notebook import errors
from dtf_notebook.distributed import wire
from dtf_notebook.distributed.transport import Client, ServiceSocket
from dtf_notebook.distributed.wire_stream import stream_messages
from dtf_notebook.distributed.worker_service import WorkerService
from dtf_notebook.runtime.config import ConfigProto


@pytest.fixture
def recording_server():
    """A server whose handler records requests (and fails those named "Fail") and whose oneway failures are
    queued; plus a raw DEALER on it, to see whether anything is ever sent back."""
    handled: queue.Queue = queue.Queue()
    failures: queue.Queue = queue.Queue()

    def handler(method, header, tensors):
        if method == "Fail":
            raise errors.InvalidArgumentError(None, None, "this request is refused")
        handled.put((method, header, [np.asarray(t) for t in tensors]))
        return {"ok": True}, []

    server = ServiceSocket("127.0.0.1:0", handler, oneway_failed=lambda m, h, e: failures.put((m, h, e)))
    raw = zmq.Context.instance().socket(zmq.DEALER)
    raw.connect(f"tcp://{server.address}")
    client = Client()
    yield server, client, raw, handled, failures
    client.close()
    raw.close(0)
    server.close()


def test_a_oneway_request_is_handled_and_never_answered(recording_server):
    server, client, raw, handled, failures = recording_server
    big = np.arange(3 << 20, dtype=np.float32)  # 12 MiB: streamed in parts
    client.send_oneway(server.address, "Note", {"n": 1}, [big])
    method, header, tensors = handled.get(timeout=10)
    assert (method, header["n"], header["oneway"]) == ("Note", 1, True)
    assert np.array_equal(tensors[0], big)
    # The same request from a raw socket: handled, and nothing comes back.
    raw.send_multipart(wire.encode_message({"id": 5, "method": "Note", "n": 2, "oneway": True}))
    assert handled.get(timeout=10)[1]["n"] == 2
    assert not raw.poll(300)
    assert failures.empty()


def test_a_failing_oneway_request_is_reported_to_the_server_not_the_sender(recording_server):
    server, client, raw, handled, failures = recording_server
    raw.send_multipart(wire.encode_message({"id": 6, "method": "Fail", "step_id": 3, "oneway": True}))
    method, header, error = failures.get(timeout=10)
    assert (method, header["step_id"]) == ("Fail", 3)
    assert isinstance(error, errors.InvalidArgumentError) and error.message == "this request is refused"
    assert not raw.poll(300)


def test_a_broken_oneway_message_is_reported_with_its_header(recording_server):
    server, client, raw, handled, failures = recording_server
    # A stream whose second part is too short: the stream's head named the request.
    messages = stream_messages(
        wire.encode_message({"id": 7, "method": "SendTensor", "step_id": 4, "oneway": True}, [np.zeros(1 << 20)]),
        1,
        min_bytes=0,
    )
    raw.send_multipart(messages[0])
    raw.send_multipart([messages[1][0], b"tiny"])
    method, header, error = failures.get(timeout=10)
    assert (method, header["step_id"]) == ("SendTensor", 4) and "announced" in error.message
    # A plain message whose tensor frame does not match its meta: its header is still read.
    frames = wire.encode_message({"id": 8, "method": "SendTensor", "step_id": 5, "oneway": True}, [np.zeros(4)])
    raw.send_multipart([frames[0], b"not 32 bytes"])
    method, header, error = failures.get(timeout=10)
    assert (method, header["step_id"]) == ("SendTensor", 5) and isinstance(error, errors.InvalidArgumentError)
    assert not raw.poll(300)
    # The server still serves.
    assert client.call(server.address, "Note", {"n": 3}, timeout=10)[0]["ok"] is True


def test_a_lost_send_tensor_aborts_its_step_on_the_receiving_worker():
    worker = WorkerService("worker", 0, ConfigProto(), peers=None)
    server = ServiceSocket("127.0.0.1:0", worker.handle, oneway_failed=worker.oneway_failed)
    client = Client()
    try:
        # Two tensors where SendTensor carries one: the worker refuses it, and the step's receiver learns why.
        client.send_oneway(server.address, "SendTensor", {"step_id": 11, "key": "w:0"}, [np.ones(2), np.ones(2)])
        started = time.monotonic()
        with pytest.raises(errors.InvalidArgumentError, match=r"The tensor w:0 sent to .*task:0 was lost: SendTensor"):
            worker.rendezvous.get(11).recv("w:0", deadline=started + 30)
        assert time.monotonic() - started < 10
        # A good one is delivered as before.
        client.send_oneway(server.address, "SendTensor", {"step_id": 12, "key": "b:0"}, [np.arange(3.0)])
        assert worker.rendezvous.get(12).recv("b:0", deadline=time.monotonic() + 30).tolist() == [0.0, 1.0, 2.0]
    finally:
        client.close()
        server.close()


def test_oneway_to_nobody_fails_after_dead_after():
    client = Client(dead_after=0.5)
    try:
        with pytest.raises(errors.UnavailableError, match="127.0.0.1:1"):
            client.send_oneway("127.0.0.1:1", "SendTensor", {"step_id": 1, "key": "k"}, [np.ones(1)])
    finally:
        client.close()


def test_a_stream_whose_sender_goes_quiet_is_failed_not_forgotten():
    """A streamed request that stops arriving is dropped after ``stale_stream_secs`` and answered with an error
    (a one-way one is reported to ``oneway_failed``), even when no other stream comes to trigger the check."""
    failures: queue.Queue = queue.Queue()
    server = ServiceSocket(
        "127.0.0.1:0", lambda m, h, t: ({}, []), oneway_failed=lambda m, h, e: failures.put(h), stale_stream_secs=0.2
    )
    raw = zmq.Context.instance().socket(zmq.DEALER)
    raw.connect(f"tcp://{server.address}")
    try:
        for request in ({"id": 21, "method": "Echo"}, {"id": 22, "method": "SendTensor", "step_id": 9, "oneway": True}):
            head = stream_messages(wire.encode_message(request, [np.zeros(1 << 20)]), request["id"], min_bytes=0)[0]
            raw.send_multipart(head)  # and never the parts
        assert raw.poll(10_000)
        header, _ = wire.decode_message(raw.recv_multipart())
        assert header["id"] == 21 and "stayed incomplete" in wire.decode_error(header["error"]).message
        assert failures.get(timeout=10)["step_id"] == 9
    finally:
        raw.close(0)
        server.close()
