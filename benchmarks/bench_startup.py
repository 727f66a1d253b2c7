"""Start-up benchmark: a fresh Python process until a trivial op has run on each task of a 1 ps + 2 worker cluster.

Run: ``python benchmarks/bench_startup.py [--repeats N] [--no-tf] [--json]``

Each sample is a fresh process (``python -c``), timed by this process from the moment it spawns the child until
the child has fetched the results of a trivial op placed on every task (``/job:ps/task:0``, ``/job:worker/task:0``
and ``/job:worker/task:1``, one step through a session on worker 0). The child reports when it finished its
imports, when the cluster answered and when the op had run, so the rows also say where the time went.

* ``dtf_notebook``: ``import dtf_notebook.compat.v1 as tf`` and ``LocalCluster(ps=1, workers=2)``: every task is
  its own process, forked from a template process that imported torch once;
* ``tensorflow``: ``import tensorflow.compat.v1 as tf`` and what ``tf.test.create_local_cluster(2, 1)`` does (TF's
  own local cluster: three in-process gRPC servers), with the ``tensorflow`` test extra installed;
* ``import``: the child's imports alone, for both, and a plain ``import torch`` for scale.

The two libraries alternate sample by sample, so a drift in the machine's load favours neither. ``--baseline DIR``
adds a third row in the same rounds: the dtf_notebook child run from another checkout (e.g. ``git archive`` of an
older commit unpacked in DIR), for before/after figures from one run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The child prints its checkpoints as wall-clock times (time.time()), which this process subtracts from the moment
# it spawned the child: the interpreter's own start is part of the cold start.
DTF_CHILD = """
import time, json
import dtf_notebook.compat.v1 as tf
from dtf_notebook.notebook.local_cluster import LocalCluster
imported = time.time()
with LocalCluster(ps=1, workers=2) as cluster:
    ready = time.time()
    with tf.Graph().as_default():
        outs = []
        for job, task in (("ps", 0), ("worker", 0), ("worker", 1)):
            with tf.device(f"/job:{job}/task:{task}"):
                outs.append(tf.constant(float(task)) + 1.0)
        with tf.Session(cluster.target("worker", 0)) as sess:
            values = sess.run(outs)
    done = time.time()
    print(json.dumps({"imported": imported, "ready": ready, "done": done, "values": [float(v) for v in values]}))
"""

TF_CHILD = """
import os, time, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow.compat.v1 as tf
tf.disable_eager_execution()
imported = time.time()
import socket
def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
# What tf.test.create_local_cluster(2, 1) does (it needs the portpicker package): three in-process gRPC servers.
tasks = (("ps", 0), ("worker", 0), ("worker", 1))
spec = tf.train.ClusterSpec({"ps": [f"localhost:{free_port()}"], "worker": [f"localhost:{free_port()}" for _ in "ab"]})
servers = [tf.train.Server(spec, job_name=job, task_index=i, start=True) for job, i in tasks]
workers = servers[1:]
ready = time.time()
with tf.Graph().as_default():
    outs = []
    for job, task in (("ps", 0), ("worker", 0), ("worker", 1)):
        with tf.device(f"/job:{job}/task:{task}"):
            outs.append(tf.constant(float(task)) + 1.0)
    with tf.Session(workers[0].target) as sess:
        values = sess.run(outs)
done = time.time()
print(json.dumps({"imported": imported, "ready": ready, "done": done, "values": [float(v) for v in values]}))
"""

IMPORT_CHILD = """
import time, json
import {module}
print(json.dumps({{"imported": time.time()}}))
"""


def child_env(runtime_dir: str, repo: str = REPO) -> dict[str, str]:
    """The children's environment: the checkout ``repo`` first on the path, and cluster files kept out of the
    user's."""
    env = dict(os.environ, PYTHONPATH=repo + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env["JUPYTER_RUNTIME_DIR"] = runtime_dir
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    return env


def sample(code: str, env: dict[str, str], timeout: float = 300) -> dict[str, float]:
    """Seconds from spawning ``python -c code`` to each checkpoint it prints (and to its exit, ``exit``)."""
    start = time.time()
    # Run in the checkout itself: ``python -c`` puts the working directory first on the path.
    cwd = env["PYTHONPATH"].split(os.pathsep)[0]
    command = [sys.executable, "-c", code]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    ended = time.time()
    if result.returncode != 0:
        raise RuntimeError(f"benchmark child failed ({result.returncode}):\n{result.stderr[-3000:]}")
    marks = json.loads(result.stdout.strip().splitlines()[-1])
    out = {k: v - start for k, v in marks.items() if isinstance(v, float)}
    out["exit"] = ended - start
    if "values" in marks and marks["values"] != [1.0, 1.0, 2.0]:
        raise RuntimeError(f"wrong values from the trivial ops: {marks['values']}")
    return out


def compiled_share(repo: str = REPO) -> tuple[int, int]:
    """(modules with current bytecode, modules) of the ``dtf_notebook`` package in the checkout ``repo``.

    Where ``PYTHONDONTWRITEBYTECODE`` is set, a checkout nobody byte-compiled (``scripts/setup.sh`` does) compiles
    every module it imports from source in every fresh process: about half a second of each cold start here.

    Example:
        >>> current, modules = compiled_share()
        >>> 0 <= current <= modules
        True
    """
    import importlib.util

    current = modules = 0
    for directory, _, files in os.walk(os.path.join(repo, "dtf_notebook")):
        for name in files:
            if name.endswith(".py"):
                source = os.path.join(directory, name)
                cached = importlib.util.cache_from_source(source)
                modules += 1
                current += os.path.exists(cached) and os.path.getmtime(cached) >= os.path.getmtime(source)
    return current, modules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-tf", action="store_true", help="skip TensorFlow even when it is installed")
    parser.add_argument("--json", action="store_true", help="print the samples as JSON")
    parser.add_argument("--baseline", help="another checkout whose dtf_notebook to time in the same rounds")
    args = parser.parse_args()
    try:
        has_tf = not args.no_tf and subprocess.run([sys.executable, "-c", "import tensorflow"], capture_output=True)
        has_tf = bool(has_tf) and has_tf.returncode == 0
    except OSError:
        has_tf = False
    names = ["dtf", "tf", "import dtf", "import tf", "torch", "baseline", "import baseline"]
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as runtime:
        env = child_env(runtime)
        base_env = child_env(runtime, os.path.abspath(args.baseline)) if args.baseline else None
        for _ in range(args.repeats):
            runs["dtf"].append(sample(DTF_CHILD, env))
            runs["import dtf"].append(sample(IMPORT_CHILD.format(module="dtf_notebook.compat.v1"), env))
            if base_env is not None:
                runs["baseline"].append(sample(DTF_CHILD, base_env))
                runs["import baseline"].append(sample(IMPORT_CHILD.format(module="dtf_notebook.compat.v1"), base_env))
            runs["torch"].append(sample(IMPORT_CHILD.format(module="torch"), env))
            if has_tf:
                runs["tf"].append(sample(TF_CHILD, env))
                runs["import tf"].append(sample(IMPORT_CHILD.format(module="tensorflow.compat.v1"), env))
    if args.json:
        print(json.dumps(runs, indent=1))
        return

    def med(name: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[name])

    def spread(name: str, key: str) -> str:
        values = [r[key] for r in runs[name]]
        return f"{min(values):.2f}-{max(values):.2f}"

    print(f"cpu count {os.cpu_count()}, load {os.getloadavg()[0]:.1f}, {args.repeats} fresh processes each (medians)")
    trees = [("this checkout", REPO)] + ([("baseline", os.path.abspath(args.baseline))] if args.baseline else [])
    for label, repo in trees:
        current, modules = compiled_share(repo)
        print(f"bytecode, {label}: {current} of {modules} modules compiled and current")
    print(f"{'':34s} {'imported':>9s} {'cluster up':>11s} {'op on 3 tasks':>14s}  spread of the last")
    rows = (("dtf", "dtf_notebook (LocalCluster)"), ("baseline", "baseline checkout"), ("tf", "TF 2.21 (3 servers)"))
    for name, label in rows:
        if runs[name]:
            print(
                f"{label:34s} {med(name, 'imported'):8.2f}s {med(name, 'ready'):10.2f}s {med(name, 'done'):13.2f}s"
                f"  {spread(name, 'done')}"
            )
    imports = (
        ("import dtf", "import dtf_notebook.compat.v1"),
        ("import baseline", "the same, baseline checkout"),
        ("import tf", "import tensorflow.compat.v1"),
    )
    for name, label in imports:
        if runs[name]:
            print(f"{label:34s} {med(name, 'imported'):8.2f}s  (spread {spread(name, 'imported')})")
    print(f"{'import torch':34s} {med('torch', 'imported'):8.2f}s  (spread {spread('torch', 'imported')})")
    if runs["tf"]:
        ratios = [d["done"] / t["done"] for d, t in zip(runs["dtf"], runs["tf"])]
        pairs = f"{min(ratios):.2f}-{max(ratios):.2f}"
        print(f"cold start, dtf_notebook / TF: {statistics.median(ratios):.2f}x (pairs: {pairs})")
        if runs["baseline"]:
            base = [b["done"] / t["done"] for b, t in zip(runs["baseline"], runs["tf"])]
            print(f"cold start, baseline / TF: {statistics.median(base):.2f}x (pairs: {min(base):.2f}-{max(base):.2f})")


if __name__ == "__main__":
    main()
