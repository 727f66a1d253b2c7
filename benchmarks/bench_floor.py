"""The floor of the client-process layout: a step's processes, messages and torch kernels with no runtime at all.

Run: ``python benchmarks/bench_floor.py [--workload mlp|embedding|all] [--workers 1,2,4] [--rounds N]
[--duration S] [--no-tf] [--transport tcp|ipc]``

``bench_training.py --layout client`` compares a dtf_notebook step with TF 2.21's where every task is a server
process and every worker's training script a client process of its own. This benchmark asks how fast *any*
runtime written in Python on ZeroMQ could run those steps on this machine: it replays each step as a skeleton --
the same processes (one per task and one per client), the same messages between them (a dtf_notebook step's: the
client sends every task its ``RunGraph``, the tasks exchange tensors, every task answers the client) and the same
torch kernels (the forward and backward pass, the reads and updates of the variables), written directly on pyzmq
(``PUSH``/``PULL`` sockets, a msgpack header and one raw frame per tensor) with nothing else: no graph, no
executor, no checks, no rendezvous, no retries, no failure handling. What a real runtime adds can only make a
step slower, so the skeleton's rate approximates the best a design that keeps these messages could do (it is one
implementation of them, not a proof), and its ratio to TF's about the most such a design could show.

Workloads (as in ``_layout.py``): ``mlp``, the async 784-100-10 MLP on 2 ps with 1, 2 and 4 workers (a batch of
100 digits fed per step, plain GD, ps 0 increments the global step once ps 1's updates are done, as TF's
``apply_gradients`` orders it: 11 messages a step); ``embedding``, ``[1000000, 20]`` split over 3 ps by
``id % 3``, 1,024 random ids a step, gathered on the ps tasks, stitched on the worker, the rows' gradient
subtracted on the ps tasks (17 messages a step). For each, the table gives steps (or examples) per second summed
over the clients, the median, p90 and max step time of every client, and the CPU time of all processes per step,
for TF 2.21 (when installed), dtf_notebook and both skeletons, in the same rounds (rates are medians over rounds).
A second table gives, for the one-client cases, each process's CPU and context switches (all its threads) per step.

The skeleton runs in two patterns: ``skeleton``, a dtf_notebook step's messages, and ``fewest``, the fewest TF1's
semantics allow (the embedding's ps tasks started by the ids the worker sends them instead of a ``RunGraph`` of their
own, 14 messages; the MLP's ps 1 answering through its control message to ps 0, 10), which is what a redesign of
the messages could gain at most.

Example:
    >>> len(step_messages("embedding", "dtf"))
    17
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from typing import Any

import _layout

HERE = os.path.abspath(__file__)
ROWS = 1_000_000
SHARDS = 3
EMBEDDING_LEARNING_RATE = 0.01  # as _layout.py's graphs (the MLP's: _layout.LEARNING_RATE)
#: The skeletons measured: a dtf_notebook step's messages, and the fewest TF1's semantics allow.
SKELETONS = {"skeleton": "dtf", "fewest": "fewest"}
WARMUP_STEPS = 20  # as _layout.py's clients


def step_messages(workload: str, pattern: str) -> list[tuple[str, str, str]]:
    """The messages of one skeleton step of ``workload`` ("mlp" with one worker, or "embedding") in ``pattern``
    ("dtf" or "fewest"), as ``(sender, receiver, what)``, in the order they go out.

    Example:
        >>> [len(step_messages(w, p)) for w in ("mlp", "embedding") for p in ("dtf", "fewest")]
        [11, 10, 17, 14]
        >>> step_messages("embedding", "fewest")[:2]
        [('client0', 'worker0', 'RunGraph, the ids'), ('worker0', 'ps0', 'its ids (they start its part)')]
    """
    fewest = pattern == "fewest"
    if workload == "mlp":
        plan = [
            ("client0", "ps0", "RunGraph"),
            ("client0", "ps1", "RunGraph"),
            ("client0", "worker0", "RunGraph, x, y"),
        ]
        plan += [("ps0", "worker0", "weights"), ("ps1", "worker0", "biases")]
        plan += [("worker0", "ps0", "their gradients"), ("worker0", "ps1", "their gradients")]
        plan += [("ps1", "ps0", "its updates are done"), ("worker0", "client0", "the loss"), ("ps0", "client0", "done")]
        return plan if fewest else plan + [("ps1", "client0", "done")]
    ps = [f"ps{k}" for k in range(SHARDS)]
    plan = [] if fewest else [("client0", p, "RunGraph") for p in ps]
    plan += [("client0", "worker0", "RunGraph, the ids")]
    plan += [("worker0", p, "its ids (they start its part)" if fewest else "its ids") for p in ps]
    plan += [(p, "worker0", "the rows") for p in ps]
    plan += [("worker0", p, "the rows' gradient, its ids") for p in ps] + [("worker0", "client0", "the loss")]
    return plan + [(p, "client0", "done") for p in ps]


# ---- the skeleton's processes ---------------------------------------------------------------------------------
class Node:
    """One skeleton process: a ``PULL`` socket bound to its port, a ``PUSH`` socket to each peer it sends to."""

    def __init__(self, name: str, ports: dict[str, int], transport: str = "tcp", workdir: str = "") -> None:
        import msgpack
        import numpy as np
        import torch
        import zmq

        # Kept here so that sending and receiving, the skeleton's hot path, look nothing up per message.
        self.zmq, self.msgpack, self.np, self.torch = zmq, msgpack, np, torch
        self.name = name
        self.ports = ports
        self.transport = transport
        self.workdir = workdir  # where ipc sockets live
        self.ctx = zmq.Context()
        self.pull = self.ctx.socket(zmq.PULL)
        self.pull.bind(self.endpoint(name))
        self.pushes: dict[str, Any] = {}

    def endpoint(self, name: str) -> str:
        """Where process ``name`` listens: loopback TCP (as both libraries use) or a Unix socket (``ipc``)."""
        if self.transport == "ipc":
            return f"ipc://{self.workdir}/{name}.sock"
        return f"tcp://127.0.0.1:{self.ports[name]}"

    def send(self, to: str, header: dict[str, Any], *arrays: Any) -> None:
        """Sends ``header`` (msgpack) and each array as one raw frame; the header carries dtypes and shapes."""
        sock = self.pushes.get(to)
        if sock is None:
            sock = self.pushes[to] = self.ctx.socket(self.zmq.PUSH)
            sock.connect(self.endpoint(to))
        views = [a.numpy() for a in arrays]
        header["t"] = [(v.dtype.str, v.shape) for v in views]
        sock.send_multipart([self.msgpack.packb(header), *views], copy=sum(v.nbytes for v in views) < 65536)

    def recv(self) -> tuple[dict[str, Any], list[Any]]:
        """The next message: its header and its arrays (torch views of the received frames)."""
        np, from_numpy = self.np, self.torch.from_numpy
        # The header copied (small), each tensor's frame lent: the header says how many follow.
        header = self.msgpack.unpackb(self.pull.recv())
        arrays = [
            from_numpy(np.frombuffer(self.pull.recv(copy=False).buffer, dtype=dtype).reshape(shape))
            for dtype, shape in header["t"]
        ]
        return header, arrays


def serve_embedding_ps(node: Node, index: int) -> None:
    import torch

    table = torch.zeros((ROWS - index + SHARDS - 1) // SHARDS, _layout.EMBEDDING_DIM)
    steps: dict[int, dict[str, Any]] = {}
    while True:
        header, arrays = node.recv()
        step = steps.setdefault(header["s"], {})
        if header["m"] == "run":
            step["client"] = header["c"]
        elif header["m"] == "ids":
            if "c" in header:  # the fewest messages: the ids start this task's part of the step
                step["client"] = header["c"]
            node.send("worker0", {"m": "rows", "s": header["s"], "k": index}, table.index_select(0, arrays[0]))
        else:  # the rows' gradient and their ids
            # (torch's index_add_ with an alpha takes a slow path for hundreds of rows: scale the rows first)
            table.index_add_(0, arrays[1], arrays[0] * -EMBEDDING_LEARNING_RATE)
            step["applied"] = True
        if "client" in step and "applied" in step:
            node.send(step["client"], {"m": "done", "s": header["s"]})
            del steps[header["s"]]


def serve_embedding_worker(node: Node, fewest: bool) -> None:
    import torch

    steps: dict[int, dict[str, Any]] = {}
    while True:
        header, arrays = node.recv()
        if header["m"] == "run":
            ids = arrays[0]
            shard, row = ids % SHARDS, ids // SHARDS
            where = [(shard == k).nonzero().squeeze(1) for k in range(SHARDS)]
            parts = [row[w] for w in where]
            steps[header["s"]] = {"where": where, "parts": parts, "rows": {}, "client": header["c"]}
            for k in range(SHARDS):
                ids_header = {"m": "ids", "s": header["s"], **({"c": header["c"]} if fewest else {})}
                node.send(f"ps{k}", ids_header, parts[k])
            continue
        step = steps[header["s"]]
        step["rows"][header["k"]] = arrays[0]
        if len(step["rows"]) < SHARDS:
            continue
        del steps[header["s"]]
        found = torch.empty(_layout.LOOKUP_BATCH, _layout.EMBEDDING_DIM)
        for k in range(SHARDS):
            found.index_copy_(0, step["where"][k], step["rows"][k])
        loss = found.square().sum()
        grad = found * 2.0
        for k in range(SHARDS):
            node.send(
                f"ps{k}", {"m": "grads", "s": header["s"]}, grad.index_select(0, step["where"][k]), step["parts"][k]
            )
        node.send(step["client"], {"m": "done", "s": header["s"]}, loss)


def serve_mlp_ps(node: Node, index: int, fewest: bool) -> None:
    import torch

    torch.manual_seed(index)
    if index == 0:
        variables = [torch.randn(784, 100) * 0.05, torch.randn(100, 10) * 0.05]
    else:
        variables = [torch.zeros(100), torch.zeros(10)]
    global_step = torch.zeros((), dtype=torch.int64)
    steps: dict[int, dict[str, Any]] = {}
    while True:
        header, arrays = node.recv()
        step = steps.setdefault(header["s"], {})
        kind = header["m"]
        if kind == "run":
            step["client"] = header["c"]
            # Copies, as a runtime must send them: the values as read now, whatever updates the variables next.
            node.send(
                f"worker{header['w']}", {"m": "vars", "s": header["s"], "k": index}, *(v.clone() for v in variables)
            )
        elif kind == "grads":
            for variable, grad in zip(variables, arrays):
                variable.sub_(grad, alpha=_layout.LEARNING_RATE)
            step["applied"] = True
            if index == 1:
                node.send("ps0", {"m": "ctrl", "s": header["s"]})
        else:  # ps 1's updates are done: the global step's increment may run
            step["ctrl"] = True
        if "client" in step and "applied" in step and (index == 1 or "ctrl" in step):
            if index == 0:
                global_step.add_(1)
            if index == 0 or not fewest:  # (the fewest messages: ps 0's answer says ps 1's updates are done)
                node.send(step["client"], {"m": "done", "s": header["s"]})
            del steps[header["s"]]


def serve_mlp_worker(node: Node) -> None:
    import torch

    steps: dict[int, dict[str, Any]] = {}
    while True:
        header, arrays = node.recv()
        step = steps.setdefault(header["s"], {})
        if header["m"] == "run":
            step["client"], step["x"], step["y"] = header["c"], arrays[0], arrays[1]
        else:
            step[header["k"]] = arrays
        if len(step) < 5:
            continue
        del steps[header["s"]]
        (w1, w2), (b1, b2), x, y = step[0], step[1], step["x"], step["y"]
        hidden = torch.addmm(b1, x, w1)
        relu = hidden.clamp_min(0.0)
        logits = torch.addmm(b2, relu, w2)
        log_p = torch.log_softmax(logits, 1)
        rows = torch.arange(len(y))
        loss = -log_p[rows, y].mean()
        d_logits = log_p.exp()
        d_logits[rows, y] -= 1.0
        d_logits /= len(y)
        d_hidden = (d_logits @ w2.t()) * (hidden > 0)
        node.send("ps0", {"m": "grads", "s": header["s"]}, x.t() @ d_hidden, relu.t() @ d_logits)
        node.send("ps1", {"m": "grads", "s": header["s"]}, d_hidden.sum(0), d_logits.sum(0))
        node.send(step["client"], {"m": "done", "s": header["s"]}, loss)


def run_client(node: Node, args: argparse.Namespace) -> dict[str, Any]:
    """Warms up, says ``ready`` and waits for ``go`` (the other clients are ready too), then times every step for
    ``--duration`` seconds."""
    import numpy as np
    import torch

    task = args.index
    rng = np.random.default_rng(task)
    targets = [f"ps{k}" for k in range(SHARDS if args.workload == "embedding" else 2)]
    fewest = args.messages == "fewest"
    if args.workload == "mlp":
        data = np.load(args.data)
        x_all = torch.from_numpy(data["x"][task :: args.workers].astype(np.float32))
        y_all = torch.from_numpy(data["y"][task :: args.workers].astype(np.int64))
        starts = list(range(0, len(x_all) - _layout.BATCH + 1, _layout.BATCH))
    step_id = task << 40
    pids = json.loads(args.pids)

    replies = sum(receiver == "client0" for _, receiver, _ in step_messages(args.workload, args.messages))
    order = iter(())

    def feed() -> list[Any]:
        """The next step's fed tensors, drawn before its clock starts (as ``_layout.py``'s clients do)."""
        nonlocal order
        if args.workload == "embedding":
            return [torch.from_numpy(rng.integers(0, ROWS, _layout.LOOKUP_BATCH))]
        i = next(order, None)
        if i is None:
            order = iter(rng.permutation(starts).tolist())
            i = next(order)
        return [x_all[i : i + _layout.BATCH], y_all[i : i + _layout.BATCH]]

    def one_step(fed: list[Any]) -> None:
        nonlocal step_id
        step_id += 1
        for target in [] if fewest and args.workload == "embedding" else targets:
            node.send(target, {"m": "run", "s": step_id, "c": node.name, "w": task})
        node.send(f"worker{task}", {"m": "run", "s": step_id, "c": node.name}, *fed)
        for _ in range(replies):
            header, _ = node.recv()
            assert header["s"] == step_id, header

    for _ in range(WARMUP_STEPS):
        one_step(feed())
    print("ready", flush=True)
    sys.stdin.readline()  # go
    before = {name: _layout.cpu_seconds(pid) for name, pid in pids.items()}
    switches_before = _layout.switches_of({"client": os.getpid(), **pids})
    own = time.process_time()
    times = []
    start = time.perf_counter()
    while time.perf_counter() - start < args.duration:
        fed = feed()
        t = time.perf_counter()
        one_step(fed)
        times.append(time.perf_counter() - t)
    seconds = time.perf_counter() - start
    cpu = {"client": time.process_time() - own}
    cpu.update({name: _layout.cpu_seconds(pid) - before[name] for name, pid in pids.items()})
    switches = _layout.switches_of({"client": os.getpid(), **pids}, switches_before)
    return {"steps": len(times), "seconds": seconds, "times": times, "cpu": cpu, "switches": switches}


def role_main(args: argparse.Namespace) -> None:
    import torch

    warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
    torch.set_num_threads(1)
    node = Node(args.role, json.loads(args.ports), args.transport, args.workdir)
    node.pull.setsockopt(node.zmq.RCVTIMEO, 60_000)  # a skeleton that lost a message fails instead of hanging
    kind, index = args.role.rstrip("0123456789"), int(args.role.lstrip("abcdefghijklmnopqrstuvwxyz"))
    if kind == "client":
        args.index = index
        result = run_client(node, args)
        with open(args.out, "w") as f:
            json.dump(result, f)
        os._exit(0)
    print("ready", flush=True)
    fewest = args.messages == "fewest"
    serve = {
        ("ps", "mlp"): lambda: serve_mlp_ps(node, index, fewest),
        ("ps", "embedding"): lambda: serve_embedding_ps(node, index),
        ("worker", "mlp"): lambda: serve_mlp_worker(node),
        ("worker", "embedding"): lambda: serve_embedding_worker(node, fewest),
    }[(kind, args.workload)]
    serve()


# ---- the comparison ---------------------------------------------------------------------------------------------
def run_skeleton(
    workload: str,
    workers: int,
    duration: float,
    data: str,
    messages: str,
    transport: str = "tcp",
    launcher: list[str] | None = None,
) -> list[dict[str, Any]]:
    """Starts the skeleton's task processes, then its clients (``messages``: "dtf" or "fewest"; ``transport``:
    "tcp" or "ipc"); returns what each client measured. ``launcher`` replaces ``python bench_floor.py`` as each
    process's command before its ``--role`` arguments (``bench_opcodes.py --skeleton`` counts them this way)."""
    role_command = launcher or [sys.executable, HERE]
    tasks = [f"ps{k}" for k in range(SHARDS if workload == "embedding" else 2)]
    tasks += [f"worker{i}" for i in range(workers)]
    clients = [f"client{i}" for i in range(workers)]
    ports = dict(zip(tasks + clients, _layout.free_ports(len(tasks) + len(clients))))
    workdir = tempfile.mkdtemp(prefix="bench-floor-")  # ipc sockets and the clients' results; removed below
    common = ["--ports", json.dumps(ports), "--workload", workload, "--workers", str(workers), "--data", data]
    common += ["--messages", messages, "--transport", transport, "--workdir", workdir]
    env = _layout.env_for()
    servers = {}
    procs = []
    try:
        for name in tasks:
            proc = subprocess.Popen(
                [*role_command, "--role", name, *common], env=env, stdout=subprocess.PIPE, text=True
            )
            procs.append(proc)
            servers[name] = proc
        for name, proc in servers.items():
            _expect_ready(proc, f"skeleton task {name}")
        outs = [os.path.join(workdir, f"{c}.json") for c in clients]
        pids = json.dumps({name: proc.pid for name, proc in servers.items()})
        runs = []
        for i, (name, out) in enumerate(zip(clients, outs)):
            extra = ["--out", out, "--duration", str(duration), "--pids", pids if i == 0 else "{}"]
            command = [*role_command, "--role", name, *common, *extra]
            runs.append(subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
            procs.append(runs[-1])
        for name, proc in zip(clients, runs):  # a start barrier, as _layout.py's clients have: all warm, then all go
            _expect_ready(proc, f"skeleton {name}")
        for proc in runs:
            proc.stdin.write("go\n")
            proc.stdin.flush()
        results = []
        for proc, out in zip(runs, outs):
            if proc.wait(timeout=duration + 120) != 0:
                raise RuntimeError(f"skeleton client failed ({proc.returncode})")
            with open(out) as f:
                results.append(json.load(f))
        return results
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        shutil.rmtree(workdir, ignore_errors=True)


def _expect_ready(proc: subprocess.Popen, what: str, patience: float = 120.0) -> None:
    """Waits for ``proc`` to print ``ready`` (a process that dies or hangs first is an error, not a wait)."""
    ready, _, _ = select.select([proc.stdout], [], [], patience)
    line = proc.stdout.readline().strip() if ready else ""
    if line != "ready":
        raise RuntimeError(f"{what} did not start within {patience:.0f} s (exit status {proc.poll()}, said {line!r})")


def measure(
    lib: str,
    workload: str,
    workers: int,
    duration: float,
    data: str,
    transport: str = "tcp",
    launcher: list[str] | None = None,
) -> list[dict[str, Any]]:
    """One run of ``workload`` with ``workers`` clients on ``lib`` ("tf", "dtf", "skeleton" or "fewest"): each
    client's steps, seconds, step times, CPU and context switches (as ``_layout.run_clients`` returns them).
    ``launcher``: see :func:`run_skeleton` (skeletons only)."""
    if lib in SKELETONS:
        return run_skeleton(workload, workers, duration, data, SKELETONS[lib], transport, launcher)
    jobs = {"ps": SHARDS, "worker": 1} if workload == "embedding" else {"ps": 2, "worker": workers}
    with _layout.Servers(lib, jobs) as servers:
        return _layout.run_clients(
            servers, workload, workers, duration, WARMUP_STEPS, data, ROWS if workload == "embedding" else None
        )


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workload", choices=("mlp", "embedding", "all"), default="all")
    p.add_argument("--workers", default="1,2,4", help="worker counts of the MLP")
    p.add_argument("--rounds", type=int, default=2, help="rounds (rates are medians over them)")
    p.add_argument("--duration", type=float, default=3.0, help="seconds each client is timed")
    p.add_argument("--no-tf", action="store_true", help="leave TensorFlow out")
    p.add_argument(
        "--transport", choices=("tcp", "ipc"), default="tcp", help="the skeletons' sockets (both libraries: tcp)"
    )
    # A skeleton process's own arguments (it is started as this script with --role).
    p.add_argument("--role", help=argparse.SUPPRESS)
    p.add_argument("--ports", help=argparse.SUPPRESS)
    p.add_argument("--data", default="", help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    p.add_argument("--pids", default="{}", help=argparse.SUPPRESS)
    p.add_argument("--messages", choices=("dtf", "fewest"), default="dtf", help=argparse.SUPPRESS)
    p.add_argument("--workdir", default="", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.role:
        args.workers = int(args.workers)
        role_main(args)
        return
    libs = ["dtf", *SKELETONS]
    if not args.no_tf and importlib.util.find_spec("tensorflow") is not None:
        libs.insert(0, "tf")
    cases = []
    if args.workload in ("mlp", "all"):
        cases += [("mlp", int(n)) for n in args.workers.split(",")]
    if args.workload in ("embedding", "all"):
        cases.append(("embedding", 1))
    workdir = tempfile.mkdtemp(prefix="bench-floor-data-")
    results: dict[tuple[str, str, int], list[list[dict[str, Any]]]] = {}
    try:
        data = _layout.digits_file(workdir)
        for r in range(args.rounds):
            for workload, workers in cases:
                for lib in libs if r % 2 == 0 else libs[::-1]:
                    results.setdefault((lib, workload, workers), []).append(
                        measure(lib, workload, workers, args.duration, data, args.transport)
                    )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(
        f"{args.rounds} round(s) of {args.duration:g} s; the skeletons over {args.transport}, both libraries over tcp; "
        "rates are medians over rounds, step times pooled"
    )
    print(
        f"{'workload':34s}"
        + "".join(f"{lib:>34s}" for lib in libs)
        + "".join(f"{lib + '/tf':>13s}" for lib in libs[1:] if libs[0] == "tf")
    )
    print(f"{'':34s}" + "".join(f"{'rate (med/p90/max ms) cpu/step ms':>34s}" for _ in libs))
    for workload, workers in cases:
        label = f"MLP 2 ps + {workers} worker(s), examples/s" if workload == "mlp" else "embedding 3 ps, steps/s"
        cells, rates = [], {}
        for lib in libs:
            runs = results[(lib, workload, workers)]
            per_step = _layout.BATCH if workload == "mlp" else 1
            rates[lib] = statistics.median(_layout.combined(out, per_step)["rate"] for out in runs)
            times = _layout.summary([t for out in runs for r in out for t in r["times"]])
            cpu = statistics.median(_layout.cpu_per_step(out) for out in runs) * 1e3
            ms = {k: v * 1e3 for k, v in times.items()}
            cells.append(f"{rates[lib]:,.0f} ({ms['median']:.2f}/{ms['p90']:.2f}/{ms['max']:.1f}) {cpu:.2f}")
        ratios = "".join(f"{rates[lib] / rates['tf']:>12.2f}x" for lib in libs[1:]) if "tf" in rates else ""
        print(f"{label:34s}" + "".join(f"{c:>34s}" for c in cells) + ratios)
    print_per_process(results, libs, [case for case in cases if case[1] == 1])


def print_per_process(
    results: dict[tuple[str, str, int], list[list[dict[str, Any]]]], libs: list[str], cases: list[tuple[str, int]]
) -> None:
    """Prints, for the one-client cases, each process's CPU and context switches (all its threads) per step:
    medians over rounds of what the client read from ``/proc`` over its timed window."""
    print("\nPer process with one client, per step: CPU µs / context switches (medians over rounds)")
    for workload, workers in cases:
        runs = {lib: [out[0] for out in results[(lib, workload, workers)]] for lib in libs}
        names = sorted(runs[libs[0]][0]["cpu"], key=lambda n: (n != "client", n))
        print(f"{workload:10s}" + "".join(f"{name:>18s}" for name in names))
        for lib in libs:
            cells = []
            for name in names:
                cpu = statistics.median(r["cpu"][name] / r["steps"] for r in runs[lib]) * 1e6
                switches = statistics.median(r["switches"][name] / r["steps"] for r in runs[lib])
                cells.append(f"{cpu:,.0f} / {switches:.1f}")
            print(f"{lib:10s}" + "".join(f"{c:>18s}" for c in cells))


if __name__ == "__main__":
    main()
