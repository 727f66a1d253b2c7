"""Where a distributed step's CPU goes inside each task, stage by stage, against the same code in a tight loop.

Runs the client-process layout of ``bench_training.py`` (every task a server process, the worker's training script
a client process of its own) with the async MLP (2 ps + 1 worker) or the partitioned embedding (3 ps + 1 worker),
and times, inside every task, the stages each message of a step goes through: decoding it, checking a
``RunGraph`` and starting its plan, delivering pushed tensors, running ops, pushing tensors to other tasks, replying,
and ZeroMQ's send calls. Each stage is timed with the calling thread's CPU clock (``time.thread_time_ns``) and the
wall clock over a window of the run, and reported per step. Stages nest (decoding is part of handling a message),
so the rows do not add up; "loop thread" is the whole of the task's event-loop thread's CPU.

The second table times the decode and encode of one of the step's own messages (a ``SendTensor`` of two small
tensors) in a tight loop in this process: the same code, with its instructions and data in the CPU's caches. The
ratio between the two is what running among the step's other processes and threads on two cores costs: each task
runs a few dozen microseconds between switches, and starts each message with cold caches.

Usage::

    python benchmarks/bench_step_stages.py [--workload mlp|embedding] [--seconds 3] [--rounds 2]

Example:
    >>> per_step({"decode": [10, 2_000_000, 3_000_000]}, steps=5)["decode"]
    (2.0, 400.0, 600.0)
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

import _layout

HERE = os.path.abspath(__file__)

# (label, module, class, method): each is timed inclusively, per call, on whichever thread runs it.
STAGES = [
    ("handle a message (all of it)", "dtf_notebook.distributed.service_socket", "ServiceSocket", "_receive"),
    ("  decode it", "dtf_notebook.distributed.wire_stream", "StreamAssembler", "feed"),
    ("  check a RunGraph, find its graph", "dtf_notebook.distributed.worker_service", "WorkerService", "_prepare"),
    ("  start a partition's plan", "dtf_notebook.runtime.local_backend", "LocalBackend", "start"),
    ("  deliver pushed tensors", "dtf_notebook.distributed.worker_service", "WorkerService", "send_tensor"),
    ("run ops until a wait or the end", "dtf_notebook.runtime.local_backend", "BackendRun", "resume"),
    ("push tensors to tasks (encode, send)", "dtf_notebook.distributed.outbox", "Outbox", "flush"),
    ("reply (encode, send)", "dtf_notebook.distributed.service_socket", "Reply", "ok"),
    ("ZeroMQ send calls (per frame)", "zmq.sugar.socket", "Socket", "send"),
]
STEP_STAGE = "start a partition's plan"  # the worker starts one plan per step: its calls count the steps
SMALL_PUSH = "decode a SendTensor under 64 KiB"  # what the tight loop decodes: the like-for-like comparison


def _small_push(message: Any, frames: Any) -> bool:
    """Whether a decoded message is a ``SendTensor`` of under 64 KiB (frames: the received buffers)."""
    if message is None or message[0].get("method") != "SendTensor":
        return False
    return sum(memoryview(f).nbytes for f in frames) < 1 << 16


def per_step(totals: dict[str, list[int]], steps: int) -> dict[str, tuple[float, float, float]]:
    """``{stage: [calls, cpu ns, wall ns]}`` as ``{stage: (calls, cpu us, wall us)}`` per step."""
    return {k: (calls / steps, cpu / steps / 1e3, wall / steps / 1e3) for k, (calls, cpu, wall) in totals.items()}


def serve_timed(name: str, out_dir: str, argv: list[str]) -> None:
    """``python -m dtf_notebook.server`` with every stage of :data:`STAGES` timed. SIGUSR1 starts the window (the
    counts so far are dropped), SIGUSR2 writes ``out_dir/name.json`` (the stages and the loop thread's CPU)."""
    import importlib

    totals: dict[str, list[int]] = {}
    lock = threading.Lock()
    cpu, wall = time.thread_time_ns, time.perf_counter_ns

    def add(label: str, c: int, w: int) -> None:
        with lock:
            entry = totals.setdefault(label, [0, 0, 0])
            entry[0] += 1
            entry[1] += c
            entry[2] += w

    def timed(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            c, w = cpu(), wall()
            result = None
            try:
                result = fn(*args, **kwargs)
                return result
            finally:
                c, w = cpu() - c, wall() - w
                add(label, c, w)
                if label == "decode it" and _small_push(result, args[2]):
                    add(SMALL_PUSH, c, w)  # the kind of message the tight loop decodes too

        return wrapper

    for label, module, cls, method in STAGES:
        mod = importlib.import_module(module)
        owner = getattr(mod, cls)
        original = getattr(owner, method)
        wrapped = timed(label.strip(), original)
        setattr(owner, method, wrapped)
        for table in list(vars(mod).values()):  # dispatch tables holding the function itself (a worker's methods)
            if isinstance(table, dict):
                for key, value in list(table.items()):
                    if value is original:
                        table[key] = wrapped

    def thread_cpu() -> dict[str, float]:
        return {f"{tid} {comm}": cpu for (tid, comm), cpu in _layout.thread_cpu_seconds().items()}

    window: dict[str, Any] = {}

    def start(*_: Any) -> None:
        with lock:
            totals.clear()
        window["threads"] = thread_cpu()

    def dump(*_: Any) -> None:
        before, after = window.get("threads", {}), thread_cpu()
        threads = {k: v - before.get(k, 0.0) for k, v in after.items()}
        with lock:
            data = {"stages": dict(totals), "threads": threads}
        with open(os.path.join(out_dir, f"{name}.json"), "w") as f:
            json.dump(data, f)

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, dump)
    import dtf_notebook.server as server_main

    server_main.main(argv)


def measure(workload: str, seconds: float) -> dict[str, Any]:
    """One run: every task's stages over a window of ``seconds`` in the middle of the client's run."""
    with tempfile.TemporaryDirectory(prefix="dtf-stages-") as out_dir:
        launcher = [sys.executable, HERE, "--serve-timed", out_dir]
        tasks, out = _layout.windowed_run(workload, launcher, out_dir, seconds, settle=4.0)
    steps = tasks["worker0"]["stages"][STEP_STAGE][0]
    return {
        "tasks": tasks,
        "steps": steps,
        "window_rate": steps / seconds,
        "client_rate": out["steps"] / out["seconds"],
        "client_cpu_us": out["cpu"]["client"] / out["steps"] * 1e6,
    }


def tight_loop() -> dict[str, float]:
    """Microseconds per call of decoding and encoding one of the step's ``SendTensor`` messages in a tight loop."""
    import torch
    from _common import timed

    from dtf_notebook.distributed import wire
    from dtf_notebook.distributed.wire_stream import StreamAssembler

    key = "/job:worker/replica:0/task:0/device:CPU:0;0000000000000001;/job:ps/replica:0/task:1/device:CPU:0;{}:0;0"
    header = {"step_id": 1 << 60, "keys": [key.format("b1_grad"), key.format("b2_grad")], "id": 7}
    header.update(method="SendTensor", oneway=True)
    tensors = [torch.ones(100), torch.ones(10)]
    frames = [memoryview(bytes(f)) for f in wire.encode_message(header, tensors)]
    assembler = StreamAssembler(wire.WireLimits())
    return {
        "decode it": timed(lambda: assembler.feed(b"peer", frames), repeats=20000) * 1e6,
        "encode it": timed(lambda: wire.encode_message(header, tensors, check=False), repeats=20000) * 1e6,
    }


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--serve-timed":
        serve_timed(argv[2], argv[1], argv[3:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workload", choices=["mlp", "embedding"], default="mlp")
    parser.add_argument("--seconds", type=float, default=3.0, help="length of the timed window")
    parser.add_argument("--rounds", type=int, default=2, help="runs (each row is the median over them)")
    args = parser.parse_args(argv)
    runs = [measure(args.workload, args.seconds) for _ in range(args.rounds)]
    names = list(runs[0]["tasks"])
    print(
        f"{args.workload}: stages of a step in every task, per step (medians of {args.rounds} runs of "
        f"{args.seconds:g} s); CPU is the calling thread's, wall includes waiting for a core"
    )
    header = f"{'stage':40}" + "".join(f"{n:>26}" for n in names)
    print(header)
    print(f"{'':40}" + "".join(f"{'calls  cpu us  wall us':>26}" for _ in names))
    print("-" * len(header))
    import statistics

    def med(values: list[float]) -> float:
        return statistics.median(values) if values else 0.0

    labels = [label for label, *_ in STAGES]
    labels.insert(labels.index("  decode it") + 1, "    " + SMALL_PUSH)
    for label in labels:
        cells = []
        for n in names:
            rows = [per_step(r["tasks"][n]["stages"], r["steps"]).get(label.strip()) for r in runs]
            rows = [r for r in rows if r is not None]
            if not rows:
                cells.append(f"{'-':>26}")
                continue
            calls, c, w = (med([r[i] for r in rows]) for i in range(3))
            cells.append(f"{calls:>8.1f} {c:>8.0f} {w:>8.0f}")
        print(f"{label:40}" + "".join(cells))
    loop = []
    for n in names:
        per_run = []
        for r in runs:
            threads = r["tasks"][n]["threads"]
            busiest = max((v for k, v in threads.items() if "ZMQ" not in k), default=0.0)
            per_run.append(busiest / r["steps"] * 1e6)
        loop.append(f"{'':>8} {med(per_run):>8.0f} {'':>8}")
    print(f"{'loop thread (all of its CPU)':40}" + "".join(loop))
    zmq_io = []
    for n in names:
        per_run = [
            sum(v for k, v in r["tasks"][n]["threads"].items() if "ZMQbg/IO" in k) / r["steps"] * 1e6 for r in runs
        ]
        zmq_io.append(f"{'':>8} {med(per_run):>8.0f} {'':>8}")
    print(f"{'ZeroMQ I/O thread':40}" + "".join(zmq_io))
    print(f"client process: {med([r['client_cpu_us'] for r in runs]):.0f} us of CPU per step")
    print(
        f"steps counted in the window: {med([r['window_rate'] for r in runs]):.1f}/s (the worker's plan starts; the "
        f"client's own count over its whole run: {med([r['client_rate'] for r in runs]):.1f}/s)"
    )
    print()
    hot = tight_loop()
    print("The same code in a tight loop in one process (one of the step's SendTensor messages, 2 small tensors;")
    print(f"compare with the tasks' '{SMALL_PUSH.strip()}' row, per call)")
    print(f"{'decode it':40}{hot['decode it']:>8.1f} us per call")
    print(f"{'encode it':40}{hot['encode it']:>8.1f} us per call (inside the tasks it is part of the pushes)")


if __name__ == "__main__":
    main()
