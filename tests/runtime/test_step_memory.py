"""A step's peak memory does not grow with its length: each value is dropped after its last consumer.

Each chain runs in a process of its own, so its peak resident memory (``ru_maxrss``) is its own.
"""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MIB = 2**20

CHAIN = """
import resource, sys
import numpy as np
import dtf_notebook.compat.v1 as tf

x = tf.placeholder(tf.float32, [4 * 2**20])  # 16 MiB
y = x
for _ in range(int(sys.argv[1])):
    y = y * 1.0001 + 0.5  # two new 16 MiB values per link
total = tf.reduce_sum(y)
feed = np.ones(4 * 2**20, np.float32)
with tf.Session() as sess:
    for _ in range(3):
        sess.run(total, {x: feed})
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def peak_bytes(links: int) -> int:
    # glibc keeps freed large blocks for reuse once it has seen one freed (its dynamic mmap threshold), so the
    # resident size would also measure the allocator's cache and fragmentation; a fixed threshold returns every
    # large block on free, and the peak is then what the step held.
    env = {**os.environ, "PYTHONPATH": ROOT, "MALLOC_MMAP_THRESHOLD_": str(MIB)}
    done = subprocess.run(
        [sys.executable, "-c", CHAIN, str(links)], env=env, capture_output=True, text=True, timeout=300, check=True
    )
    return int(done.stdout.split()[-1])


def test_peak_memory_of_a_chain_stays_within_a_few_intermediates_of_a_short_one():
    short, long = peak_bytes(2), peak_bytes(40)  # 4 and 80 intermediate values of 16 MiB
    # Kept all, the 40-link chain would hold 76 more values (1.2 GiB); dropped, a few at most.
    assert long - short < 5 * 16 * MIB, f"peak {short / MIB:.0f} MiB for 2 links, {long / MIB:.0f} MiB for 40"
