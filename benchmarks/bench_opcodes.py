"""Python bytecodes per training step in every process of the client layout: a count that does not drift.

Run: ``python benchmarks/bench_opcodes.py [--workload mlp|embedding|all] [--seconds S] [--top N]
[--baseline DIR] [--skeleton]``

Timings of the client layout (``bench_training.py --layout client``) move by 10-20% between runs on a shared 2-core
VM, more than most changes to a message's path are worth, so whether such a change helped took many alternating
rounds to tell. This benchmark counts instead: it runs the layout's MLP (2 ps, 1 worker, its client) or embedding (3
ps, 1 worker, its client) with every Python thread of every process traced (``sys.settrace`` with opcode events),
and reports the bytecodes each process executes per step over a window in the middle of the run, in all and by
function, and the calls they make into C functions (``sys.setprofile``'s ``c_call`` events: builtins and methods of
C types such as numpy's and torch's; not Cython-compiled functions such as pyzmq's sends and msgpack's packing, nor
operators), by function. The count is the same from run to run (within a few per cent: the loops' periodic ticks run
per second, not per step), so a change that removes work shows at once, in the process and function it touched. What
it does not see: the time spent in C (torch kernels, msgpack, ZeroMQ, the kernel; it counts the calls, not what each
costs), and how much a bytecode costs (a dict lookup and a call differ); so it guides work on the Python side of a
message's path, and timings (``bench_training.py``) still judge the result. Tracing slows every process several
times while it counts.

``--baseline DIR`` counts a second tree (a git worktree) the same way and prints both side by side.
``--skeleton`` also counts ``bench_floor.py``'s skeleton of the same steps (the same processes and messages on
bare pyzmq, no runtime): each of its processes samples its counts ten times a second, and its steps are the
messages it received over those each step sends it.

Example:
    >>> counter = _layout.OpcodeCounter()
    >>> counter.start(); _ = sorted([3, 1, 2], key=lambda v: -v); counter.stop()
    >>> any(name == "<lambda>" for (_, _, name) in counter.opcodes)
    True
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import signal
import sys
import tempfile
import threading
import time
from typing import Any

import _layout

HERE = os.path.abspath(__file__)
#: The function every step runs once in the worker task: its calls count the steps of the window.
STEP_FUNCTION = ("worker_service.py", "start_run_graph")


def serve_counted(out_dir: str, name: str, argv: list[str]) -> None:
    """``python -m dtf_notebook.server`` with every thread's bytecodes counted; SIGUSR1 starts the window (what was
    counted so far is dropped), SIGUSR2 writes ``out_dir/name.json``."""
    counter = _layout.OpcodeCounter()

    def start_window(*_: Any) -> None:
        counter.clear()

    def dump(*_: Any) -> None:
        with open(os.path.join(out_dir, f"{name}.json"), "w") as f:
            json.dump(counter.snapshot(), f)

    signal.signal(signal.SIGUSR1, start_window)
    signal.signal(signal.SIGUSR2, dump)
    import dtf_notebook.server as server_main

    counter.start()
    server_main.main(argv)


def count_skeleton_role(out_dir: str, argv: list[str]) -> None:
    """``python bench_floor.py --role ...`` with every thread's bytecodes and calls counted; ten times a second it
    appends ``[time, bytecodes, calls, calls into C, messages received]`` so far to ``out_dir/<role>.jsonl``."""
    import bench_floor

    role = argv[argv.index("--role") + 1]
    counter = _layout.OpcodeCounter()

    def received() -> int:
        return sum(
            n for (path, _, func), n in list(counter.calls.items()) if func == "recv" and path == bench_floor.__file__
        )

    def sample() -> None:  # started before the counter, so not counted itself
        with open(os.path.join(out_dir, f"{role}.jsonl"), "a") as f:
            while True:
                time.sleep(0.1)
                totals = [sum(list(c.values())) for c in (counter.opcodes, counter.calls, counter.c_calls)]
                f.write(json.dumps([time.monotonic(), *totals, received()]) + "\n")
                f.flush()

    threading.Thread(target=sample, daemon=True).start()
    counter.start()
    bench_floor.main(argv)


def measure_skeleton(workload: str, seconds: float) -> dict[str, Any]:
    """One counted run of ``bench_floor.py``'s skeleton of ``workload``: each process's counts per step over the
    middle half of the span in which it received messages."""
    import bench_floor

    receives = collections.Counter(to for _, to, _ in bench_floor.step_messages(workload, "dtf"))
    with tempfile.TemporaryDirectory(prefix="dtf-opcodes-skeleton-") as out_dir:
        data = _layout.digits_file(out_dir) if workload == "mlp" else ""
        launcher = [sys.executable, HERE, "--count-skeleton-role", out_dir]
        bench_floor.measure("skeleton", workload, 1, seconds, data, launcher=launcher)
        processes, steps = {}, []
        for role in receives:
            with open(os.path.join(out_dir, f"{role}.jsonl")) as f:
                samples = [json.loads(line) for line in f]
            busy = [i for i in range(1, len(samples)) if samples[i][4] > samples[i - 1][4]]
            if len(busy) < 8:
                raise RuntimeError(f"the skeleton's {role} received messages in only {len(busy)} samples")
            first, last = samples[busy[len(busy) // 4]], samples[busy[3 * len(busy) // 4]]
            role_steps = (last[4] - first[4]) / receives[role]
            steps.append(role_steps)
            opcodes, calls, c_calls = ((last[k] - first[k]) / role_steps for k in (1, 2, 3))
            name = "client" if role.startswith("client") else role
            processes[name] = {
                "opcodes": opcodes,
                "calls": calls,
                "functions": {},
                "c_calls": c_calls,
                "c_functions": {},
            }
    return {"steps": round(min(steps)), "processes": processes}


def measure(workload: str, seconds: float, path: str | None = None) -> dict[str, Any]:
    """One run of ``workload`` from the tree at ``path`` (None: this checkout): each process's counts per step."""
    env_before = os.environ.get("DTF_BENCH_OPCODES")
    with tempfile.TemporaryDirectory(prefix="dtf-opcodes-") as out_dir:
        launcher = [sys.executable, HERE, "--serve-counted", out_dir]
        os.environ["DTF_BENCH_OPCODES"] = out_dir  # the client counts its own run (see _layout._client)
        try:
            # (traced, start-up and warm-up take a while)
            counts, _ = _layout.windowed_run(workload, launcher, out_dir, seconds, settle=15.0, path=path)
        finally:
            if env_before is None:
                del os.environ["DTF_BENCH_OPCODES"]
            else:
                os.environ["DTF_BENCH_OPCODES"] = env_before
        with open(os.path.join(out_dir, "client-0.json")) as f:
            client_counts = json.load(f)
    steps = sum(
        n
        for path_, _, func, n in counts["worker0"]["calls"]
        if func == STEP_FUNCTION[1] and path_.endswith(STEP_FUNCTION[0])
    )
    per_step = {name: _per_step(c, steps) for name, c in counts.items()}
    per_step["client"] = _per_step(client_counts, client_counts["steps"])
    return {"steps": steps, "client_steps": client_counts["steps"], "processes": per_step}


def _per_step(counts: dict[str, Any], steps: int) -> dict[str, Any]:
    steps = max(steps, 1)
    functions: dict[str, float] = collections.defaultdict(float)
    for path, line, func, n in counts["opcodes"]:
        functions[f"{_short(path)}:{line} {func}"] += n / steps
    calls = sum(n for *_, n in counts["calls"]) / steps
    c_functions = {name: n / steps for name, n in counts.get("c_calls", [])}
    return {
        "opcodes": sum(functions.values()),
        "calls": calls,
        "functions": dict(functions),
        "c_calls": sum(c_functions.values()),
        "c_functions": c_functions,
    }


def _short(path: str) -> str:
    """``.../dtf_notebook/distributed/wire.py`` → ``distributed/wire.py``; other files by their name."""
    head, sep, tail = path.rpartition("dtf_notebook/")
    return tail if sep else os.path.basename(path)


def report(workload: str, runs: dict[str, dict[str, Any]], top: int) -> None:
    """Prints each tree's bytecodes, calls and calls into C per step by process, then the functions with the most
    bytecodes and the C functions called most."""
    trees = list(runs)
    names = list(next(iter(runs.values()))["processes"])
    print(
        f"\n{workload}: Python bytecodes per step (Python calls; calls into C), window of "
        + ", ".join(f"{runs[t]['steps']} steps ({t})" for t in trees)
    )
    compared = "baseline" in runs
    print(f"| process | {' | '.join(trees)} |" + (" change |" if compared else ""))
    print("| --- |" + " ---: |" * (len(trees) + compared))
    for name in names + ["all"]:
        cells = [
            f"{_count(runs[t], name, 'opcodes'):,.0f} ({_count(runs[t], name, 'calls'):,.0f}; "
            f"{_count(runs[t], name, 'c_calls'):,.0f})"
            for t in trees
        ]
        change = ""
        if compared:
            before, after = _count(runs["baseline"], name, "opcodes"), _count(runs[trees[0]], name, "opcodes")
            change = f" {after / before - 1:+.0%} |" if before else " |"
        print(f"| {name} | {' | '.join(cells)} |{change}")
    first = runs[trees[0]]["processes"]
    _print_top(first, "functions", f"Top {top} functions ({trees[0]}), bytecodes per step over all processes:", top, 0)
    _print_top(first, "c_functions", f"Top {top} C functions ({trees[0]}), calls per step over all processes:", top, 1)


def _count(run: dict[str, Any], name: str, key: str) -> float:
    """A process's count per step (``key``: opcodes, calls or c_calls), or all processes' when ``name`` is "all"."""
    procs = run["processes"]
    return sum(p[key] for p in (procs.values() if name == "all" else [procs[name]]))


def _print_top(processes: dict[str, Any], kind: str, title: str, top: int, decimals: int) -> None:
    """Prints the ``top`` entries of the processes' ``kind`` counts summed over processes, with each process's count."""
    merged: dict[str, float] = collections.defaultdict(float)
    for proc in processes.values():
        for func, n in proc[kind].items():
            merged[func] += n
    print(f"\n{title}")
    for func, n in sorted(merged.items(), key=lambda kv: -kv[1])[:top]:
        where = ", ".join(f"{p} {c[kind][func]:,.{decimals}f}" for p, c in processes.items() if func in c[kind])
        print(f"{n:9,.{decimals}f}  {func}  ({where})")


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--serve-counted":
        serve_counted(argv[1], argv[2], argv[3:])
        return
    if argv and argv[0] == "--count-skeleton-role":
        count_skeleton_role(argv[1], argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workload", choices=["mlp", "embedding", "all"], default="all")
    parser.add_argument("--seconds", type=float, default=4.0, help="length of the counted window")
    parser.add_argument("--top", type=int, default=25, help="functions listed")
    parser.add_argument("--baseline", default=None, help="also count the tree at this path (a git worktree)")
    parser.add_argument("--skeleton", action="store_true", help="also count bench_floor.py's skeleton")
    args = parser.parse_args(argv)
    for workload in ["mlp", "embedding"] if args.workload == "all" else [args.workload]:
        runs = {"this tree": measure(workload, args.seconds)}
        if args.baseline:
            runs["baseline"] = measure(workload, args.seconds, args.baseline)
        if args.skeleton:
            runs["skeleton"] = measure_skeleton(workload, args.seconds)
        report(workload, runs, args.top)


if __name__ == "__main__":
    main()
