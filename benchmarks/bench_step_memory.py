"""Peak memory of one step against its length: dtf_notebook and TensorFlow side by side.

The step is a chain of ``links`` pairs of elementwise ops (``y = y * 1.0001 + 0.5``) over a fed 16 MiB float32
vector, reduced to a scalar. A runtime that keeps every intermediate value until the step ends needs 32 MiB
more per link; one that drops each value after its last consumer stays flat. Each (runtime, length) runs in
a fresh process, which reports its peak resident size (``ru_maxrss``) after three steps.

glibc's default allocator keeps freed large blocks for reuse once it has seen one freed, so the resident size
also holds the allocator's cache; ``--fixed-mmap`` sets ``MALLOC_MMAP_THRESHOLD_`` so that every large block
goes back to the system when freed, and the peak is what the step held.

Usage::

    python benchmarks/bench_step_memory.py                 # lengths 2 10 40, both allocator settings
    python benchmarks/bench_step_memory.py --links 2 40 --no-tf

Results are collected in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

_REPO_ROOT = Path(__file__).resolve().parent.parent
MIB = 2**20

CHAIN = """
import resource, sys
import numpy as np
if sys.argv[1] == "tf":
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()
else:
    import dtf_notebook.compat.v1 as tf
x = tf.placeholder(tf.float32, [4 * 2**20])  # 16 MiB
y = x
for _ in range(int(sys.argv[2])):
    y = y * 1.0001 + 0.5
total = tf.reduce_sum(y)
feed = np.ones(4 * 2**20, np.float32)
with tf.Session() as sess:
    for _ in range(3):
        sess.run(total, {x: feed})
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def peak_mib(runtime: str, links: int, fixed_mmap: bool) -> float:
    """Peak resident MiB of a fresh process running the chain of ``links`` links on ``runtime``."""
    env = {**os.environ, "PYTHONPATH": str(_REPO_ROOT), "TF_CPP_MIN_LOG_LEVEL": "3"}
    if fixed_mmap:
        env["MALLOC_MMAP_THRESHOLD_"] = str(MIB)
    done = subprocess.run(
        [sys.executable, "-c", CHAIN, runtime, str(links)], env=env, capture_output=True, text=True, check=True
    )
    return int(done.stdout.split()[-1]) / MIB


def main(argv: list[str] | None = None) -> list[tuple]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--links", type=int, nargs="+", default=[2, 10, 40], help="chain lengths (default 2 10 40)")
    parser.add_argument("--no-tf", action="store_true", help="leave TensorFlow out")
    args = parser.parse_args(argv)
    runtimes = ["dtf"] + ([] if args.no_tf else ["tf"])
    rows = []
    print(f"{'allocator':<16}{'runtime':<9}" + "".join(f"{f'{n} links':>12}" for n in args.links))
    for fixed in (False, True):
        for runtime in runtimes:
            peaks = [peak_mib(runtime, n, fixed) for n in args.links]
            rows.append((fixed, runtime, peaks))
            label = "fixed mmap" if fixed else "glibc default"
            print(f"{label:<16}{runtime:<9}" + "".join(f"{p:>8.0f} MiB" for p in peaks))
    return rows


if __name__ == "__main__":
    main()
