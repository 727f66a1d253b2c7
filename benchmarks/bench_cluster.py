"""Cluster benchmark: step latency and tensor throughput between task processes, against raw pyzmq.

Run: ``python benchmarks/bench_cluster.py [--repeats N] [--sizes 1K,1M,64M] [--no-tf]``

Every task is its own process (``python -m dtf_notebook.server``); the client is this process.
Measured, in one run:

* latency: median ``sess.run(assign_add)`` on a ps variable through a session on the worker — with the session
  inside the worker task's process (TF1's between-graph replication) and from a separate client process —
  against a raw pyzmq REQ/REP round trip between two processes;
* ps→worker throughput: the worker reduces a ps variable of each size (so the tensor crosses once per step),
  and full fetch: the client fetches the variable (it crosses ps→worker→client), against one raw pyzmq message
  of that size between two processes;
* with ``tensorflow`` installed (the test extra), the same workloads on ``tensorflow.compat.v1`` servers.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES = {"1K": 1 << 10, "1M": 1 << 20, "64M": 64 << 20}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def child_env() -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""), OMP_NUM_THREADS="1")
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    return env


def stop(proc: subprocess.Popen) -> None:
    """Terminates a helper process, killing it if it does not exit in time."""
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def start(args: list[str], ready: str, timeout: float = 90.0) -> subprocess.Popen:
    log = tempfile.NamedTemporaryFile("w+", delete=False, suffix=".log")
    proc = subprocess.Popen(args, env=child_env(), stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(log.name) as f:
            if ready in f.read():
                return proc
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    with open(log.name) as f:
        raise RuntimeError(f"{args[:4]} did not start: {f.read()[-2000:]}")


def timed(fn, repeats: int, warmup: int = 3, min_seconds: float = 1.5) -> float:
    """Median seconds per call after warm-up, over at least ``repeats`` calls and ``min_seconds`` of calls."""
    for _ in range(warmup):
        fn()
    runs: list[float] = []
    start = time.perf_counter()
    while len(runs) < repeats or time.perf_counter() - start < min_seconds:
        t = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t)
    return statistics.median(runs)


# ---- raw pyzmq baselines ------------------------------------------------------------------------
RAW_PEER = r"""
import sys, zmq
ctx = zmq.Context()
s = ctx.socket(zmq.REP)
s.bind("tcp://127.0.0.1:" + sys.argv[1])
print("ready", flush=True)
while True:
    frames = s.recv_multipart(copy=False)
    if bytes(frames[0].buffer[:4]) == b"stop":
        s.send(b"ok"); break
    s.send(b"ok")
"""


def raw_zmq(sizes: dict[str, int], repeats: int) -> tuple[float, dict[str, float]]:
    import zmq

    port = free_port()
    peer = start([sys.executable, "-c", RAW_PEER, str(port)], "ready")
    sock = zmq.Context.instance().socket(zmq.REQ)
    sock.connect(f"tcp://127.0.0.1:{port}")
    try:
        for _ in range(200):
            sock.send(b"x")
            sock.recv()
        times = []
        for _ in range(max(repeats * 50, 500)):
            t = time.perf_counter()
            sock.send(b"x")
            sock.recv()
            times.append(time.perf_counter() - t)
        rtt = statistics.median(times)
        throughput = {}
        for label, n in sizes.items():
            payload = np.ones(n, dtype=np.uint8)

            def one_message(payload=payload):
                sock.send(payload, copy=False)
                sock.recv()

            throughput[label] = n / timed(one_message, repeats)
        sock.send(b"stop")
        sock.recv()
    finally:
        sock.close(0)
        peer.wait(10)
    return rtt, throughput


# ---- our cluster ------------------------------------------------------------------------------
def ours(sizes: dict[str, int], repeats: int) -> tuple[float, dict[str, float], dict[str, float]]:
    import dtf_notebook.compat.v1 as tf

    spec = {"ps": [f"127.0.0.1:{free_port()}"], "worker": [f"127.0.0.1:{free_port()}"]}
    procs = [
        start(
            [sys.executable, "-m", "dtf_notebook.server", "--cluster", json.dumps(spec), "--job", job, "--task", "0"],
            "ready ",
        )
        for job in ("ps", "worker")
    ]
    try:
        return _workloads(tf, "zmq://" + spec["worker"][0], sizes, repeats)
    finally:
        for p in procs:
            stop(p)


def _workloads(tf, target: str, sizes: dict[str, int], repeats: int):
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/job:ps/task:0"):
            counter = tf.Variable(0.0, name="counter")
            tensors = {label: tf.Variable(tf.zeros([n // 4]), name=f"t{label}") for label, n in sizes.items()}
        inc = tf.assign_add(counter, 1.0)
        with tf.device("/job:worker/task:0"):
            reduced = {label: tf.reduce_sum(v) for label, v in tensors.items()}
        init = tf.global_variables_initializer()
    with tf.Session(target, graph=graph) as sess:
        sess.run(init)
        for _ in range(50):
            sess.run(inc)
        times = []
        for _ in range(max(repeats * 50, 500)):
            t = time.perf_counter()
            sess.run(inc)
            times.append(time.perf_counter() - t)
        latency = statistics.median(times)
        to_worker, to_client = {}, {}
        for label, n in sizes.items():
            for store, fetch in ((to_worker, reduced[label]), (to_client, tensors[label])):
                store[label] = n / timed(lambda fetch=fetch: sess.run(fetch), repeats)
    return latency, to_worker, to_client


IN_WORKER = r"""
import json, statistics, sys, time
import dtf_notebook.compat.v1 as tf
spec = json.loads(sys.argv[1])
server = tf.train.Server(spec, job_name="worker", task_index=0)
with tf.device("/job:ps/task:0"):
    counter = tf.Variable(0.0, name="counter")
inc = tf.assign_add(counter, 1.0)
with tf.Session(server.target) as sess:
    sess.run(counter.initializer)
    for _ in range(100):
        sess.run(inc)
    times = []
    for _ in range(int(sys.argv[2])):
        t = time.perf_counter()
        sess.run(inc)
        times.append(time.perf_counter() - t)
print("latency", statistics.median(times), flush=True)
server.stop()
"""


def ours_in_worker(repeats: int) -> float:
    """Latency with the client inside the worker task's process (TF1's between-graph replication)."""
    spec = {"ps": [f"127.0.0.1:{free_port()}"], "worker": [f"127.0.0.1:{free_port()}"]}
    ps = start(
        [sys.executable, "-m", "dtf_notebook.server", "--cluster", json.dumps(spec), "--job", "ps", "--task", "0"],
        "ready ",
    )
    try:
        out = subprocess.run(
            [sys.executable, "-c", IN_WORKER, json.dumps(spec), str(max(repeats * 50, 500))],
            env=child_env(),
            capture_output=True,
            text=True,
            timeout=600,
        )
        line = [x for x in out.stdout.splitlines() if x.startswith("latency")]
        if not line:
            raise RuntimeError(out.stderr[-2000:])
        return float(line[0].split()[1])
    finally:
        stop(ps)


# ---- TensorFlow, when installed ----------------------------------------------------------------
TF_SERVER = r"""
import json, sys
import tensorflow as tf
spec = json.loads(sys.argv[1])
server = tf.distribute.Server(tf.train.ClusterSpec(spec), job_name=sys.argv[2], task_index=0)
print("ready", flush=True)
server.join()
"""


def tensorflow_numbers(sizes: dict[str, int], repeats: int):
    try:
        import tensorflow.compat.v1 as tf1
    except ImportError:
        return None
    tf1.disable_eager_execution()
    spec = {"ps": [f"localhost:{free_port()}"], "worker": [f"localhost:{free_port()}"]}
    procs = [start([sys.executable, "-c", TF_SERVER, json.dumps(spec), job], "ready") for job in ("ps", "worker")]
    try:
        return _workloads(tf1, "grpc://" + spec["worker"][0], sizes, repeats)
    finally:
        for p in procs:
            stop(p)


def mb_s(x: float) -> str:
    return f"{x / 1e6:10.1f}"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=9)
    p.add_argument("--sizes", default="1K,1M,64M")
    p.add_argument("--no-tf", action="store_true", help="skip the TensorFlow comparison")
    args = p.parse_args(argv)
    sizes = {s: SIZES[s] for s in args.sizes.split(",")}
    rtt, raw = raw_zmq(sizes, args.repeats)
    latency, to_worker, to_client = ours(sizes, args.repeats)
    in_worker = ours_in_worker(args.repeats)
    tf_numbers = None if args.no_tf else tensorflow_numbers(sizes, args.repeats)
    print(f"dtf_notebook cluster benchmark (ps + worker + client processes, loopback), repeats {args.repeats}")
    print(f"{'measurement':44s} {'value':>12s} {'vs raw zmq':>11s} {'vs TF':>9s}")
    print("-" * 80)
    tf_lat = f"{latency / tf_numbers[0]:8.2f}x" if tf_numbers else "       -"
    print(f"{'raw zmq REQ/REP round trip (us)':44s} {rtt * 1e6:12.1f}")
    print(f"{'assign_add on ps, session in worker (us)':44s} {in_worker * 1e6:12.1f} {in_worker / rtt:10.2f}x")
    print(f"{'assign_add on ps, client process (us)':44s} {latency * 1e6:12.1f} {latency / rtt:10.2f}x {tf_lat}")
    for label in sizes:
        t_w = f"{to_worker[label] / tf_numbers[1][label]:8.2f}x" if tf_numbers else "       -"
        t_c = f"{to_client[label] / tf_numbers[2][label]:8.2f}x" if tf_numbers else "       -"
        print(f"{'raw zmq one message ' + label + ' (MB/s)':44s} {mb_s(raw[label]):>12s}")
        print(
            f"{'ps->worker ' + label + ' (MB/s)':44s} {mb_s(to_worker[label]):>12s} "
            f"{to_worker[label] / raw[label]:10.2f}x {t_w}"
        )
        print(
            f"{'full fetch to client ' + label + ' (MB/s)':44s} {mb_s(to_client[label]):>12s} "
            f"{to_client[label] / raw[label]:10.2f}x {t_c}"
        )
        print(f"{'  fetch / ps->worker ' + label:44s} {to_client[label] / to_worker[label]:12.2f}")
    if tf_numbers:
        print(f"{'TF sess.run(assign_add) latency (us)':44s} {tf_numbers[0] * 1e6:12.1f}")


if __name__ == "__main__":
    main()
