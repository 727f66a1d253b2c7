"""What a user's first script gets: a fresh process that imports the library, loads the digits and trains the
seeds' 784-100-10 MLP with Adam in one process, timed in consecutive windows.

Run: ``python benchmarks/bench_user_script.py [--samples N] [--windows W] [--seconds S] [--no-tf] [--baseline DIR]``

Each sample is a fresh process running, in the order a notebook or script does:
``import dtf_notebook.compat.v1 as tf`` (or ``tensorflow.compat.v1``), ``load_digits_784()``, the graph (the
network of ``_layout.mlp_loss`` with ``tf.train.AdamOptimizer(1e-3)``), a session, and ``sess.run(train_op,
feed_dict=...)`` on batches of 100 for ``--windows`` windows of ``--seconds`` each. Unlike ``bench_local.py``
(which times the step in a process set up for timing), this catches what the order of a user's imports does: the
first window and the later ones are printed apart, since a process can start fast and slow down (as it did while
``load_digits_784`` imported scikit-learn's OpenMP runtime before torch's).

The libraries alternate sample by sample; ``--baseline DIR`` adds a third row, the same script run from another
checkout (a git worktree of an older commit), for before/after figures from one run.

Example:
    >>> summary([[100.0, 50.0, 52.0], [110.0, 60.0, 58.0]])["later"]
    55.0
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = """
import json, sys, time
lib, windows, seconds, benchmarks = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
if lib == "tf":
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()
else:
    import dtf_notebook.compat.v1 as tf
from dtf_notebook.datasets import batches, load_digits_784
x, y, _, _ = load_digits_784(seed=0)
sys.path.insert(0, benchmarks)  # the network every benchmark trains (after the library and the data, as a user's own)
from _layout import mlp_loss
with tf.Graph().as_default():
    tf.set_random_seed(0)
    xs, ys = tf.placeholder(tf.float32, [None, 784]), tf.placeholder(tf.int64, [None])
    train = tf.train.AdamOptimizer(1e-3).minimize(mlp_loss(tf, xs, ys))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        stream = batches(x, y, 100, seed=0)
        rates = []
        for _ in range(windows):
            start, steps = time.perf_counter(), 0
            while time.perf_counter() - start < seconds:
                xb, yb = next(stream)
                sess.run(train, {xs: xb, ys: yb})
                steps += 1
            rates.append(steps / (time.perf_counter() - start))
print(json.dumps(rates))
"""


def sample(lib: str, path: str, windows: int, seconds: float) -> list[float]:
    """Steps per second in each window of one fresh process, with the checkout ``path`` first on the import path."""
    env = dict(os.environ, PYTHONPATH=path + os.pathsep + os.environ.get("PYTHONPATH", ""), TF_CPP_MIN_LOG_LEVEL="3")
    command = [sys.executable, "-c", SCRIPT, lib, str(windows), str(seconds), os.path.join(REPO, "benchmarks")]
    done = subprocess.run(command, env=env, cwd=path, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"{lib} sample failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def summary(samples: list[list[float]]) -> dict[str, float]:
    """Medians over the samples of the first window and of the later windows (each sample's own median)."""
    return {
        "first": statistics.median(s[0] for s in samples),
        "later": statistics.median(statistics.median(s[1:]) for s in samples),
        "later_min": min(min(s[1:]) for s in samples),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=3, help="fresh processes per row")
    parser.add_argument("--windows", type=int, default=5, help="timed windows per process")
    parser.add_argument("--seconds", type=float, default=1.5, help="seconds per window")
    parser.add_argument("--no-tf", action="store_true", help="skip TensorFlow even when it is installed")
    parser.add_argument("--baseline", help="also run dtf_notebook from this checkout (e.g. a git worktree)")
    args = parser.parse_args()
    if args.windows < 2:
        parser.error("--windows must be at least 2 (the first window is reported apart)")
    rows = [("dtf_notebook", "dtf", REPO)]
    if args.baseline:
        rows.append((f"dtf_notebook at {args.baseline}", "dtf", os.path.abspath(args.baseline)))
    if not args.no_tf:
        if importlib.util.find_spec("tensorflow") is None:
            print("TensorFlow is not installed: its row is left out")
        else:
            rows.append(("TensorFlow", "tf", REPO))
    results: dict[str, list[list[float]]] = {name: [] for name, _, _ in rows}
    for _ in range(args.samples):
        for name, lib, path in rows:
            results[name].append(sample(lib, path, args.windows, args.seconds))
    print(f"{args.samples} fresh processes per row, {args.windows} windows of {args.seconds} s each; steps/s")
    print(f"| {'row':40s} | first window | later windows (median) | slowest later window |")
    print(f"| {'-' * 40} | ---: | ---: | ---: |")
    for name, samples in results.items():
        s = summary(samples)
        print(f"| {name:40s} | {s['first']:,.0f} | {s['later']:,.0f} | {s['later_min']:,.0f} |")


if __name__ == "__main__":
    main()
