"""Local single-process benchmark: dtf_notebook's session against PyTorch, a plain Python loop and TensorFlow.

It times, in one run (each section can be picked with ``--sections``):

``mlp``
    (a) ``graph``: the 784-100-10 MLP training step (batch 100, float32, plain SGD lr 0.1, mean sparse softmax
    cross-entropy) built with ``import dtf_notebook.compat.v1 as tf`` and run as
    ``sess.run(train_op, feed_dict={x: xb, y: yb})`` with the same numpy batch fed every step;
    (b) ``eager``: the identical step in plain PyTorch eager mode (explicit parameter tensors, autograd,
    ``F.cross_entropy``, ``torch.optim.SGD``), converting the same numpy batch with ``torch.from_numpy`` each step;
    (c) ``no_op`` / ``const``: the per-call overhead of ``sess.run(tf.no_op())`` and of fetching a tiny constant.
    Each measurement is ``--steps`` calls; the figure is the median over ``--repeats`` repeats (min and max shown)
    after ``--warmup`` untimed calls; repeats of (a) and (b) are interleaved so that machine noise hits both alike.
``loop``
    (d) ``tf.while_loop(lambda i, x: i < N, lambda i, x: (i + 1, x * 1.0001 + 0.5), [0, tf.zeros([4])])`` with
    ``--iterations`` N, in microseconds per iteration: dtf_notebook (plain loops compiled to serial sub-plans),
    dtf_notebook with every frame run step by step by the dataflow executor, TensorFlow (TF1 control flow), and a
    plain Python ``while`` loop of the same torch ops.
``branches``
    (e) two independent chains of ``--links`` ``--size`` x ``--size`` float32 matmuls, fetched as two sums, with
    ``inter_op_parallelism_threads`` 1 and 2 and ``intra_op_parallelism_threads`` 1 (so that one matmul does not
    already take every core), on dtf_notebook and TensorFlow, beside the same matmuls on 1 and 2 plain Python
    threads (what the machine allows at that moment: other processes take cores too).
``memory``
    (f) peak resident memory of one step against its length: a chain of pairs of elementwise ops
    (``y = y * 1.0001 + 0.5``) over a fed 16 MiB float32 vector, reduced to a scalar; ``serial`` as it is,
    ``dataflow`` with a ``tf.cond`` in the middle (so the whole step runs on the dataflow executor). Each
    (runtime, chain, length) runs in a fresh process with ``MALLOC_MMAP_THRESHOLD_`` set, so that freed large blocks
    go back to the system and the peak is what the step held.

TensorFlow (``tensorflow.compat.v1``, eager execution and control flow v2 disabled) is left out with ``--no-tf`` or
when it is not installed. Both sides use the same ``torch.set_num_threads`` setting (``--threads``).

Usage::

    python benchmarks/bench_local.py                       # every section
    python benchmarks/bench_local.py --sections mlp --threads 1 --steps 500
    python benchmarks/bench_local.py --sections loop branches --no-tf

Results are collected in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

# Allow `python benchmarks/bench_local.py` from a checkout that is not pip-installed, and loading this file by path
# (the tests do) beside _common.py.
_REPO_ROOT = Path(__file__).resolve().parent.parent
for _path in (_REPO_ROOT, _REPO_ROOT / "benchmarks"):
    if str(_path) not in sys.path:
        sys.path.append(str(_path))

from _common import timed  # noqa: E402

import dtf_notebook  # noqa: E402
import dtf_notebook.compat.v1 as tf  # noqa: E402
from dtf_notebook.runtime import dataflow  # noqa: E402

N_IN, N_HIDDEN, N_OUT = 784, 100, 10
LEARNING_RATE = 0.1
SECTIONS = ("mlp", "loop", "branches", "memory")
MIB = 2**20


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=200, help="calls per timed repeat (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=7, help="timed repeats; the median is reported")
    parser.add_argument("--warmup", type=int, default=20, help="untimed calls before timing (default: %(default)s)")
    parser.add_argument("--batch-size", type=int, default=100, help="examples per step (default: %(default)s)")
    parser.add_argument(
        "--threads", type=int, default=None, help="torch.set_num_threads for both sides (default: torch's default)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sections", nargs="+", choices=SECTIONS, default=list(SECTIONS), help="what to time")
    parser.add_argument("--iterations", type=int, default=1000, help="while_loop iterations (default: %(default)s)")
    parser.add_argument("--size", type=int, default=1024, help="matrix side of (e) (default: %(default)s)")
    parser.add_argument("--links", type=int, default=4, help="matmuls per branch of (e) (default: %(default)s)")
    parser.add_argument(
        "--chain", type=int, nargs="+", default=[2, 10, 40], help="chain lengths of (f) (default: 2 10 40)"
    )
    parser.add_argument("--no-tf", action="store_true", help="leave TensorFlow out")
    args = parser.parse_args(argv)
    if args.steps <= 0 or args.repeats <= 0 or args.warmup < 0 or args.batch_size <= 0:
        parser.error("--steps, --repeats and --batch-size must be > 0 and --warmup >= 0")
    return args


def fixed_batch(batch_size: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """One float32/int64 batch of the real digits data (random data if scikit-learn is unavailable)."""
    try:
        from dtf_notebook.datasets import load_digits_784

        x_train, y_train, _, _ = load_digits_784(seed=seed)
        idx = np.arange(batch_size) % len(x_train)
        return np.ascontiguousarray(x_train[idx]), np.ascontiguousarray(y_train[idx])
    except ImportError:
        rng = np.random.default_rng(seed)
        return rng.random((batch_size, N_IN), dtype=np.float32), rng.integers(0, N_OUT, batch_size, dtype=np.int64)


def build_graph_side(xb: np.ndarray, yb: np.ndarray, seed: int) -> tuple[object, dict[str, Callable[[], object]]]:
    """Build the TF1 graph; return the open session and the callables to time."""
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(seed)
        x = tf.placeholder(tf.float32, [None, N_IN], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")
        weights_1 = tf.get_variable("weights_1", [N_IN, N_HIDDEN])
        biases_1 = tf.get_variable("biases_1", [N_HIDDEN], initializer=tf.zeros_initializer())
        weights_2 = tf.get_variable("weights_2", [N_HIDDEN, N_OUT])
        biases_2 = tf.get_variable("biases_2", [N_OUT], initializer=tf.zeros_initializer())
        hidden = tf.nn.relu(tf.matmul(x, weights_1) + biases_1)
        logits = tf.matmul(hidden, weights_2) + biases_2
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        train_op = tf.train.GradientDescentOptimizer(LEARNING_RATE).minimize(loss)
        noop = tf.no_op()
        tiny = tf.constant(1.0)
        init_op = tf.global_variables_initializer()
    sess = tf.Session(graph=graph)
    sess.run(init_op)
    feed = {x: xb, y: yb}
    fns = {
        "graph": lambda: sess.run(train_op, feed_dict=feed),
        "no_op": lambda: sess.run(noop),
        "const": lambda: sess.run(tiny),
        "loss": lambda: sess.run(loss, feed_dict=feed),
    }
    return sess, fns


def build_eager_side(xb: np.ndarray, yb: np.ndarray, seed: int) -> dict[str, Callable[[], object]]:
    """The same step in plain PyTorch eager mode."""
    gen = torch.Generator().manual_seed(seed)

    def glorot(fan_in: int, fan_out: int) -> torch.Tensor:
        limit = (6.0 / (fan_in + fan_out)) ** 0.5
        return ((torch.rand(fan_in, fan_out, generator=gen) * 2 - 1) * limit).requires_grad_()

    w1, b1 = glorot(N_IN, N_HIDDEN), torch.zeros(N_HIDDEN, requires_grad=True)
    w2, b2 = glorot(N_HIDDEN, N_OUT), torch.zeros(N_OUT, requires_grad=True)
    opt = torch.optim.SGD([w1, b1, w2, b2], lr=LEARNING_RATE)

    def forward(x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x @ w1 + b1) @ w2 + b2

    def step() -> None:
        x, y = torch.from_numpy(xb), torch.from_numpy(yb)
        loss = F.cross_entropy(forward(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    def eval_loss() -> float:
        with torch.no_grad():
            return F.cross_entropy(forward(torch.from_numpy(xb)), torch.from_numpy(yb)).item()

    return {"eager": step, "eager_loss": eval_loss}


def time_calls(fn: Callable[[], object], steps: int) -> float:
    """Seconds per call, averaged over ``steps`` back-to-back calls."""
    start = time.perf_counter()
    for _ in range(steps):
        fn()
    return (time.perf_counter() - start) / steps


def mlp_section(args: argparse.Namespace) -> dict[str, dict[str, float]]:
    """(a)-(c): the MLP step against PyTorch eager, and the per-call overhead; prints and returns the figures."""
    xb, yb = fixed_batch(args.batch_size, args.seed)
    sess, graph_fns = build_graph_side(xb, yb, args.seed)
    eager_fns = build_eager_side(xb, yb, args.seed)
    try:
        # Sanity: both sides really train (loss goes down over the warm-up).
        graph_loss0, eager_loss0 = float(graph_fns["loss"]()), eager_fns["eager_loss"]()
        for _ in range(max(args.warmup, 1)):
            graph_fns["graph"]()
            eager_fns["eager"]()
        for _ in range(max(args.warmup, 1)):
            graph_fns["no_op"]()
            graph_fns["const"]()
        graph_loss1, eager_loss1 = float(graph_fns["loss"]()), eager_fns["eager_loss"]()

        samples: dict[str, list[float]] = {"graph": [], "eager": [], "no_op": [], "const": []}
        for rep in range(args.repeats):
            # Interleave (a) and (b), alternating which goes first, so drifts and noise hit both.
            order = ("graph", "eager") if rep % 2 == 0 else ("eager", "graph")
            for name in order:
                fn = graph_fns["graph"] if name == "graph" else eager_fns["eager"]
                samples[name].append(time_calls(fn, args.steps))
            samples["no_op"].append(time_calls(graph_fns["no_op"], args.steps))
            samples["const"].append(time_calls(graph_fns["const"], args.steps))
    finally:
        sess.close()

    stats = {name: {"median": statistics.median(v), "min": min(v), "max": max(v)} for name, v in samples.items()}
    ratio = stats["graph"]["median"] / stats["eager"]["median"]

    labels = {
        "graph": "(a) dtf_notebook sess.run(train_op, feed)",
        "eager": "(b) PyTorch eager step",
        "no_op": "(c) sess.run(tf.no_op())",
        "const": "(c) sess.run(tf.constant(1.0))",
    }
    print("(a)-(c) 784-100-10 MLP, SGD lr 0.1, float32")
    print(
        f"batch {args.batch_size}  steps/repeat {args.steps}  repeats {args.repeats}  warmup {args.warmup}  "
        "(median over repeats; min/max shown)"
    )
    print(f"sanity: loss graph {graph_loss0:.4f} -> {graph_loss1:.4f}, eager {eager_loss0:.4f} -> {eager_loss1:.4f}")
    print()
    w = max(len(s) for s in labels.values())
    header = f"{'measurement':<{w}}  {'median us':>10}  {'min us':>10}  {'max us':>10}  {'calls/s':>10}"
    print(header)
    print("-" * len(header))
    for name, label in labels.items():
        s = stats[name]
        print(
            f"{label:<{w}}  {s['median'] * 1e6:>10.1f}  {s['min'] * 1e6:>10.1f}  {s['max'] * 1e6:>10.1f}  "
            f"{1.0 / s['median']:>10.0f}"
        )
    print("-" * len(header))
    print(f"{'ratio (a)/(b)':<{w}}  {ratio:>10.2f}x")
    overhead = stats["graph"]["median"] - stats["eager"]["median"]
    print(f"{'graph overhead per step (a)-(b)':<{w}}  {overhead * 1e6:>10.1f}  us")
    stats["ratio"] = {"graph_over_eager": ratio}
    return stats


# ---- (d) a while loop ----------------------------------------------------------------------------------------------


def loop_seconds(lib: Any, iterations: int, repeats: int) -> float:
    """Median seconds of one run of the benchmark's while loop on ``lib``."""
    with lib.Graph().as_default():
        loop = lib.while_loop(lambda i, x: i < iterations, lambda i, x: (i + 1, x * 1.0001 + 0.5), [0, lib.zeros([4])])
        with lib.Session() as sess:
            return timed(lambda: sess.run(loop), repeats, warmup=2, min_seconds=1.0)


def loop_seconds_step_by_step(iterations: int, repeats: int) -> float | None:
    """The same on dtf_notebook with plain loops run step by step (None where the executor has no serial loops)."""
    if not hasattr(dataflow, "plan_serial_loops"):
        return None
    compile_loops = dataflow.plan_serial_loops
    dataflow.plan_serial_loops = lambda *args, **kwargs: {}
    try:
        return loop_seconds(tf, iterations, repeats)
    finally:
        dataflow.plan_serial_loops = compile_loops


def python_loop_seconds(iterations: int, repeats: int) -> float:
    """Median seconds of the same loop as a plain Python ``while`` over the same torch ops."""

    def run() -> None:
        i, x = torch.tensor(0, dtype=torch.int32), torch.zeros(4)
        n, one = torch.tensor(iterations, dtype=torch.int32), torch.tensor(1, dtype=torch.int32)
        a, b = torch.tensor(1.0001), torch.tensor(0.5)
        while bool(torch.less(i, n)):
            i = torch.add(i, one)
            x = torch.add(torch.mul(x, a), b)

    return timed(run, repeats, warmup=2, min_seconds=1.0)


def loop_section(args: argparse.Namespace, real: Any) -> dict[str, float | None]:
    """(d): microseconds per iteration of the while loop; prints and returns them."""
    n = args.iterations
    per_iteration = {
        "dtf": loop_seconds(tf, n, args.repeats) / n,
        "dtf_step_by_step": _per(loop_seconds_step_by_step(n, args.repeats), n),
        "tf": _per(loop_seconds(real, n, args.repeats), n) if real is not None else None,
        "python": python_loop_seconds(n, args.repeats) / n,
    }
    print(f"(d) tf.while_loop of {n} iterations (i + 1, x * 1.0001 + 0.5 over 4 floats), us per iteration")
    labels = {
        "dtf": "dtf_notebook (plain loop run serially)",
        "dtf_step_by_step": "dtf_notebook (every frame step by step)",
        "tf": "TensorFlow (TF1 control flow)",
        "python": "plain Python loop of the same torch ops",
    }
    for key, label in labels.items():
        print(f"{label:<42}  {_us(per_iteration[key]):>8}")
    return per_iteration


# ---- (e) independent heavy branches --------------------------------------------------------------------------------


def branches_seconds(lib: Any, size: int, links: int, inter_op: int, repeats: int) -> float:
    """Median seconds of one run of two independent matmul chains."""
    rng = np.random.default_rng(0)
    with lib.Graph().as_default():
        sums = []
        for branch in range(2):
            # Variables, not constants: TensorFlow would fold a constant chain away before the first run.
            y = lib.Variable(rng.standard_normal((size, size), dtype=np.float32), name=f"start{branch}")
            w = lib.Variable((rng.standard_normal((size, size)) / np.sqrt(size)).astype(np.float32), name=f"w{branch}")
            for _ in range(links):
                y = lib.matmul(y, w)
            sums.append(lib.reduce_sum(y))
        config = lib.ConfigProto(inter_op_parallelism_threads=inter_op, intra_op_parallelism_threads=1)
        init = lib.global_variables_initializer()
        with lib.Session(config=config) as sess:
            sess.run(init)
            return timed(lambda: sess.run(sums), repeats, warmup=3, min_seconds=2.0)


def python_threads_seconds(size: int, links: int, threads: int, repeats: int) -> float:
    """Median seconds of the same two matmul chains in plain torch, on 1 or 2 Python threads of one torch thread
    each: what the machine allows at the moment (other processes take cores too)."""
    rng = np.random.default_rng(0)
    chains = [
        (torch.from_numpy(rng.standard_normal((size, size), dtype=np.float32)), torch.randn(size, size) / size**0.5)
        for _ in range(2)
    ]

    def chain(y: torch.Tensor, w: torch.Tensor) -> None:
        torch.set_num_threads(1)
        for _ in range(links):
            y = y @ w
        y.sum()

    def run() -> None:
        if threads == 1:
            for y, w in chains:
                chain(y, w)
            return
        workers = [threading.Thread(target=chain, args=pair) for pair in chains]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()

    before = torch.get_num_threads()
    try:
        return timed(run, repeats, warmup=3, min_seconds=2.0)
    finally:
        torch.set_num_threads(before)


def branches_section(args: argparse.Namespace, real: Any) -> dict[str, float | None]:
    """(e): two independent chains with 1 and 2 inter-op threads; prints and returns the seconds."""
    results: dict[str, float | None] = {}
    for threads in (1, 2):
        results[f"dtf{threads}"] = branches_seconds(tf, args.size, args.links, threads, args.repeats)
        results[f"tf{threads}"] = (
            branches_seconds(real, args.size, args.links, threads, args.repeats) if real is not None else None
        )
        results[f"python{threads}"] = python_threads_seconds(args.size, args.links, threads, args.repeats)
    print(f"(e) two independent chains of {args.links} matmuls {args.size}x{args.size}, intra-op threads 1, ms")
    print(f"{'inter-op threads':<18}  {'dtf_notebook':>12}  {'TensorFlow':>12}  {'Python threads':>14}")
    for threads in (1, 2):
        row = [_ms(results[f"{lib}{threads}"]) for lib in ("dtf", "tf", "python")]
        print(f"{threads:<18}  {row[0]:>12}  {row[1]:>12}  {row[2]:>14}")
    speedups = [_ratio(results[f"{lib}1"], results[f"{lib}2"]) for lib in ("dtf", "tf", "python")]
    print(f"{'speed-up 1 -> 2':<18}  {speedups[0]:>12}  {speedups[1]:>12}  {speedups[2]:>14}")
    return results


# ---- (f) peak memory against a step's length -----------------------------------------------------------------------

CHAIN = """
import resource, sys
import numpy as np
if sys.argv[1] == "tf":
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()
    tf.disable_control_flow_v2()
else:
    import dtf_notebook.compat.v1 as tf
links, flow = int(sys.argv[2]), sys.argv[3] == "1"
x = tf.placeholder(tf.float32, [4 * 2**20])  # 16 MiB
take = tf.placeholder_with_default(True, [])
y = x
for k in range(links):
    y = y * 1.0001 + 0.5
    if flow and k == links // 2:
        y = tf.cond(take, lambda: y * 2.0, lambda: y)  # a cond: the whole step runs on the dataflow executor
total = tf.reduce_sum(y)
feed = np.ones(4 * 2**20, np.float32)
with tf.Session() as sess:
    for _ in range(3):
        sess.run(total, {x: feed})
# VmHWM: this process's peak since exec (ru_maxrss would carry over the parent's peak across exec).
with open("/proc/self/status") as status:
    peak = [int(line.split()[1]) for line in status if line.startswith("VmHWM:")]
print((peak[0] if peak else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024)
"""


def peak_mib(runtime: str, links: int, flow: bool = False) -> float:
    """Peak resident MiB of a fresh process running the chain of ``links`` links on ``runtime`` ("dtf" or "tf");
    ``flow`` puts a ``tf.cond`` in the middle of it.

    Example:
        >>> 50 < peak_mib("dtf", 2) < 2000  # doctest: +SKIP
        True
    """
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(dtf_notebook.__file__)))  # the one timed here
    env = {**os.environ, "PYTHONPATH": package_root, "TF_CPP_MIN_LOG_LEVEL": "3"}
    env["MALLOC_MMAP_THRESHOLD_"] = str(MIB)  # freed large blocks go back to the system: the peak is what was held
    done = subprocess.run(
        [sys.executable, "-c", CHAIN, runtime, str(links), "1" if flow else "0"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout.split()[-1]) / MIB


def memory_section(args: argparse.Namespace, real: Any) -> dict[str, list[float]]:
    """(f): peak MiB against chain length, each chain in a fresh process; prints and returns them."""
    runtimes = ["dtf"] + (["tf"] if real is not None else [])
    rows = {
        f"{r} {'dataflow' if flow else 'serial'}": [peak_mib(r, n, flow) for n in args.chain]
        for r in runtimes
        for flow in (False, True)
    }
    print("(f) peak resident memory of one step against its length (16 MiB vector, fixed malloc mmap threshold)")
    print(f"{'runtime, chain':<22}" + "".join(f"{f'{n} links':>12}" for n in args.chain))
    for label, peaks in rows.items():
        print(f"{label:<22}" + "".join(f"{p:>8.0f} MiB" for p in peaks))
    return rows


# ---- the run -------------------------------------------------------------------------------------------------------


def _per(secs: float | None, n: int) -> float | None:
    return None if secs is None else secs / n


def _us(secs: float | None) -> str:
    return "-" if secs is None else f"{secs * 1e6:.2f}"


def _ms(secs: float | None) -> str:
    return "-" if secs is None else f"{secs * 1e3:.1f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or b is None else f"{a / b:.2f}x"


def real_tf(wanted: bool) -> Any:
    """``tensorflow.compat.v1`` in graph mode with TF1 control flow, or None (not wanted, or not installed)."""
    if not wanted:
        return None
    try:
        import tensorflow
    except ImportError:
        return None
    real = tensorflow.compat.v1
    real.disable_eager_execution()
    real.disable_control_flow_v2()
    return real


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    real = real_tf(not args.no_tf and args.sections != ["mlp"])
    print("dtf_notebook local benchmark")
    print(
        f"python {platform.python_version()}  torch {torch.__version__}  threads {torch.get_num_threads()}  "
        f"numpy {np.__version__}  tensorflow {real.__version__ if real is not None else '-'}  cpus {os.cpu_count()}  "
        f"machine {platform.machine()}"
    )
    sections = {"mlp": lambda: mlp_section(args), "loop": lambda: loop_section(args, real)}
    sections["branches"] = lambda: branches_section(args, real)
    sections["memory"] = lambda: memory_section(args, real)
    results = {}
    for name in SECTIONS:
        if name in args.sections:
            print()
            results[name] = sections[name]()
    return results


if __name__ == "__main__":
    main()
