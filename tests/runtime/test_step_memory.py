"""A step's peak memory does not grow with its length: each value is dropped after its last consumer.

Each chain runs in a process of its own (``benchmarks/bench_step_memory.py``'s, which also runs TF beside it),
so its peak resident memory is its own; glibc is told to return every freed large block, so the peak is what
the step held, not what the allocator kept for later.
"""

from __future__ import annotations

import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location(
    "bench_step_memory", os.path.join(ROOT, "benchmarks", "bench_step_memory.py")
)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_peak_memory_of_a_chain_stays_within_a_few_intermediates_of_a_short_one():
    short, long = bench.peak_mib("dtf", 2, fixed_mmap=True), bench.peak_mib("dtf", 40, fixed_mmap=True)
    # Kept all, the 40-link chain would hold 76 more values of 16 MiB (1.2 GiB); dropped, a few at most.
    assert long - short < 5 * 16, f"peak {short:.0f} MiB for 2 links, {long:.0f} MiB for 40"
