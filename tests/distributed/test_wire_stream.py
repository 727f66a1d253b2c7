"""Large messages as streams: splitting, in-place reassembly, hostile parts, and receive buffer reuse."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import zmq

from dtf_notebook import errors
from dtf_notebook.distributed import wire
from dtf_notebook.distributed.transport import Client, ServiceSocket
from dtf_notebook.distributed.wire_stream import StreamAssembler, StreamError, stream_messages
from dtf_notebook.runtime.buffer_pool import BufferPool


def encoded(tensors, chunk_bytes=16, **header):
    return wire.encode_message({"id": 9, **header}, tensors, chunk_bytes=chunk_bytes)


def test_small_messages_are_not_streamed():
    frames = encoded([np.zeros(3, np.float32)], chunk_bytes=1 << 20)
    assert stream_messages(frames, 1) == [frames]


def test_stream_round_trip_all_kinds_of_tensors():
    tensors = [
        np.arange(40, dtype=np.float32).reshape(4, 10),
        np.array([True, False] * 20),
        np.array([b"alpha", b"", b"gamma" * 9], dtype=object),
        np.zeros((0, 3), np.int64),
        np.arange(7, dtype=np.int8),
    ]
    messages = stream_messages(encoded(tensors, step=3), stream_id=77, min_bytes=0)
    assert len(messages) > 5
    assembler = StreamAssembler()
    results = [assembler.feed(b"peer", m) for m in messages]
    assert results[:-1] == [None] * (len(messages) - 1)
    header, out = results[-1]
    assert header == {"id": 9, "step": 3}
    for a, b in zip(tensors, out):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tolist() == b.tolist()
    assert len(assembler) == 0


def test_streams_of_different_peers_and_ids_interleave():
    a = stream_messages(encoded([np.full(20, 1.0)]), 1, min_bytes=0)
    b = stream_messages(encoded([np.full(20, 2.0)]), 1, min_bytes=0)
    c = stream_messages(encoded([np.full(20, 3.0)]), 2, min_bytes=0)
    assembler = StreamAssembler()
    done = {}
    for ma, mb, mc in zip(a, b, c):
        for key, m, tag in ((b"p1", ma, "a"), (b"p2", mb, "b"), (b"p1", mc, "c")):
            result = assembler.feed(key, m)
            if result is not None:
                done[tag] = result[1][0][0]
    assert done == {"a": 1.0, "b": 2.0, "c": 3.0}


def test_a_part_of_the_wrong_size_fails_its_request_and_drops_the_stream():
    messages = stream_messages(encoded([np.zeros(20)]), 5, min_bytes=0)
    assembler = StreamAssembler()
    assembler.feed(b"p", messages[0])
    bad = [messages[1][0], b"short"]
    with pytest.raises(StreamError, match="holds 5 bytes") as info:
        assembler.feed(b"p", bad)
    assert info.value.request_id == 9
    assert len(assembler) == 0
    assert assembler.feed(b"p", messages[2]) is None  # the rest of the dropped stream is ignored


@pytest.mark.parametrize(
    "frames, match",
    [
        ([b"\xc1H" + b"\0" * 12], "Malformed stream head"),
        ([b"\xc1X" + b"\0" * 8, b"x"], "Malformed stream message"),
        ([b"\xc1P" + b"\0" * 8], "Malformed stream message"),
    ],
)
def test_malformed_stream_messages_are_errors(frames, match):
    with pytest.raises(wire.WireError, match=match):
        StreamAssembler().feed(b"p", frames)


def test_a_head_whose_part_count_lies_is_refused():
    head = stream_messages(encoded([np.zeros(20)]), 5, min_bytes=0)[0]
    head = [head[0][:10] + (3).to_bytes(4, "little"), head[1]]
    with pytest.raises(StreamError, match="announces 3 parts"):
        StreamAssembler().feed(b"p", head)


def test_open_streams_are_bounded_in_count_and_bytes_and_a_newcomer_never_pushes_others_out():
    assembler = StreamAssembler(max_open=3, max_open_bytes=1000)
    for sid in range(3):
        assembler.feed(b"p", stream_messages(encoded([np.zeros(20)]), sid, min_bytes=0)[0])
    with pytest.raises(errors.ResourceExhaustedError, match="receiving 3 large requests"):
        assembler.feed(b"q", stream_messages(encoded([np.zeros(20)]), 3, min_bytes=0)[0])
    assert len(assembler) == 3  # the three arriving streams are still there
    first = stream_messages(encoded([np.zeros(20)], id=0), 0, min_bytes=0)
    assembler = StreamAssembler(max_open=3, max_open_bytes=1000)
    assembler.feed(b"p", first[0])
    big = stream_messages(encoded([np.zeros(110)]), 99, min_bytes=0)[0]  # 880 bytes: 160 + 880 > 1000
    with pytest.raises(errors.ResourceExhaustedError, match="160 bytes"):
        assembler.feed(b"q", big)
    assert [assembler.feed(b"p", part) for part in first[1:-1]] == [None] * (len(first) - 2)
    header, tensors = assembler.feed(b"p", first[-1])  # the first stream completes, undisturbed
    assert header["id"] == 0 and tensors[0].shape == (20,)
    with pytest.raises(StreamError, match="exceeds"):  # more than all of it: malformed
        assembler.feed(b"p", stream_messages(encoded([np.zeros(200)]), 100, min_bytes=0)[0])


def test_a_stream_reusing_an_open_streams_id_drops_the_old_one_with_its_bytes():
    dropped = []
    assembler = StreamAssembler(on_drop=lambda peer, e: dropped.append((peer, e.request_id, e.reserved, e.message)))
    for request in (1, 2):
        assembler.feed(b"p", stream_messages(encoded([np.zeros(20)], id=request), 7, min_bytes=0)[0])
    assert dropped == [(b"p", 1, 160, "Stream 7 from its sender was replaced by a new stream of the same id")]
    assert len(assembler) == 1


def test_a_stream_whose_values_do_not_decode_is_refused_with_its_bytes():
    parts = stream_messages(encoded([np.ones(8, dtype=bool)] * 2, id=5), 1, min_bytes=0)
    corrupt = [parts[0], *parts[1:-1], [parts[-1][0], b"\x02" * len(parts[-1][1])]]
    assembler = StreamAssembler()
    for message in corrupt[:-1]:
        assert assembler.feed(b"p", message) is None
    with pytest.raises(StreamError) as refused:
        assembler.feed(b"p", corrupt[-1])
    assert refused.value.request_id == 5 and refused.value.reserved == 16 and len(assembler) == 0


def test_stale_streams_expire():
    assembler = StreamAssembler(stale_after=0.0)
    first = stream_messages(encoded([np.zeros(20)]), 1, min_bytes=0)
    assembler.feed(b"p", first[0])
    assembler.feed(b"p", stream_messages(encoded([np.zeros(20)]), 2, min_bytes=0)[0])
    assert len(assembler) == 1
    assert assembler.feed(b"p", first[1]) is None


def test_buffer_pool_reuses_only_buffers_nobody_holds():
    pool = BufferPool(max_bytes=64 << 20, min_bytes=1 << 20)
    a = pool.take(8 << 20)
    tensor = torch.from_numpy(a.view(np.float32))
    address = a.ctypes.data
    del a
    assert pool.take(8 << 20).ctypes.data != address  # the torch tensor still uses it
    view = tensor[10:]
    del tensor
    assert pool.take(8 << 20).ctypes.data != address  # a view of the tensor still does
    del view
    assert pool.take(8 << 20).ctypes.data == address
    assert pool.take(100).nbytes == 100 and pool.nbytes <= 64 << 20


def test_buffer_pool_stays_within_its_budget():
    pool = BufferPool(max_bytes=10 << 20, min_bytes=0)
    held = [pool.take(4 << 20), pool.take(4 << 20), pool.take(4 << 20)]
    assert pool.nbytes == 8 << 20  # the third is a plain allocation
    assert all(h.nbytes == 4 << 20 for h in held)


@pytest.fixture
def echo_server():
    server = ServiceSocket("127.0.0.1:0", lambda method, header, tensors: ({"n": len(tensors)}, list(tensors)))
    client = Client()
    yield server, client
    client.close()
    server.close()


def test_large_tensors_stream_both_ways_sync_and_async(echo_server):
    server, client = echo_server
    big = np.random.default_rng(0).standard_normal(3 << 20).astype(np.float32)  # 12 MiB: streamed
    small = np.arange(5, dtype=np.int64)
    reply, tensors = client.call(server.address, "Echo", {}, [big, small], timeout=30)
    assert reply["n"] == 2 and np.array_equal(tensors[0], big) and np.array_equal(tensors[1], small)
    reply, tensors = client.call_async(server.address, "Echo", {}, [small, big]).result(30)
    assert np.array_equal(tensors[1], big) and np.array_equal(tensors[0], small)


def test_a_server_answers_a_broken_stream_with_an_error_and_keeps_serving(echo_server):
    server, client = echo_server
    messages = stream_messages(
        wire.encode_message({"id": 41, "method": "Echo"}, [np.zeros(1 << 20)], chunk_bytes=1 << 20), 1, min_bytes=0
    )
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.connect(f"tcp://{server.address}")
    try:
        sock.send_multipart(messages[0])
        sock.send_multipart([messages[1][0], b"tiny"])
        assert sock.poll(10_000)
        header, _ = wire.decode_message(sock.recv_multipart())
        assert header["id"] == 41
        assert isinstance(wire.decode_error(header["error"]), errors.InvalidArgumentError)
    finally:
        sock.close(0)
    assert client.call(server.address, "Echo", {}, [np.ones(3)], timeout=10)[0]["n"] == 1
