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
* with ``tensorflow`` installed (the test extra), the same workloads on ``tensorflow.compat.v1`` servers;
* the same cluster workloads again with a cluster key (CurveZMQ: authenticated and encrypted), measured in the
  same rounds as the keyless cluster, so the cost of the key is a ratio from one run.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import _common
import numpy as np

from dtf_notebook.distributed.local_process import free_port

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES = {"1K": 1 << 10, "1M": 1 << 20, "64M": 64 << 20}


def child_env(key_file: str | None = None) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""), OMP_NUM_THREADS="1")
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    env.pop("DTF_CLUSTER_KEY", None)
    env.pop("DTF_CLUSTER_KEY_FILE", None)
    if key_file is not None:
        env["DTF_CLUSTER_KEY_FILE"] = key_file  # servers and clients alike take the cluster key from here
    return env


def stop(proc: subprocess.Popen) -> None:
    """Terminates a helper process, killing it if it does not exit in time."""
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def start(args: list[str], ready: str, timeout: float = 90.0, key_file: str | None = None) -> subprocess.Popen:
    log = tempfile.NamedTemporaryFile("w+", delete=False, suffix=".log")
    proc = subprocess.Popen(args, env=child_env(key_file), stdout=log, stderr=subprocess.STDOUT)
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


# Median seconds per call (see _common.timed), after 3 warm-up calls and over at least 1.5 s of calls by default.
timed = functools.partial(_common.timed, warmup=3, min_seconds=1.5)


# ---- raw pyzmq baselines ------------------------------------------------------------------------
RAW_PEER = r"""
import sys, zmq
ctx = zmq.Context()
s = ctx.socket(zmq.REP)
if len(sys.argv) > 2:  # CurveZMQ: this peer is the server, with the secret key given
    s.curve_server = True
    s.curve_secretkey = sys.argv[2].encode()
s.bind("tcp://127.0.0.1:" + sys.argv[1])
print("ready", flush=True)
while True:
    frames = s.recv_multipart(copy=False)
    if bytes(frames[0].buffer[:4]) == b"stop":
        s.send(b"ok"); break
    s.send(b"ok")
"""


class RawZmq:
    """A raw pyzmq REQ/REP pair between this process and a peer process: the baseline (over CurveZMQ with
    ``curve``, the baseline of a keyed cluster)."""

    def __init__(self, curve: bool = False) -> None:
        self.curve = curve

    def __enter__(self) -> RawZmq:
        import zmq

        port = free_port()
        server_public, server_secret = zmq.curve_keypair()
        extra = [server_secret.decode()] if self.curve else []
        self.peer = start([sys.executable, "-c", RAW_PEER, str(port), *extra], "ready")
        self.sock = zmq.Context.instance().socket(zmq.REQ)
        if self.curve:
            self.sock.curve_serverkey = server_public
            self.sock.curve_publickey, self.sock.curve_secretkey = zmq.curve_keypair()
        self.sock.connect(f"tcp://127.0.0.1:{port}")
        for _ in range(200):
            self.ping()
        self.payloads: dict[int, np.ndarray] = {}
        return self

    def ping(self) -> None:
        self.sock.send(b"x")
        self.sock.recv()

    def send(self, n: int) -> None:
        payload = self.payloads.setdefault(n, np.ones(n, dtype=np.uint8))
        self.sock.send(payload, copy=False)
        self.sock.recv()

    def __exit__(self, *exc) -> None:
        self.sock.send(b"stop")
        self.sock.recv()
        self.sock.close(0)
        self.peer.wait(10)


class Workloads:
    """The benchmark's graph on a cluster: ``inc`` (assign_add on ps), ``to_worker[label]`` (reduced on the
    worker, so the tensor crosses ps->worker once) and ``to_client[label]`` (the ps tensor fetched whole)."""

    def __init__(self, tf, target: str, sizes: dict[str, int], config=None) -> None:
        graph = tf.Graph()
        with graph.as_default():
            with tf.device("/job:ps/task:0"):
                counter = tf.Variable(0.0, name="counter")
                tensors = {label: tf.Variable(tf.zeros([n // 4]), name=f"t{label}") for label, n in sizes.items()}
            self.inc = tf.assign_add(counter, 1.0)
            with tf.device("/job:worker/task:0"):
                self.to_worker = {label: tf.reduce_sum(v) for label, v in tensors.items()}
            self.to_client = tensors
            init = tf.global_variables_initializer()
        self.sess = tf.Session(target, graph=graph, config=config)
        self.sess.run(init)
        for _ in range(50):
            self.sess.run(self.inc)

    def close(self) -> None:
        self.sess.close()


def latency_of(fn, calls: int) -> float:
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def measure_round(
    raws: dict[str, RawZmq], works: dict[str, Workloads], sizes: dict[str, int], repeats: int
) -> dict[str, float]:
    """One round: every measurement once, raw and ours (keyless "", keyed "keyed ") back to back, so all see the
    same machine load."""
    calls = max(repeats * 20, 200)
    row = {"rtt": latency_of(raws[""].ping, calls)}
    for prefix, work in works.items():
        row[prefix + "latency"] = latency_of(lambda w=work: w.sess.run(w.inc), calls)
    for label, n in sizes.items():
        for prefix, raw in raws.items():
            row[prefix + "raw " + label] = n / timed(lambda n=n, r=raw: r.send(n), repeats, min_seconds=0.3)
        for prefix, w in works.items():
            run = w.sess.run
            row[prefix + "worker " + label] = n / timed(
                lambda f=w.to_worker[label], r=run: r(f), repeats, min_seconds=0.3
            )
            row[prefix + "client " + label] = n / timed(
                lambda f=w.to_client[label], r=run: r(f), repeats, min_seconds=0.3
            )
    return row


def _serve(spec: dict[str, list[str]], key_file: str | None) -> list[subprocess.Popen]:
    args = [sys.executable, "-m", "dtf_notebook.server", "--cluster", json.dumps(spec), "--task", "0"]
    return [start([*args, "--job", job], "ready ", key_file=key_file) for job in ("ps", "worker")]


def ours(sizes: dict[str, int], repeats: int, rounds: int, key_file: str) -> list[dict[str, float]]:
    """Rounds over two clusters of the same shape, one without a key and one locked with ``key_file``."""
    import dtf_notebook.compat.v1 as tf
    from dtf_notebook.distributed.cluster_key import read_key_file

    specs = {
        prefix: {"ps": [f"127.0.0.1:{free_port()}"], "worker": [f"127.0.0.1:{free_port()}"]}
        for prefix in ("", "keyed ")
    }
    procs = _serve(specs[""], None) + _serve(specs["keyed "], key_file)
    try:
        configs = {"": None, "keyed ": tf.ConfigProto(cluster_key=read_key_file(key_file))}
        works = {p: Workloads(tf, "zmq://" + specs[p]["worker"][0], sizes, configs[p]) for p in specs}
        try:
            with RawZmq() as raw, RawZmq(curve=True) as raw_curve:
                raws = {"": raw, "keyed ": raw_curve}
                return [measure_round(raws, works, sizes, repeats) for _ in range(rounds)]
        finally:
            for work in works.values():
                work.close()
    finally:
        for p in procs:
            stop(p)


def _workloads(tf, target: str, sizes: dict[str, int], repeats: int):
    work = Workloads(tf, target, sizes)
    try:
        latency = latency_of(lambda: work.sess.run(work.inc), max(repeats * 50, 500))
        to_worker, to_client = {}, {}
        for label, n in sizes.items():
            to_worker[label] = n / timed(lambda f=work.to_worker[label]: work.sess.run(f), repeats)
            to_client[label] = n / timed(lambda f=work.to_client[label]: work.sess.run(f), repeats)
    finally:
        work.close()
    return latency, to_worker, to_client


IN_WORKER = r"""
import json, statistics, sys, time
import zmq
import dtf_notebook.compat.v1 as tf
spec = json.loads(sys.argv[1])
calls, rounds = int(sys.argv[3]), int(sys.argv[4])
raw = zmq.Context.instance().socket(zmq.REQ)
raw.connect("tcp://127.0.0.1:" + sys.argv[2])
def ping():
    raw.send(b"x"); raw.recv()
server = tf.train.Server(spec, job_name="worker", task_index=0)
with tf.device("/job:ps/task:0"):
    counter = tf.Variable(0.0, name="counter")
inc = tf.assign_add(counter, 1.0)
def median_call(fn):
    times = []
    for _ in range(calls):
        t = time.perf_counter(); fn(); times.append(time.perf_counter() - t)
    return statistics.median(times)
with tf.Session(server.target) as sess:
    sess.run(counter.initializer)
    for _ in range(100):
        sess.run(inc); ping()
    rows = [(median_call(lambda: sess.run(inc)), median_call(ping)) for _ in range(rounds)]
print("latency", statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows),
      statistics.median(r[0] / r[1] for r in rows), flush=True)
raw.send(b"stop"); raw.recv()
server.stop()
"""


def ours_in_worker(repeats: int, rounds: int, key_file: str | None = None) -> tuple[float, float, float]:
    """Latency with the client inside the worker task's process (TF1's between-graph replication), interleaved
    with a raw round trip from that same process: (median latency, median raw rtt, median ratio)."""
    spec = {"ps": [f"127.0.0.1:{free_port()}"], "worker": [f"127.0.0.1:{free_port()}"]}
    raw_port = free_port()
    peer = start([sys.executable, "-c", RAW_PEER, str(raw_port)], "ready")
    ps = start(
        [sys.executable, "-m", "dtf_notebook.server", "--cluster", json.dumps(spec), "--job", "ps", "--task", "0"],
        "ready ",
        key_file=key_file,
    )
    try:
        args = [json.dumps(spec), str(raw_port), str(max(repeats * 20, 200)), str(rounds)]
        out = subprocess.run(
            [sys.executable, "-c", IN_WORKER, *args],
            env=child_env(key_file),
            capture_output=True,
            text=True,
            timeout=600,
        )
        line = [x for x in out.stdout.splitlines() if x.startswith("latency")]
        if not line:
            raise RuntimeError(out.stderr[-2000:])
        latency, rtt, ratio = map(float, line[0].split()[1:])
        return latency, rtt, ratio
    finally:
        stop(ps)
        stop(peer)


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


def median_of(rows: list[dict[str, float]], key: str, over: str | None = None) -> float:
    """Median over rounds of ``row[key]``, or of the per-round ratio ``row[key] / row[over]``."""
    return statistics.median(r[key] / (r[over] if over else 1.0) for r in rows)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--rounds", type=int, default=5, help="interleaved rounds of raw and ours (medians reported)")
    p.add_argument("--sizes", default="1K,1M,64M")
    p.add_argument("--no-tf", action="store_true", help="skip the TensorFlow comparison")
    args = p.parse_args(argv)
    sizes = {s: SIZES[s] for s in args.sizes.split(",")}
    from dtf_notebook.distributed.cluster_key import write_key_file

    key_file = os.path.join(tempfile.mkdtemp(prefix="dtf-bench-"), "cluster.key")
    write_key_file(key_file)
    rows = ours(sizes, args.repeats, args.rounds, key_file)
    in_worker, _, in_worker_ratio = ours_in_worker(args.repeats, args.rounds)
    keyed_in_worker, _, keyed_in_worker_ratio = ours_in_worker(args.repeats, args.rounds, key_file)
    tf_numbers = None if args.no_tf else tensorflow_numbers(sizes, args.repeats)
    rtt = median_of(rows, "rtt")
    latency = median_of(rows, "latency")
    print(
        f"dtf_notebook cluster benchmark (ps + worker + client processes, loopback), {args.rounds} interleaved "
        f"rounds x {args.repeats} repeats; values are medians over rounds, ratios medians of per-round ratios"
    )
    print(f"{'measurement':44s} {'value':>12s} {'vs raw zmq':>11s} {'vs TF':>9s}")
    print("-" * 80)
    tf_lat = f"{latency / tf_numbers[0]:8.2f}x" if tf_numbers else "       -"
    print(f"{'raw zmq REQ/REP round trip (us)':44s} {rtt * 1e6:12.1f}")
    print(f"{'assign_add on ps, session in worker (us)':44s} {in_worker * 1e6:12.1f} {in_worker_ratio:10.2f}x")
    print(
        f"{'assign_add on ps, client process (us)':44s} {latency * 1e6:12.1f} "
        f"{median_of(rows, 'latency', 'rtt'):10.2f}x {tf_lat}"
    )
    for label in sizes:
        to_worker = median_of(rows, "worker " + label)
        to_client = median_of(rows, "client " + label)
        t_w = f"{to_worker / tf_numbers[1][label]:8.2f}x" if tf_numbers else "       -"
        t_c = f"{to_client / tf_numbers[2][label]:8.2f}x" if tf_numbers else "       -"
        raw = median_of(rows, "raw " + label)
        print(f"{'raw zmq one message ' + label + ' (MB/s)':44s} {mb_s(raw):>12s}")
        print(
            f"{'ps->worker ' + label + ' (MB/s)':44s} {mb_s(to_worker):>12s} "
            f"{median_of(rows, 'worker ' + label, 'raw ' + label):10.2f}x {t_w}"
        )
        print(
            f"{'full fetch to client ' + label + ' (MB/s)':44s} {mb_s(to_client):>12s} "
            f"{median_of(rows, 'client ' + label, 'raw ' + label):10.2f}x {t_c}"
        )
        print(f"{'  fetch / ps->worker ' + label:44s} {median_of(rows, 'client ' + label, 'worker ' + label):12.2f}")
    if tf_numbers:
        print(f"{'TF sess.run(assign_add) latency (us)':44s} {tf_numbers[0] * 1e6:12.1f}")
    print()
    print("With a cluster key (CurveZMQ), measured in the same rounds as the keyless cluster above")
    print(f"{'measurement':44s} {'keyed':>12s} {'keyless':>11s} {'keyed/keyless':>14s} {'keyed vs raw curve':>19s}")
    print("-" * 104)
    print(
        f"{'assign_add on ps, session in worker (us)':44s} {keyed_in_worker * 1e6:12.1f} {in_worker * 1e6:11.1f} "
        f"{keyed_in_worker / in_worker:13.2f}x   ({keyed_in_worker_ratio:.2f}x raw zmq)"
    )
    print(
        f"{'assign_add on ps, client process (us)':44s} {median_of(rows, 'keyed latency') * 1e6:12.1f} "
        f"{latency * 1e6:11.1f} {median_of(rows, 'keyed latency', 'latency'):13.2f}x"
    )
    for label in sizes:
        curve, plain = median_of(rows, f"keyed raw {label}"), median_of(rows, f"raw {label}")
        ratio = median_of(rows, f"keyed raw {label}", f"raw {label}")
        print(f"{'raw zmq one message ' + label + ' (MB/s)':44s} {mb_s(curve):>12s} {mb_s(plain):>11s} {ratio:13.2f}x")
        for what, name in (("worker", "ps->worker"), ("client", "full fetch to client")):
            keyed, plain = median_of(rows, f"keyed {what} {label}"), median_of(rows, f"{what} {label}")
            ratio = median_of(rows, f"keyed {what} {label}", f"{what} {label}")
            vs_raw = median_of(rows, f"keyed {what} {label}", f"keyed raw {label}")
            print(
                f"{name + ' ' + label + ' (MB/s)':44s} {mb_s(keyed):>12s} {mb_s(plain):>11s} {ratio:13.2f}x "
                f"{vs_raw:18.2f}x"
            )


if __name__ == "__main__":
    main()
