"""Local single-process benchmark: a TF1-style graph training step on dtf_notebook vs the same step in PyTorch.

It times, in one run:

(a) ``graph``: the 784-100-10 MLP training step (batch 100, float32, plain SGD lr 0.1, mean sparse softmax
    cross-entropy) built with ``import dtf_notebook.compat.v1 as tf`` and run as
    ``sess.run(train_op, feed_dict={x: xb, y: yb})`` with the same numpy batch fed every step;
(b) ``eager``: the identical step in plain PyTorch eager mode (explicit parameter tensors, autograd,
    ``F.cross_entropy``, ``torch.optim.SGD``), converting the same numpy batch with ``torch.from_numpy`` each step;
(c) ``no_op`` / ``const``: the per-call overhead of ``sess.run(tf.no_op())`` and of fetching a tiny constant.

Each measurement is ``--steps`` calls timed with ``time.perf_counter``; the reported figure is the median over
``--repeats`` repeats (min and max are shown too) after ``--warmup`` untimed calls. Repeats of (a) and (b) are
interleaved so that machine noise hits both alike. Both sides use the same ``torch.set_num_threads`` setting.

Usage::

    python benchmarks/bench_local.py                       # defaults: --steps 200 --repeats 7
    python benchmarks/bench_local.py --threads 1 --steps 500

Results are collected in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

# Allow `python benchmarks/bench_local.py` from a checkout that is not pip-installed.
_REPO_ROOT = Path(__file__).resolve().parent.parent
if str(_REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(_REPO_ROOT))

import dtf_notebook.compat.v1 as tf  # noqa: E402

N_IN, N_HIDDEN, N_OUT = 784, 100, 10
LEARNING_RATE = 0.1


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


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    args = parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    threads = torch.get_num_threads()

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
    print("dtf_notebook local benchmark: 784-100-10 MLP, SGD lr 0.1, float32")
    print(
        f"python {platform.python_version()}  torch {torch.__version__}  threads {threads}  "
        f"numpy {np.__version__}  machine {platform.machine()}"
    )
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


if __name__ == "__main__":
    main()
