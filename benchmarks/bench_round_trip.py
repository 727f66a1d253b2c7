"""The transport's floor: one request/reply round trip between two processes, ZeroMQ against a plain TCP socket.

Every message of a distributed step pays at least this. The table gives, for a 512-byte and a 313,600-byte request
(the seeds' MLP's first weight matrix) answered by 2 bytes, the median round trip and the CPU time the requesting
process spent per round trip (all its threads: for ZeroMQ that includes its I/O thread), measured

* ``spread``: both processes free to run on any core (what a cluster's tasks do);
* ``one core``: both pinned to the same core (``os.sched_setaffinity``; Linux only);
* ``two cores``: each pinned to a core of its own.

ZeroMQ hands every message from the calling thread to its I/O thread and, on the other side, back from the I/O
thread to the receiving thread: two more thread wake-ups per one-way message than a plain socket, and on a VM a
wake-up of a thread on another core is the expensive part. The plain TCP socket is the same exchange with
``socket.sendall``/``recv`` and ``TCP_NODELAY``.

Usage::

    python benchmarks/bench_round_trip.py [--rounds 2000] [--repeats 3]

Example:
    >>> median_and_cpu([(1.0, 0.5), (3.0, 1.5), (2.0, 1.0)])
    (2.0, 1.0)
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import socket
import statistics
import time

import zmq

SIZES = (512, 313_600)


def median_and_cpu(samples: list[tuple[float, float]]) -> tuple[float, float]:
    """Median round trip and median CPU time of ``(round trip, cpu)`` samples."""
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


def _pin(core: int | None) -> None:
    if core is not None:
        os.sched_setaffinity(0, {core})


def _zmq_peer(port: int, core: int | None) -> None:
    _pin(core)
    sock = zmq.Context().socket(zmq.ROUTER)
    sock.bind(f"tcp://127.0.0.1:{port}")
    while True:
        frames = sock.recv_multipart(copy=False)
        sock.send_multipart([frames[0], b"ok"])


def _tcp_peer(port: int, core: int | None, ready: multiprocessing.synchronize.Event) -> None:
    _pin(core)
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen()
    ready.set()
    conn, _ = listener.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        while True:
            size = int.from_bytes(_read_exactly(conn, 8), "little")
            _read_exactly(conn, size)
            conn.sendall(b"ok")
    except ConnectionError:
        return  # the requesting side closed: the sample is over


def _read_exactly(conn: socket.socket, n: int) -> bytes:
    parts, left = [], n
    while left:
        chunk = conn.recv(min(left, 1 << 20))
        if not chunk:
            raise ConnectionError("peer closed")
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _time(exchange, rounds: int) -> tuple[float, float]:
    for _ in range(rounds // 10):
        exchange()
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(rounds):
        exchange()
    return (time.perf_counter() - wall) / rounds * 1e6, (time.process_time() - cpu) / rounds * 1e6


def measure(transport: str, size: int, cores: tuple[int | None, int | None], rounds: int) -> tuple[float, float]:
    """(round trip µs, requesting process's CPU µs per round trip) of one configuration, in fresh processes."""
    from dtf_notebook.distributed.local_process import free_port

    ctx = multiprocessing.get_context("spawn")
    port = free_port()
    payload = b"x" * size
    mine, theirs = cores
    # Affinity is per thread, and new threads inherit it: pin before ZeroMQ starts its I/O thread.
    before = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    _pin(mine)
    if transport == "zmq":
        peer = ctx.Process(target=_zmq_peer, args=(port, theirs), daemon=True)
        peer.start()
        context = zmq.Context()
        sock = context.socket(zmq.DEALER)
        sock.connect(f"tcp://127.0.0.1:{port}")

        def exchange() -> None:
            sock.send(payload, copy=size < (1 << 16))
            sock.recv()

        def close() -> None:
            sock.close(0)
            context.term()  # its I/O thread goes with it

    else:
        ready = ctx.Event()
        peer = ctx.Process(target=_tcp_peer, args=(port, theirs, ready), daemon=True)
        peer.start()
        ready.wait(30)
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        header = size.to_bytes(8, "little")

        def exchange() -> None:
            sock.sendall(header + payload)
            _read_exactly(sock, 2)

        close = sock.close
    try:
        return _time(exchange, rounds)
    finally:
        if before is not None:
            os.sched_setaffinity(0, before)
        close()
        peer.kill()
        peer.join()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=2000, help="round trips per sample")
    p.add_argument("--repeats", type=int, default=3, help="samples per figure (fresh processes each)")
    args = p.parse_args(argv)
    layouts: list[tuple[str, tuple[int | None, int | None]]] = [("spread", (None, None))]
    if hasattr(os, "sched_setaffinity") and len(os.sched_getaffinity(0)) >= 2:
        first, second = sorted(os.sched_getaffinity(0))[:2]
        layouts += [("one core", (first, first)), ("two cores", (first, second))]
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; medians of {args.repeats} samples of {args.rounds}")
    columns = f"{'ZeroMQ round trip':>18s} {'its CPU':>8s} {'TCP round trip':>15s} {'its CPU':>8s}"
    print(f"{'request':>9s} {'layout':10s} {columns}")
    for size in SIZES:
        for label, cores in layouts:
            cells = []
            for transport in ("zmq", "tcp"):
                samples = [measure(transport, size, cores, args.rounds) for _ in range(args.repeats)]
                cells.append(median_and_cpu(samples))
            (zrt, zcpu), (trt, tcpu) = cells
            print(f"{size:>8d}B {label:10s} {zrt:16.0f}µs {zcpu:6.0f}µs {trt:13.0f}µs {tcpu:6.0f}µs")


if __name__ == "__main__":
    main()
