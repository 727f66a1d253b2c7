"""Training benchmark: async data-parallel training, a partitioned embedding, sharded checkpoints.

Run: ``python benchmarks/bench_training.py [--duration S] [--rounds N] [--workers 1,2,4] [--repeats N] [--rows N]``

The headline is the layout TF1 users run (``mnist_replica.py``, every TF1 tutorial): every task a server
process (``python -m dtf_notebook.server``), every worker's training script a client process of its own opening
``tf.Session("zmq://worker-i:port")`` -- side by side, in the same run, with TF 2.21 ``tf.distribute.Server``
processes and ``grpc://`` clients running the same client code (see ``_layout.py``), when ``tensorflow`` is
installed. For each: examples/s (or steps/s, latency, MB/s) summed over the clients, and the median, p90 and max
of every ``sess.run`` of every client (``--rounds`` repeats the whole comparison; rates are medians over rounds,
step times pooled). ``--baseline DIR`` runs dtf_notebook from another checkout in the same rounds too (e.g.
``git worktree add /tmp/base COMMIT``) and prints before/after ratios:

* async MLP 784-100-10 on 2 ps with 1, 2 and 4 workers, each with its own client: ``replica_device_setter(
  cluster=..., worker_device="/job:worker/task:i")``, plain GD, a batch of 100 digits fed per step, fetching
  ``[train_op, loss]``; the clients start together after a barrier (a counter on ps 0);
* the partitioned embedding ``[rows, 20]`` over 3 ps (``fixed_size_partitioner(3)``), 1 worker, 1,024 random ids
  per step, GD;
* ``assign_add`` on a ps variable from a client process (1 ps + 1 worker): latency;
* 64 MiB ps->worker (the worker reduces a ps variable): MB/s.

Then, as before (a second table), the layout where each worker process runs its server and its session itself.
Every task is its own process (``python -m dtf_notebook.server`` for servers). Measured, in one run:

* (a) async training throughput (examples/s) of the seeds' 784-100-10 network (plain SGD, batch 100, scikit-learn
  digits) on 2 ps + 2 workers, TF1's between-graph replication: each worker process runs its own
  ``tf.train.Server`` and its client (``replica_device_setter`` + ``MonitoredTrainingSession``). Both workers
  train at once for ``--duration`` seconds after a start barrier (a counter on ps); the total is the sum of
  their examples over the same window. Compared with the same network and batch trained by one plain PyTorch
  process (eager autograd + ``torch.optim.SGD``), and, for reference, by one ``tf.Session("")`` in process,
  both in this process, each the median of two windows before and two after the cluster's (the machine is noisy);
* (b) a partitioned embedding ``[rows, 20]`` over 3 ps tasks (``fixed_size_partitioner(3)`` under
  ``replica_device_setter``), steps/s of a batch of 1024 random id lookups plus the sparse SGD update, from a
  client process (this one) through a session on the worker task;
* (c) ``tf.train.Saver(sharded=True)`` save and restore of that embedding (each ps task writes and reads its
  own shard), MB/s of variable bytes, against ``shutil.copyfile`` of a file of the same size.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import _layout
import numpy as np
from _common import timed

BATCH = 100
LEARNING_RATE = 0.1
EMBEDDING_DIM = 20
LOOKUP_BATCH = 1024

# One worker of (a): its own server and client, as in TF1's between-graph replication. It prints
# "rate <steps> <seconds>" for its part of the common measurement window.
WORKER = r"""
import json, sys, time
import dtf_notebook.compat.v1 as tf
from dtf_notebook.datasets import batches, load_digits_784

sys.path.insert(0, sys.argv[7])  # benchmarks/, for the model the client-process layout builds too
from _layout import build_mlp

spec, task = json.loads(sys.argv[1]), int(sys.argv[2])
duration, warmup, batch, lr = float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
cluster = tf.train.ClusterSpec(spec)
num_workers = cluster.num_tasks("worker")
server = tf.train.Server(cluster, job_name="worker", task_index=task)
x_train, y_train, _, _ = load_digits_784()
stream = batches(x_train[task::num_workers], y_train[task::num_workers], batch, seed=task, drop_remainder=True)
with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:%d" % task)):
    x, y, loss, train_op = build_mlp(tf, lr)
    arrived = tf.get_variable("arrived", [], tf.int32, initializer=tf.zeros_initializer())
arrive = tf.assign_add(arrived, 1)
# Each worker's session sees the ps tasks and itself only, so workers never wait for one another.
config = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:%d" % task])
with tf.train.MonitoredTrainingSession(master=server.target, is_chief=(task == 0), config=config) as sess:
    for _ in range(warmup):
        xb, yb = next(stream)
        sess.run(train_op, {x: xb, y: yb})
    sess.run(arrive)
    while sess.run(arrived) < num_workers:  # start barrier: every worker warmed up
        time.sleep(0.005)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < duration:
        xb, yb = next(stream)
        sess.run(train_op, {x: xb, y: yb})
        steps += 1
    seconds = time.perf_counter() - start
print("rate", steps, seconds, flush=True)
server.stop()
"""


def child_env() -> dict[str, str]:
    from dtf_notebook.distributed.local_process import task_env

    return task_env(threads=1)


# ---- (a) async training ----------------------------------------------------------------------------------
def cluster_training(duration: float, warmup: int, keyed: bool = False) -> list[tuple[int, float]]:
    """2 ps server processes + 2 worker processes training at once; (steps, seconds) of each worker.

    Keyless by default, as TensorFlow's servers are (comparable with its figures and the earlier ones here);
    ``keyed`` locks the cluster with a key, which every worker takes from ``DTF_CLUSTER_KEY_FILE``."""
    from dtf_notebook.notebook.local_cluster import LocalCluster

    cluster = LocalCluster(jobs={"ps": 2, "worker": 2}, cluster_key=None if keyed else False)
    try:
        cluster.start(serve=["ps"])  # each worker process runs its own server
        logs, workers = [], []
        for task in range(2):
            log = tempfile.NamedTemporaryFile("w+", suffix=f"-worker{task}.log", delete=False)
            args = [json.dumps(cluster.spec), str(task), str(duration), str(warmup), str(BATCH), str(LEARNING_RATE)]
            args.append(os.path.dirname(os.path.abspath(__file__)))
            env = cluster.client_env()
            proc = subprocess.Popen(
                [sys.executable, "-c", WORKER, *args], env=env, stdout=log, stderr=subprocess.STDOUT
            )
            logs.append(log.name)
            workers.append(proc)
        deadline = time.monotonic() + duration + 300
        for proc in workers:
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                break
        for proc in workers:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        rates = []
        for task, name in enumerate(logs):
            with open(name) as f:
                out = f.read()
            os.unlink(name)
            line = [x for x in out.splitlines() if x.startswith("rate ")]
            if workers[task].returncode != 0 or not line:
                raise RuntimeError(f"worker {task} failed ({workers[task].returncode}):\n{out[-3000:]}")
            steps, seconds = line[0].split()[1:]
            rates.append((int(steps), float(seconds)))
        return rates
    finally:
        cluster.stop()


def torch_step() -> Callable[[], None]:
    """One training step of the same network, batch and optimizer in plain PyTorch (this process)."""
    import torch

    from dtf_notebook.datasets import batches, load_digits_784

    x_train, y_train, _, _ = load_digits_784()
    stream = batches(x_train, y_train, BATCH, seed=0, drop_remainder=True)
    model = torch.nn.Sequential(torch.nn.Linear(784, 100), torch.nn.ReLU(), torch.nn.Linear(100, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step() -> None:
        xb, yb = next(stream)
        optimizer.zero_grad()
        loss_fn(model(torch.from_numpy(xb)), torch.from_numpy(yb)).backward()
        optimizer.step()

    return step


def session_step(stack: contextlib.ExitStack) -> Callable[[], None]:
    """One training step of the same network in a ``tf.Session("")`` of this process (closed with ``stack``)."""
    import dtf_notebook.compat.v1 as tf
    from dtf_notebook.datasets import batches, load_digits_784

    x_train, y_train, _, _ = load_digits_784()
    stream = batches(x_train, y_train, BATCH, seed=0, drop_remainder=True)
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [None, 784])
        y = tf.placeholder(tf.int64, [None])
        loss = _layout.mlp_loss(tf, x, y)
        train_op = tf.train.GradientDescentOptimizer(LEARNING_RATE).minimize(loss)
        init = tf.global_variables_initializer()
    sess = stack.enter_context(tf.Session(graph=graph))
    sess.run(init)

    def step() -> None:
        xb, yb = next(stream)
        sess.run(train_op, {x: xb, y: yb})

    return step


def examples_per_second(step: Callable[[], None], duration: float, warmup: int) -> float:
    for _ in range(warmup):
        step()
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < duration:
        step()
        steps += 1
    return steps * BATCH / (time.perf_counter() - start)


# ---- (b) partitioned embedding and (c) sharded checkpoints ---------------------------------------------
def embedding_and_checkpoints(rows: int, repeats: int, keyed: bool = False) -> dict[str, float]:
    """3 ps + 1 worker server processes; this process is the client. Steps/s of lookups + sparse SGD, and
    save/restore seconds of a sharded checkpoint, next to ``shutil.copyfile`` of the same number of bytes."""
    import dtf_notebook.compat.v1 as tf
    from dtf_notebook.notebook.local_cluster import LocalCluster

    with LocalCluster(jobs={"ps": 3, "worker": 1}, cluster_key=None if keyed else False) as cluster:
        spec = tf.train.ClusterSpec(cluster.spec)
        with tf.Graph().as_default() as graph:
            with tf.device(tf.train.replica_device_setter(cluster=spec, worker_device="/job:worker/task:0")):
                embedding = tf.get_variable(
                    "embedding", [rows, EMBEDDING_DIM], partitioner=tf.fixed_size_partitioner(3)
                )
                ids = tf.placeholder(tf.int64, [LOOKUP_BATCH], name="ids")
                looked_up = tf.nn.embedding_lookup(embedding, ids)
                loss = tf.reduce_sum(tf.square(looked_up))
                train_op = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
            saver = tf.train.Saver(sharded=True)
            init = tf.global_variables_initializer()
        rng = np.random.default_rng(0)
        probe = {ids: rng.integers(0, rows, LOOKUP_BATCH)}
        workdir = tempfile.mkdtemp(prefix="bench-training-")
        try:
            with tf.Session(cluster.target("worker", 0), graph=graph) as sess:
                sess.run(init)
                step = 1.0 / timed(lambda: sess.run(train_op, {ids: rng.integers(0, rows, LOOKUP_BATCH)}), repeats)
                prefix = os.path.join(workdir, "model")
                saved_rows = sess.run(looked_up, probe)
                save = timed(lambda: saver.save(sess, prefix, write_meta_graph=False), repeats, warmup=1)
                sess.run(train_op, probe)  # change the probed rows, so the restore has something to undo
                restore = timed(lambda: saver.restore(sess, prefix), repeats, warmup=1)
                if not np.array_equal(sess.run(looked_up, probe), saved_rows):
                    raise RuntimeError("restoring the sharded checkpoint did not bring back the saved values")
            shards = [f for f in os.listdir(workdir) if ".data-" in f]
            nbytes = rows * EMBEDDING_DIM * 4
            copy = copy_seconds(nbytes, workdir, repeats)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    return {"steps": step, "save": save, "restore": restore, "copy": copy, "bytes": nbytes, "shards": len(shards)}


def copy_seconds(nbytes: int, workdir: str, repeats: int) -> float:
    """Median seconds of ``shutil.copyfile`` of an ``nbytes`` file (the baseline for save and restore)."""
    src, dst = os.path.join(workdir, "copy-src"), os.path.join(workdir, "copy-dst")
    with open(src, "wb") as f:
        f.write(np.random.default_rng(0).bytes(nbytes))
    return timed(lambda: shutil.copyfile(src, dst), repeats, warmup=1)


# ---- the headline: the client-process layout, ours and TF's side by side ---------------------------------
def tensorflow_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("tensorflow") is not None


def client_layout(
    workers: list[int],
    duration: float,
    warmup: int,
    rows: int,
    rounds: int,
    libs: list[str],
    baseline: str | None = None,
) -> dict[tuple[str, str], dict[str, float]]:
    """Every workload of the headline, for each library in ``libs`` (one after the other, in alternating order
    per round); ``(workload, lib)`` -> ``rate`` (median over rounds) and ``median``/``p90``/``max`` step seconds
    (pooled), where ``rate`` is examples/s, steps/s, or bytes/s (transfer). The library ``"base"`` is
    dtf_notebook run from the checkout ``baseline`` (servers and clients), for before/after figures."""
    workloads: list[tuple[str, str, dict[str, int], int, Any]] = [
        (f"mlp{n}", "mlp", {"ps": 2, "worker": n}, n, None) for n in workers
    ]
    workloads += [
        ("embedding", "embedding", {"ps": 3, "worker": 1}, 1, rows),
        ("latency", "latency", {"ps": 1, "worker": 1}, 1, None),
        ("transfer", "transfer", {"ps": 1, "worker": 1}, 1, None),
    ]
    results: dict[tuple[str, str], list[list[dict[str, Any]]]] = {}
    workdir = tempfile.mkdtemp(prefix="bench-layout-")
    try:
        data = _layout.digits_file(workdir)
        for r in range(rounds):
            for name, workload, jobs, clients, extra in workloads:
                for lib in libs if r % 2 == 0 else libs[::-1]:
                    # The transfer moves 64 MiB per step: a few steps make a window.
                    warm = min(warmup, 3) if workload == "transfer" else warmup
                    where = baseline if lib == "base" else None
                    with _layout.Servers("dtf" if lib == "base" else lib, jobs, where) as servers:
                        out = _layout.run_clients(servers, workload, clients, duration, warm, data, extra)
                    results.setdefault((name, lib), []).append(out)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    summary: dict[tuple[str, str], dict[str, float]] = {}
    for key, runs in results.items():
        per_step = runs[0][0]["per_step"]
        rates = [_layout.combined(out, per_step)["rate"] for out in runs]
        times = [t for out in runs for r in out for t in r["times"]]
        cpu = statistics.median(_layout.cpu_per_step(out) for out in runs)
        summary[key] = {"rate": statistics.median(rates), "cpu": cpu, **_layout.summary(times)}
    return summary


def print_layout(summary: dict[tuple[str, str], dict[str, float]], workers: list[int], rows: int, libs: list[str]):
    def cell(key: tuple[str, str], unit: str) -> str:
        if key not in summary:
            return f"{'-':>30s}"
        r = summary[key]
        value = {
            "ex": f"{r['rate']:,.0f}",
            "steps": f"{r['rate']:,.1f}",
            "us": f"{r['median'] * 1e6:,.0f}",
            "mb": f"{r['rate'] / 1e6:,.0f}",
        }[unit]
        return f"{value:>9s} {r['median'] * 1e3:6.2f}/{r['p90'] * 1e3:6.2f}/{r['max'] * 1e3:6.1f}"

    def ratio(name: str, unit: str) -> str:
        ours, tf = summary.get((name, "dtf")), summary.get((name, "tf"))
        if not ours or not tf:
            return ""
        if unit == "us":
            return f"{ours['median'] / tf['median']:.2f}x TF's latency"
        return f"{ours['rate'] / tf['rate']:.2f}x TF; p90 {ours['p90'] / ours['median']:.1f}x median"

    print(
        "Client-process layout: every task a server process, every worker's script a client process "
        "(tf.Session('zmq://...'); TF 2.21: tf.distribute.Server + 'grpc://...'), side by side in one run"
    )
    print(f"{'workload':52s} {'TF 2.21':>30s} {'dtf_notebook':>30s}  ratio")
    print(f"{'':52s} {'value  median/p90/max step ms':>30s} {'value  median/p90/max step ms':>30s}")
    print("-" * 150)
    for n in workers:
        label = f"async MLP 2 ps + {n} worker{'s' if n > 1 else ''}, examples/s"
        print(f"{label:52s} {cell((f'mlp{n}', 'tf'), 'ex')} {cell((f'mlp{n}', 'dtf'), 'ex')}  {ratio(f'mlp{n}', 'ex')}")
    label = f"embedding [{rows}, {EMBEDDING_DIM}] on 3 ps, steps/s"
    print(
        f"{label:52s} {cell(('embedding', 'tf'), 'steps')} {cell(('embedding', 'dtf'), 'steps')}  "
        f"{ratio('embedding', 'steps')}"
    )
    label = "assign_add on ps from a client process, median us"
    print(f"{label:52s} {cell(('latency', 'tf'), 'us')} {cell(('latency', 'dtf'), 'us')}  {ratio('latency', 'us')}")
    label = "64 MiB ps->worker (reduced on the worker), MB/s"
    print(f"{label:52s} {cell(('transfer', 'tf'), 'mb')} {cell(('transfer', 'dtf'), 'mb')}  {ratio('transfer', 'mb')}")
    print()
    print("CPU time of every process (servers and clients) per step, ms: what bounds throughput on saturated cores")
    print(f"{'workload':52s} {'TF 2.21':>10s} {'dtf_notebook':>13s}  ratio")
    for name in [f"mlp{n}" for n in workers] + ["embedding", "latency", "transfer"]:
        ours, tf = summary.get((name, "dtf")), summary.get((name, "tf"))
        if ours:
            theirs = f"{tf['cpu'] * 1e3:10.2f}" if tf else f"{'-':>10s}"
            share = f"{ours['cpu'] / tf['cpu']:.2f}x TF's" if tf else ""
            print(f"{name:52s} {theirs} {ours['cpu'] * 1e3:13.2f}  {share}")
    print()
    if "base" not in libs:
        return
    print("The same workloads, the --baseline checkout against this one (same rounds)")
    print(f"{'workload':52s} {'baseline':>30s} {'this checkout':>30s}  ratio")
    print("-" * 150)
    names = [(f"mlp{n}", "ex") for n in workers] + [("embedding", "steps"), ("latency", "us"), ("transfer", "mb")]
    for name, unit in names:
        ours, base = summary.get((name, "dtf")), summary.get((name, "base"))
        if not ours or not base:
            continue
        change = base["median"] / ours["median"] if unit == "us" else ours["rate"] / base["rate"]
        print(f"{name:52s} {cell((name, 'base'), unit)} {cell((name, 'dtf'), unit)}  {change:.2f}x faster")
    print()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--duration", type=float, default=10.0, help="seconds of each training throughput window")
    p.add_argument("--warmup", type=int, default=20, help="training steps before each window")
    p.add_argument("--repeats", type=int, default=5, help="minimum calls per median of (b) and (c)")
    p.add_argument("--rows", type=int, default=1_000_000, help="rows of the partitioned embedding")
    p.add_argument("--threads", type=int, default=1, help="torch threads of this process (tasks use 1 each)")
    p.add_argument("--keyed", action="store_true", help="lock the clusters with a cluster key (CurveZMQ)")
    p.add_argument("--workers", default="1,2,4", help="worker counts of the client-process layout's async MLP")
    p.add_argument("--rounds", type=int, default=1, help="rounds of the client-process layout (medians reported)")
    p.add_argument("--layout", choices=("both", "client", "in-worker"), default="both", help="which tables to run")
    p.add_argument("--no-tf", action="store_true", help="skip TensorFlow in the client-process layout")
    p.add_argument(
        "--baseline", metavar="DIR", help="also run dtf_notebook from this checkout (e.g. a git worktree) as a baseline"
    )
    args = p.parse_args(argv)
    if args.layout != "in-worker":
        workers = [int(n) for n in args.workers.split(",")]
        libs = ["dtf"] + ([] if args.no_tf or not tensorflow_installed() else ["tf"])
        libs += ["base"] if args.baseline else []
        load = os.getloadavg()[0]
        summary = client_layout(workers, args.duration, args.warmup, args.rows, args.rounds, libs, args.baseline)
        print(
            f"dtf_notebook training benchmark: {os.cpu_count()} cores, load average {load:.1f} at the start, "
            f"{os.getloadavg()[0]:.1f} at the end; {args.duration:g} s windows, {args.rounds} round(s)"
        )
        print_layout(summary, workers, args.rows, libs)
        if args.layout == "client":
            return

    import torch

    torch.set_num_threads(args.threads)
    load_start = os.getloadavg()[0]
    with contextlib.ExitStack() as stack:
        single = {"torch": torch_step(), "session": session_step(stack)}
        # The machine is shared and noisy: the one-process baselines get half-length windows before and after
        # the cluster's window, and their median is reported.
        windows: dict[str, list[float]] = {name: [] for name in single}
        for name, step in single.items():
            windows[name] += [examples_per_second(step, args.duration / 2, args.warmup) for _ in range(2)]
        workers = cluster_training(args.duration, args.warmup, args.keyed)
        for name, step in single.items():
            windows[name] += [examples_per_second(step, args.duration / 2, args.warmup) for _ in range(2)]
    plain, local = statistics.median(windows["torch"]), statistics.median(windows["session"])
    cluster = sum(steps * BATCH / seconds for steps, seconds in workers)
    ckpt = embedding_and_checkpoints(args.rows, args.repeats, args.keyed)
    mb = ckpt["bytes"] / 1e6

    print(
        f"dtf_notebook training benchmark: {os.cpu_count()} cores, load average {load_start:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end; torch threads {args.threads} here, 1 per task\n"
        f"784-100-10 SGD batch {BATCH}, {args.duration:g} s cluster window, one-process medians of 4 windows of "
        f"{args.duration / 2:g} s (range); (b)/(c) medians over >= {args.repeats} calls; clusters "
        + ("locked with a cluster key (--keyed)" if args.keyed else "without a key, as TF's servers")
    )
    print(f"{'measurement':60s} {'value':>10s}  {'ratio':<14s}")
    print("-" * 86)
    row("(a) async 2 ps + 2 workers, examples/s (total)", f"{cluster:.0f}", f"{cluster / plain:.2f}x torch")
    for task, (steps, seconds) in enumerate(workers):
        row(f"      worker {task} (own server and client process)", f"{steps * BATCH / seconds:.0f}")
    spread = {name: f"({min(w):.0f}-{max(w):.0f})" for name, w in windows.items()}
    row("    plain PyTorch, one process, examples/s", f"{plain:.0f}", spread["torch"])
    row(
        '    tf.Session(""), one process, examples/s', f"{local:.0f}", f"{local / plain:.2f}x torch {spread['session']}"
    )
    row(
        f"(b) embedding [{args.rows}, {EMBEDDING_DIM}] on 3 ps, {LOOKUP_BATCH} ids + SGD, steps/s",
        f"{ckpt['steps']:.1f}",
    )
    shards = ckpt["shards"]
    row(
        f"(c) sharded save ({shards} shards, {mb:.0f} MB), MB/s",
        f"{mb / ckpt['save']:.0f}",
        f"{ckpt['copy'] / ckpt['save']:.2f}x copy",
    )
    row("    sharded restore, MB/s", f"{mb / ckpt['restore']:.0f}", f"{ckpt['copy'] / ckpt['restore']:.2f}x copy")
    row(f"    shutil.copyfile of {mb:.0f} MB, MB/s", f"{mb / ckpt['copy']:.0f}")


def row(label: str, value: str, ratio: str = "") -> None:
    print(f"{label:60s} {value:>10s}  {ratio}")


if __name__ == "__main__":
    main()
