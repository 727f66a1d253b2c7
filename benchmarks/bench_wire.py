"""Wire-format micro-benchmark: raw pyzmq throughput between two processes, and our codec's cost.

It measures, for one ``--mib``-MiB payload (default 64):

(a) ``raw``: pyzmq alone between two processes over ``tcp://127.0.0.1`` (PAIR sockets, the receiver is
    a ``multiprocessing`` spawn child): the payload as one frame, as ``--mib`` x 1 MiB frames of one
    multipart message, and as ``--mib`` separate 1 MiB messages, each with ``copy=True`` and
    ``copy=False`` on both ends;
(b) ``codec``: the full path ``encode_message -> send_multipart(copy=False) -> recv_multipart(copy=False)
    -> decode_message`` of one float32 tensor for several ``chunk_bytes`` values (this picks ``CHUNK_BYTES``);
(c) ``cost``: in one process, encode and decode alone: a float32 tensor (one writable frame = zero copy,
    read-only 1 MiB frames = one gather copy), a string tensor, and the graph def of an MLP + Adam graph.

A round is timed from the first send until the receiver acknowledges that it has received (and, for (b),
decoded) everything. Rounds of all (a) and (b) configurations are interleaved, ``--repeats`` times after one
warm-up pass; the table shows the median and the best round. (c) shows the best of ``--repeats``.

Usage::

    python benchmarks/bench_wire.py                  # 64 MiB, 9 repeats
    python benchmarks/bench_wire.py --mib 256 --repeats 9

The results and the choice of ``CHUNK_BYTES`` are recorded in ``dtf_notebook/distributed/wire.py``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import msgpack
import numpy as np
import zmq

# Allow `python benchmarks/bench_wire.py` from a checkout that is not pip-installed.
_REPO_ROOT = Path(__file__).resolve().parent.parent
if str(_REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(_REPO_ROOT))

from dtf_notebook.distributed import wire  # noqa: E402

MIB = 1 << 20


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=64, help="payload size in MiB (default 64)")
    parser.add_argument("--repeats", type=int, default=9, help="timed rounds per figure (default 9)")
    return parser.parse_args(argv)


# ---- the receiving process ---------------------------------------------------------------------
def _receiver(port: int) -> None:
    """Receives rounds announced by a setup message and acknowledges each when it is complete."""
    ctx = zmq.Context()
    sock = ctx.socket(zmq.PAIR)
    sock.connect(f"tcp://127.0.0.1:{port}")
    while True:
        setup = msgpack.unpackb(sock.recv())
        if setup["messages"] == 0:
            break
        sock.send(b"ready")
        for _ in range(setup["messages"]):
            frames = sock.recv_multipart(copy=setup["copy"])
            if setup["decode"]:
                wire.decode_message([f.buffer for f in frames])
        sock.send(b"done")
    sock.close(0)
    ctx.term()


class _Link:
    """The sending end: times rounds of messages to the receiver process."""

    def __init__(self) -> None:
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.PAIR)
        port = self.sock.bind_to_random_port("tcp://127.0.0.1")
        self.proc = multiprocessing.get_context("spawn").Process(target=_receiver, args=(port,), daemon=True)
        self.proc.start()

    def round(self, make_messages: Callable[[], list[list]], copy: bool, decode: bool) -> float:
        messages = make_messages()
        self.sock.send(msgpack.packb({"messages": len(messages), "copy": copy, "decode": decode}))
        self.sock.recv()
        start = time.perf_counter()
        for frames in messages:
            self.sock.send_multipart(frames, copy=copy)
        self.sock.recv()
        return time.perf_counter() - start

    def close(self) -> None:
        self.sock.send(msgpack.packb({"messages": 0, "copy": False, "decode": False}))
        self.proc.join(timeout=10)
        self.sock.close(0)
        self.ctx.term()


def _gbps(nbytes: int, seconds: float) -> str:
    return f"{nbytes / seconds / 1e9:5.2f}"


def bench_transfers(link: _Link, payload: np.ndarray, repeats: int) -> None:
    """Times (a) and (b); repeats are interleaved across configurations so machine noise hits all alike."""
    view = memoryview(payload.view(np.uint8))
    pieces = [view[i : i + MIB] for i in range(0, len(view), MIB)]
    configs: list[tuple[str, Callable[[], list[list]], bool, bool]] = []
    for copy in (True, False):
        configs += [
            (f"(a) one frame, copy={copy}", lambda: [[view]], copy, False),
            (f"(a) {len(pieces)} x 1 MiB frames in one message, copy={copy}", lambda: [pieces], copy, False),
            (f"(a) {len(pieces)} separate 1 MiB messages, copy={copy}", lambda: [[p] for p in pieces], copy, False),
        ]
    for chunk in (64 << 10, 256 << 10, MIB, 4 * MIB, 16 * MIB, payload.nbytes):
        frames = -(-payload.nbytes // chunk)
        make = lambda chunk=chunk: [wire.encode_message({"step": 1}, [payload], chunk_bytes=chunk)]
        configs.append((f"(b) chunk_bytes {chunk // 1024} KiB ({frames} frames)", make, False, True))
    times: list[list[float]] = [[] for _ in configs]
    for _ in range(repeats + 1):  # the first pass warms connections and allocators up and is dropped
        for i, (_, make, copy, decode) in enumerate(configs):
            times[i].append(link.round(make, copy, decode))
    print(f"\n{'transfer of ' + str(payload.nbytes // MIB) + ' MiB':<58} median GB/s   best GB/s")
    for (label, *_), t in zip(configs, times):
        print(
            f"  {label:<56} {_gbps(payload.nbytes, statistics.median(t[1:]))}       {_gbps(payload.nbytes, min(t[1:]))}"
        )


def _best_of(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _mlp_graph_def() -> dict:
    import dtf_notebook.compat.v1 as tf

    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 784], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")
        with tf.variable_scope("hidden"):
            h = tf.nn.relu(_dense(tf, x, 784, 100))
        with tf.variable_scope("logits"):
            logits = _dense(tf, h, 100, 10)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        tf.train.AdamOptimizer(0.01).minimize(loss)
    return g.as_graph_def_dict()


def _dense(tf, x, n_in: int, n_out: int):
    w = tf.Variable(np.full((n_in, n_out), 0.01, np.float32), name="w")
    b = tf.Variable(np.zeros(n_out, np.float32), name="b")
    return tf.matmul(x, w) + b


def bench_cost(payload: np.ndarray, repeats: int) -> None:
    mb = payload.nbytes / 1e6
    print(f"\n(c) codec cost in one process ({payload.nbytes // MIB} MiB float32)")
    encode = _best_of(lambda: wire.encode_message({}, [payload]), repeats)
    print(f"  encode_message                      {encode * 1e6:9.1f} us total ({encode * 1e6 / mb:.3f} us/MB)")
    one_frame = [bytearray(f) for f in wire.encode_message({}, [payload], chunk_bytes=payload.nbytes)]
    zero = _best_of(lambda: wire.decode_message(one_frame), repeats)
    print(f"  decode, one writable frame          {zero * 1e6:9.1f} us total (zero copy)")
    chunked = [bytes(f) for f in wire.encode_message({}, [payload])]
    gather = _best_of(lambda: wire.decode_message(chunked), repeats)
    print(f"  decode, read-only 1 MiB frames      {gather * 1e3:9.2f} ms total ({_gbps(payload.nbytes, gather)} GB/s)")

    strings = np.array([b"x" * (i % 200) for i in range(100_000)], dtype=object)
    string_frames = wire.encode_message({}, [strings])
    string_mb = sum(len(f) for f in string_frames[1:]) / 1e6
    enc = _best_of(lambda: wire.encode_message({}, [strings]), repeats)
    dec = _best_of(lambda: wire.decode_message(string_frames), repeats)
    print(f"  string tensor, 100k elements        encode {enc / string_mb * 1e3:.2f} ms/MB")
    print(f"                                      decode {dec / string_mb * 1e3:.2f} ms/MB")

    graph_def = _mlp_graph_def()
    n = len(graph_def["node"])

    def graph_round_trip() -> None:
        plain, tensors = wire.encode_graph_def(graph_def)
        header, arrays = wire.decode_message(wire.encode_message({"graph": plain}, tensors))
        wire.decode_graph_def(header["graph"], arrays)

    gt = _best_of(graph_round_trip, repeats)
    print(f"  graph def round trip ({n} nodes)     {gt * 1e3:.2f} ms ({gt / n * 1e6:.1f} us/node)")


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    print(f"bench_wire: {platform.python_version()}, pyzmq {zmq.__version__}, libzmq {zmq.zmq_version()}, ", end="")
    print(f"{multiprocessing.cpu_count()} cpus, payload {args.mib} MiB, median of {args.repeats}")
    payload = np.random.default_rng(0).random(args.mib * MIB // 4, dtype=np.float32)
    link = _Link()
    try:
        bench_transfers(link, payload, args.repeats)
    finally:
        link.close()
    bench_cost(payload, args.repeats)


if __name__ == "__main__":
    main()
