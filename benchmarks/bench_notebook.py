"""Notebook benchmark: how fast the notebook layer answers, part by part.

Run: ``python benchmarks/bench_notebook.py [--part start] [--repeats N] [--json]``

Parts (each a function in ``PARTS``; add one by writing ``bench_<part>(args) -> list[Row]`` and listing it):

* ``start``: seconds until a 1 ps + 2 worker cluster answers, measured in fresh processes that have already
  imported the package (as a kernel has):

  - ``import torch``: one ``python -c "import torch"``, the floor for any process that runs ops;
  - ``3 x import torch``: three such processes in parallel, what three plain task processes pay at least;
  - ``LocalCluster plain processes``: ``start_method="subprocess"``, three task processes of their own
    (``python -m``), started in parallel, each importing everything itself, until each answers;
  - ``LocalCluster cold``: the first start of a process, which starts the task template first;
  - ``LocalCluster warm``: later starts while the first cluster runs, forking the tasks from its template;
  - ``LocalCluster prewarmed``: ``prewarm()``, the template's import, then the start.
* ``placement``: building the placement picture's model and drawing it to SVG (``dot`` with its task and
  device boxes; on big graphs the edges beyond dot's budget drawn straight afterwards, see
  ``dtf_notebook.notebook.placement_render``) for training graphs of ~500, ~1,000 and ~5,000 ops, scopes
  collapsed and expanded; ``dot alone`` shows what routing every edge through dot costs on the expanded
  1,000-op graph.
* ``watcher``: one VariableWatcher refresh of a 2 ps + 1 worker cluster holding 101 variables, and the
  histogram of a 4M-float variable, both computed on the tasks; then the seeds' 784-100-10 network trained
  from this process in alternating 2 s windows without and with a watcher refreshing every 0.5 s (also in this
  process, as in a notebook kernel): seconds per step, and the watcher's cost in per cent.
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
from collections.abc import Callable
from dataclasses import dataclass

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class Row:
    """One measurement: what, the median and spread of its samples, and a note."""

    name: str
    samples: list[float]
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.samples)


def child_env(runtime_dir: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""), OMP_NUM_THREADS="1")
    env["JUPYTER_RUNTIME_DIR"] = runtime_dir  # cluster files of the benchmark stay out of the user's listing
    return env


def run_python(code: str, *args: str, env: dict[str, str], timeout: float = 300) -> str:
    command = [sys.executable, "-c", code, *args]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(f"benchmark child failed ({result.returncode}):\n{result.stderr[-3000:]}")
    return result.stdout


# ---- part: start ---------------------------------------------------------------------------------
_START_CHILD = """
import json, sys, time
from dtf_notebook.notebook.local_cluster import LocalCluster, prewarm
from dtf_notebook.notebook.template_client import shared_template

mode, warm_repeats = sys.argv[1], int(sys.argv[2])
out = {}
if mode == "process":
    t = time.perf_counter()
    with LocalCluster(ps=1, workers=2, start_method="subprocess"):
        out["process"] = time.perf_counter() - t
elif mode == "prewarmed":
    prewarm()
    shared_template().wait_ready(120)
    t = time.perf_counter()
    with LocalCluster(ps=1, workers=2):
        out["prewarmed"] = time.perf_counter() - t
else:
    t = time.perf_counter()
    with LocalCluster(ps=1, workers=2):
        out["cold"] = time.perf_counter() - t
        out["template_ready"] = shared_template().ready_after
        warm = []  # while the first cluster runs: its template stays (it exits when the last cluster stops)
        for _ in range(warm_repeats):
            t = time.perf_counter()
            with LocalCluster(ps=1, workers=2):
                warm.append(time.perf_counter() - t)
    out["warm"] = warm
print(json.dumps(out))
"""


def _wall(command: list[list[str]], env: dict[str, str]) -> float:
    start = time.perf_counter()
    procs = [subprocess.Popen(c, env=env) for c in command]
    for p in procs:
        if p.wait() != 0:
            raise RuntimeError(f"{command} failed")
    return time.perf_counter() - start


def bench_start(args: argparse.Namespace) -> list[Row]:
    process, cold, warm, prewarmed, template = [], [], [], [], []
    with tempfile.TemporaryDirectory(prefix="bench-runtime-") as runtime:
        env = child_env(runtime)
        torch1 = [_wall([[sys.executable, "-c", "import torch"]], env) for _ in range(args.repeats)]
        torch3 = [_wall([[sys.executable, "-c", "import torch"]] * 3, env) for _ in range(args.repeats)]

        def child(mode: str) -> dict:
            return json.loads(run_python(_START_CHILD, mode, str(args.repeats), env=env))

        for _ in range(args.repeats):
            process.append(child("process")["process"])
            result = child("cold")
            cold.append(result["cold"])
            template.append(result["template_ready"])
            warm += result["warm"]
            prewarmed.append(child("prewarmed")["prewarmed"])
    return [
        Row("import torch (1 process)", torch1),
        Row("import torch (3 processes in parallel)", torch3),
        Row("LocalCluster plain processes 1 ps + 2 workers", process, "start_method='subprocess': 3 python -m"),
        Row("LocalCluster cold", cold, f"template ready after {statistics.median(template):.2f} s"),
        Row("LocalCluster warm", warm, "tasks forked from the running template"),
        Row("LocalCluster prewarmed", prewarmed, "start() after prewarm() finished"),
    ]


# ---- part: placement -----------------------------------------------------------------------------
def _layered_graph(ops: int):
    """A training graph of ~``ops`` nodes: dense layers on 4 ps tasks (replica_device_setter), gradients, SGD."""
    import dtf_notebook.compat.v1 as tf

    graph = tf.Graph()
    with graph.as_default(), tf.device(tf.train.replica_device_setter(ps_tasks=4)):
        h = tf.placeholder(tf.float32, [None, 8], name="x")
        layer = 0
        while len(graph.get_operations()) < ops * 0.8:
            with tf.variable_scope(f"layer{layer}"):
                h = tf.nn.relu(tf.matmul(h, tf.get_variable("w", [8, 8])) + tf.get_variable("b", [8]))
            layer += 1
        tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_mean(tf.square(h)))
    return graph


def bench_placement(args: argparse.Namespace) -> list[Row]:
    from dtf_notebook.notebook.placement_graph import placement_view
    from dtf_notebook.notebook.placement_render import split_edges

    rows = []
    for size in (500, 1000, 5000):
        graph = _layered_graph(size)
        count = len(graph.get_operations())
        cases = [("collapsed", True, None), ("expanded", False, None)]
        if size == 1000:
            cases.append(("expanded, dot alone", False, "dot"))
        for label, collapse, engine in cases:
            model, svg = [], []
            for _ in range(args.repeats):
                start = time.perf_counter()
                view = placement_view(graph, collapse=collapse, engine=engine)
                model.append(time.perf_counter() - start)
                start = time.perf_counter()
                view.svg()
                svg.append(time.perf_counter() - start)
            straight = len(split_edges(view.model)[1]) if engine is None else 0
            drawn = f"{len(view.nodes)} nodes, {len(view.edges)} edges ({straight} drawn straight)"
            boxes = view.svg().count('class="cluster"')
            rows.append(Row(f"{count} ops {label}: model", model, drawn))
            rows.append(Row(f"{count} ops {label}: SVG", svg, f"{len(view.svg()) / 1e6:.1f} MB, {boxes} boxes"))
    return rows


# ---- part: watcher -------------------------------------------------------------------------------
def bench_watcher(args: argparse.Namespace) -> list[Row]:
    import dtf_notebook.compat.v1 as tf
    from dtf_notebook.notebook.local_cluster import LocalCluster
    from dtf_notebook.notebook.variable_watcher import VariableWatcher

    refresh, histogram = [], []
    with LocalCluster(ps=2, workers=1) as cluster, tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
            small = [tf.get_variable(f"v{i}", [1000]) for i in range(100)]
            big = tf.get_variable("big", [4 << 20])  # 16 MiB, summarised and binned where it lives
        with tf.Session(cluster.target("worker", 0)) as sess:
            sess.run(tf.global_variables_initializer())
            with VariableWatcher(cluster, start=False, timeout=30) as watcher:
                watcher.poll()
                for _ in range(args.repeats):
                    start = time.perf_counter()
                    watcher.poll()
                    refresh.append(time.perf_counter() - start)
                    start = time.perf_counter()
                    watcher.histogram(big.op.name, bins=50)
                    histogram.append(time.perf_counter() - start)
    without, with_watcher = _training_under_watch(args)
    # Neighbouring windows form a pair; the median of the pairs' ratios follows the machine's drifting load.
    ratio = statistics.median(w / wo for w, wo in zip(with_watcher, without))
    return [
        Row("refresh: 3 tasks, 101 variables", refresh, f"{len(small)} x 1000 floats + 1 x 4M floats, stats on task"),
        Row("histogram of a 4M-float variable", histogram, "50 bins computed on its task"),
        Row("training step, no watcher", without, "784-100-10 MLP, batch 100, variables on 2 ps"),
        Row("training step, watcher every 0.5 s", with_watcher, f"{(ratio - 1) * 100:+.1f}% time per step (pairs)"),
    ]


def _training_under_watch(args: argparse.Namespace, window: float = 1.0) -> tuple[list[float], list[float]]:
    """Seconds per training step in alternating windows without and with a VariableWatcher refreshing every
    0.5 s in this process (the kernel's case: training and watcher share one interpreter). Pairs of windows
    alternate their order (without first, then with first), so a drift in load favours neither side."""
    import numpy as np

    import dtf_notebook.compat.v1 as tf
    from dtf_notebook.notebook.local_cluster import LocalCluster
    from dtf_notebook.notebook.variable_watcher import VariableWatcher

    rng = np.random.default_rng(0)
    xs, ys = rng.random((100, 784), dtype=np.float32), rng.integers(0, 10, 100)
    without, with_watcher = [], []
    with LocalCluster(ps=2, workers=1) as cluster, tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
            x, y = tf.placeholder(tf.float32, [None, 784]), tf.placeholder(tf.int64, [None])
            w1, b1 = tf.get_variable("w1", [784, 100]), tf.get_variable("b1", [100])
            w2, b2 = tf.get_variable("w2", [100, 10]), tf.get_variable("b2", [10])
            logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2) + b2
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
            train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.Session(cluster.target("worker", 0)) as sess:
            sess.run(tf.global_variables_initializer())

            def seconds_per_step() -> float:
                steps, start = 0, time.perf_counter()
                while time.perf_counter() - start < window:
                    sess.run(train, {x: xs, y: ys})
                    steps += 1
                return (time.perf_counter() - start) / steps

            def watched() -> float:
                with VariableWatcher(cluster, refresh=0.5, timeout=30):
                    return seconds_per_step()

            seconds_per_step()  # warm-up
            for pair in range(max(args.repeats, 10)):
                if pair % 2:
                    with_watcher.append(watched())
                    without.append(seconds_per_step())
                else:
                    without.append(seconds_per_step())
                    with_watcher.append(watched())
    return without, with_watcher


PARTS: dict[str, Callable[[argparse.Namespace], list[Row]]] = {
    "start": bench_start,
    "placement": bench_placement,
    "watcher": bench_watcher,
}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--part", action="append", choices=sorted(PARTS), help="part(s) to run (default: all)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    args = p.parse_args()
    results = {}
    for part in args.part or list(PARTS):
        rows = PARTS[part](args)
        results[part] = [{"name": r.name, "median_s": r.median, "samples_s": r.samples, "note": r.note} for r in rows]
        if not args.json:
            print(f"== {part} (cpu count {os.cpu_count()}, load {os.getloadavg()[0]:.1f}) ==")
            for r in rows:
                spread = f"{min(r.samples):.3f}-{max(r.samples):.3f}"
                print(f"{r.name:42s} {r.median:7.3f} s  (n={len(r.samples)}, {spread})  {r.note}")
    if args.json:
        print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
