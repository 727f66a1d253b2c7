"""The layout TF1 users run: every task a server process, every worker's training script a client process.

``bench_training.py`` and ``bench_cluster.py`` measure it side by side for dtf_notebook (``python -m
dtf_notebook.server`` tasks, clients opening ``tf.Session("zmq://worker-i:port")``) and, when installed, TF 2.21
(``tf.distribute.Server`` tasks, clients opening ``tf.Session("grpc://...")``): the same client code, given
``dtf_notebook.compat.v1`` or ``tensorflow.compat.v1`` as ``tf``.

This file is also the client: ``python benchmarks/_layout.py --lib dtf|tf --workload mlp|embedding|latency|transfer
--spec JSON --task I --out FILE ...`` builds its graph, waits at a start barrier (a counter on ps task 0) with the
other clients of its run, times every ``sess.run`` of its window and writes ``{"steps", "seconds", "times"}`` (and
for ``transfer`` the bytes per step) as JSON to ``--out``. ``DTF_BENCH_PROFILE=DIR`` runs the window under cProfile
and leaves ``DIR/client-<task>.prof``; ``DTF_BENCH_OPCODES=DIR`` counts its Python bytecodes
(``bench_opcodes.py``) into ``DIR/client-<task>.json``.

Example:
    >>> summary([0.001, 0.002, 0.003, 0.010])["p90"] > summary([0.001, 0.002, 0.003, 0.010])["median"]
    True
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import types
from typing import Any

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.abspath(__file__)
BATCH = 100
LEARNING_RATE = 0.1
EMBEDDING_DIM = 20
LOOKUP_BATCH = 1024
TRANSFER_BYTES = 64 << 20

TF_SERVER = r"""
import json, sys
import tensorflow as tf
spec = json.loads(sys.argv[1])
server = tf.distribute.Server(tf.train.ClusterSpec(spec), job_name=sys.argv[2], task_index=int(sys.argv[3]))
print("ready", flush=True)
server.join()
"""


def env_for(path: str | None = None) -> dict[str, str]:
    """Environment of every server and client process: ``path`` (default: this tree) first on the import path,
    one OpenMP thread (2-core machine; the same for both libraries), TF's logging quiet, no cluster key."""
    env = dict(os.environ)
    env["PYTHONPATH"] = (path or REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["OMP_NUM_THREADS"] = "1"
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    env.pop("DTF_CLUSTER_KEY", None)
    env.pop("DTF_CLUSTER_KEY_FILE", None)
    return env


def free_ports(n: int) -> list[int]:
    from dtf_notebook.distributed.local_process import free_port

    return [free_port() for _ in range(n)]


class Servers:
    """Server processes of one cluster (``lib`` "dtf" or "tf"), started in parallel; a context manager.

    ``launcher`` (dtf only) replaces ``python -m dtf_notebook.server``: it is given the task's name (``ps0``) and the
    server's arguments (``bench_step_stages.py`` times stages inside each task this way)."""

    def __init__(
        self, lib: str, jobs: dict[str, int], path: str | None = None, launcher: list[str] | None = None
    ) -> None:
        ports = iter(free_ports(sum(jobs.values())))
        host = "127.0.0.1" if lib == "dtf" else "localhost"
        self.lib = lib
        self.spec = {job: [f"{host}:{next(ports)}" for _ in range(n)] for job, n in jobs.items()}
        self.path = path
        self.launcher = launcher
        self.procs: list[subprocess.Popen] = []
        self.logs: list[str] = []

    def __enter__(self) -> Servers:
        spec = json.dumps(self.spec)
        for job, addresses in self.spec.items():
            for task in range(len(addresses)):
                if self.lib == "dtf":
                    args = [sys.executable, "-m", "dtf_notebook.server", "--cluster", spec]
                    if os.environ.get("DTF_BENCH_PROFILE"):
                        args = [sys.executable, HERE, "--serve-profiled", f"{job}{task}", "--cluster", spec]
                    elif self.launcher:
                        args = [*self.launcher, f"{job}{task}", "--cluster", spec]
                    args += ["--job", job, "--task", str(task)]
                else:
                    args = [sys.executable, "-c", TF_SERVER, spec, job, str(task)]
                log = tempfile.NamedTemporaryFile("w+", suffix=f"-{self.lib}-{job}{task}.log", delete=False)
                env = env_for(self.path)
                # ``python -m`` looks in the working directory first: run in the tree being measured.
                cwd = self.path or REPO
                self.procs.append(subprocess.Popen(args, env=env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT))
                self.logs.append(log.name)
        deadline = time.monotonic() + 120
        waiting = set(range(len(self.procs)))
        while waiting:
            for i in list(waiting):
                with open(self.logs[i]) as f:
                    if "ready" in f.read():
                        waiting.discard(i)
                if self.procs[i].poll() is not None or time.monotonic() > deadline:
                    self.__exit__()
                    with open(self.logs[i]) as f:
                        raise RuntimeError(f"{self.lib} server {i} did not start:\n{f.read()[-2000:]}")
            time.sleep(0.05)
        return self

    def named(self) -> list[tuple[str, subprocess.Popen]]:
        """(``job`` + index, process) of each server."""
        names = [f"{job}{i}" for job, addresses in self.spec.items() for i in range(len(addresses))]
        return list(zip(names, self.procs))

    def target(self, job: str, task: int) -> str:
        return ("zmq://" if self.lib == "dtf" else "grpc://") + self.spec[job][task]

    def __exit__(self, *exc: Any) -> None:
        for proc in self.procs:
            proc.send_signal(2)  # SIGINT: a profiled dtf server writes its profile on the way out
        for proc in self.procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        for name in self.logs:
            os.unlink(name)


def run_clients(
    servers: Servers, workload: str, clients: int, duration: float, warmup: int, data: str = "", extra: Any = None
) -> list[dict[str, Any]]:
    """Starts ``clients`` client processes (client i drives worker task i) and returns what each measured."""
    procs, outs = [], []
    for task in range(clients):
        out = tempfile.NamedTemporaryFile("w+", suffix=f"-client{task}.json", delete=False).name
        args = [sys.executable, HERE, "--lib", servers.lib, "--workload", workload, "--spec", json.dumps(servers.spec)]
        args += ["--task", str(task), "--clients", str(clients), "--duration", str(duration)]
        args += ["--warmup", str(warmup), "--data", data, "--out", out, "--extra", json.dumps(extra)]
        if task == 0:  # the first client also reads the servers' CPU time over its window
            args += ["--server-pids", json.dumps({name: proc.pid for name, proc in servers.named()})]
        procs.append(
            subprocess.Popen(args, env=env_for(servers.path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        )
        outs.append(out)
    results = []
    for task, (proc, out) in enumerate(zip(procs, outs)):
        try:
            log, _ = proc.communicate(timeout=duration + 600)
        except subprocess.TimeoutExpired:
            proc.kill()
            log, _ = proc.communicate()
        with open(out) as f:
            text = f.read()
        os.unlink(out)
        if proc.returncode != 0 or not text:
            raise RuntimeError(f"{servers.lib} {workload} client {task} failed ({proc.returncode}):\n{log[-3000:]}")
        results.append(json.loads(text))
    return results


def mlp_loss(tf: Any, x: Any, y: Any) -> Any:
    """The seeds' 784-100-10 network's mean cross entropy on ``x``, ``y`` (its variables made in the caller's scope),
    shared by every benchmark that trains it.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     loss = mlp_loss(tf, tf.zeros([2, 784]), tf.constant([1, 2], tf.int64))
        >>> loss.shape.as_list()
        []
    """
    w1 = tf.get_variable("weights_1", [784, 100])
    b1 = tf.get_variable("biases_1", [100], initializer=tf.zeros_initializer())
    w2 = tf.get_variable("weights_2", [100, 10])
    b2 = tf.get_variable("biases_2", [10], initializer=tf.zeros_initializer())
    logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2) + b2
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))


def build_mlp(tf: Any, learning_rate: float) -> tuple[Any, Any, Any, Any]:
    """The seeds' async MLP (784-100-10, plain GD with a global step), built under the caller's device scope by
    every training benchmark, so each layout times the same graph: ``x``, ``y``, ``loss``, ``train_op``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     _, _, loss, _ = build_mlp(tf, 0.1)
        >>> loss.shape.as_list()
        []
    """
    x = tf.placeholder(tf.float32, [None, 784])
    y = tf.placeholder(tf.int64, [None])
    loss = mlp_loss(tf, x, y)
    global_step = tf.train.get_or_create_global_step()
    train_op = tf.train.GradientDescentOptimizer(learning_rate).minimize(loss, global_step=global_step)
    return x, y, loss, train_op


def summary(times: list[float]) -> dict[str, float]:
    """Median, p90 and max of step times (seconds)."""
    ordered = sorted(times)
    return {
        "median": statistics.median(ordered),
        "p90": ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))],
        "max": ordered[-1],
    }


def combined(results: list[dict[str, Any]], per_step: float = 1.0) -> dict[str, float]:
    """Rate over all clients (sum of each one's ``steps * per_step / seconds``) and the step times of all."""
    rate = sum(r["steps"] * per_step / r["seconds"] for r in results)
    return {"rate": rate, **summary([t for r in results for t in r["times"]])}


def cpu_per_step(out: list[dict[str, Any]]) -> float:
    """CPU seconds per step of every process of one run: the servers (read by the first client over its window)
    and each client's own, over all clients' steps.

    Example:
        >>> cpu_per_step([{"steps": 10, "cpu": {"client": 0.01, "ps0": 0.02}}, {"steps": 10, "cpu": {"client": 0.01}}])
        0.002
    """
    servers = sum(v for k, v in out[0]["cpu"].items() if k != "client")
    clients = sum(r["cpu"]["client"] for r in out)
    return round((servers + clients) / sum(r["steps"] for r in out), 9)


def digits_file(directory: str) -> str:
    """The training digits as an ``.npz`` in ``directory`` (clients of both libraries read the same arrays)."""
    from dtf_notebook.datasets import load_digits_784

    x_train, y_train, _, _ = load_digits_784()
    path = os.path.join(directory, "digits.npz")
    import numpy as np

    np.savez(path, x=x_train, y=y_train)
    return path


# ---- the client ----------------------------------------------------------------------------------------------
def _import(lib: str):
    if lib == "tf":
        import tensorflow.compat.v1 as tf

        tf.disable_v2_behavior()
        return tf
    import dtf_notebook.compat.v1 as tf

    return tf


def _wait_initialized(tf, sess, chief: bool) -> None:
    if chief:
        sess.run(tf.global_variables_initializer())
        return
    uninitialized = tf.report_uninitialized_variables()
    while len(sess.run(uninitialized)):
        time.sleep(0.05)


def _barrier(tf, sess, arrive, arrived, clients: int) -> None:
    sess.run(arrive)
    while sess.run(arrived) < clients:
        time.sleep(0.002)


def windowed_run(
    workload: str, launcher: list[str], out_dir: str, seconds: float, settle: float, path: str | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One dtf_notebook run of ``workload`` (the MLP on 2 ps, or the embedding on 3 ps; 1 worker and its client)
    with servers started by ``launcher`` (see :class:`Servers`), which record something over a window: SIGUSR1 to
    every server ``settle`` seconds into the client's run (start-up and warm-up stay out), SIGUSR2 ``seconds``
    later, when each must write ``out_dir/<name>.json``. Returns those files' contents by server name, and the
    client's result. ``bench_step_stages.py`` and ``bench_opcodes.py`` run this way."""
    jobs = {"ps": 3, "worker": 1} if workload == "embedding" else {"ps": 2, "worker": 1}
    data = digits_file(out_dir) if workload == "mlp" else ""
    extra = 1_000_000 if workload == "embedding" else None
    with Servers("dtf", jobs, path, launcher=launcher) as servers:
        procs = dict(servers.named())
        result: dict[str, Any] = {}
        client = threading.Thread(
            target=lambda: result.update(out=run_clients(servers, workload, 1, seconds + settle, 50, data, extra))
        )
        client.start()
        time.sleep(settle)
        for proc in procs.values():
            proc.send_signal(signal.SIGUSR1)
        time.sleep(seconds)
        for proc in procs.values():
            proc.send_signal(signal.SIGUSR2)
        client.join()
        time.sleep(0.5)
    recorded = {}
    for name in procs:
        with open(os.path.join(out_dir, f"{name}.json")) as f:
            recorded[name] = json.load(f)
    return recorded, result["out"][0]


def _client(args: argparse.Namespace) -> dict[str, Any]:
    import numpy as np

    tf = _import(args.lib)
    spec = json.loads(args.spec)
    cluster = tf.train.ClusterSpec(spec)
    task = args.task
    target = ("zmq://" if args.lib == "dtf" else "grpc://") + spec["worker"][task]
    rng = np.random.default_rng(task)
    setter = tf.train.replica_device_setter(cluster=cluster, worker_device=f"/job:worker/task:{task}")
    with tf.device("/job:ps/task:0"):
        arrived = tf.get_variable("arrived", [], tf.int32, initializer=tf.zeros_initializer())
    arrive = tf.assign_add(arrived, 1)
    per_step = 1
    if args.workload == "mlp":
        data = np.load(args.data)
        x_all, y_all = data["x"][task :: args.clients], data["y"][task :: args.clients]
        with tf.device(setter):
            x, y, loss, train_op = build_mlp(tf, LEARNING_RATE)
        fetches = [train_op, loss]
        starts = list(range(0, len(x_all) - BATCH + 1, BATCH))
        order = iter(())

        def feed():
            nonlocal order
            i = next(order, None)
            if i is None:
                order = iter(rng.permutation(starts).tolist())
                i = next(order)
            return {x: x_all[i : i + BATCH], y: y_all[i : i + BATCH]}

        per_step = BATCH
    elif args.workload == "embedding":
        rows = int(args.extra or 1_000_000)
        with tf.device(setter):
            embedding = tf.get_variable("embedding", [rows, EMBEDDING_DIM], partitioner=tf.fixed_size_partitioner(3))
            ids = tf.placeholder(tf.int64, [LOOKUP_BATCH], name="ids")
            loss = tf.reduce_sum(tf.square(tf.nn.embedding_lookup(embedding, ids)))
            train_op = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
        fetches = [train_op, loss]

        def feed():
            return {ids: rng.integers(0, rows, LOOKUP_BATCH)}

    elif args.workload == "latency":
        with tf.device("/job:ps/task:0"):
            counter = tf.Variable(0.0, name="counter")
        fetches = tf.assign_add(counter, 1.0)

        def feed():
            return None

    elif args.workload == "transfer":
        with tf.device("/job:ps/task:0"):
            big = tf.Variable(tf.zeros([TRANSFER_BYTES // 4]), name="big")
        with tf.device(f"/job:worker/task:{task}"):
            fetches = tf.reduce_sum(big)
        per_step = TRANSFER_BYTES

        def feed():
            return None

    else:
        raise SystemExit(f"unknown workload {args.workload!r}")
    config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{task}"])
    with tf.Session(target, config=config) as sess:
        _wait_initialized(tf, sess, chief=task == 0)
        for _ in range(args.warmup):
            sess.run(fetches, feed())
        _barrier(tf, sess, arrive, arrived, args.clients)
        profile_dir = os.environ.get("DTF_BENCH_PROFILE")
        profiler = None
        if profile_dir:
            import cProfile

            for pid in args.server_pids.values():
                os.kill(pid, signal.SIGUSR1)  # profiled servers drop what they recorded before the window

            profiler = cProfile.Profile()
            profiler.enable()
        counting = os.environ.get("DTF_BENCH_OPCODES")  # (bench_opcodes.py) count this client's bytecodes
        counter = OpcodeCounter() if counting else None
        if counter is not None:
            counter.start()
        times: list[float] = []
        clock = time.perf_counter
        servers_before = {name: cpu_seconds(pid) for name, pid in args.server_pids.items()}
        switches_before = switches_of({"client": os.getpid(), **args.server_pids})
        own_before = time.process_time()
        start = clock()
        while clock() - start < args.duration:
            feeds = feed()
            t = clock()
            sess.run(fetches, feeds)
            times.append(clock() - t)
        seconds = clock() - start
        cpu = {"client": time.process_time() - own_before}
        cpu.update({name: cpu_seconds(pid) - servers_before[name] for name, pid in args.server_pids.items()})
        switches = switches_of({"client": os.getpid(), **args.server_pids}, switches_before)
        if counter is not None:
            counter.stop()
            with open(os.path.join(counting, f"client-{task}.json"), "w") as f:
                json.dump({**counter.snapshot(), "steps": len(times)}, f)
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(os.path.join(profile_dir, f"client-{args.lib}-{task}.prof"))
    return {
        "steps": len(times),
        "seconds": seconds,
        "times": times,
        "per_step": per_step,
        "cpu": cpu,
        "switches": switches,
    }


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process (all its threads) used so far, from ``/proc`` (0.0 where unreadable)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def switches_of(pids: dict[str, int], since: dict[str, int] | None = None) -> dict[str, int]:
    """Each named process's context switches so far, or since ``since`` (an earlier call's result)."""
    return {name: context_switches(pid) - (since or {}).get(name, 0) for name, pid in pids.items()}


def context_switches(pid: int) -> int:
    """Context switches (voluntary and not) of a process's live threads so far, from ``/proc`` (0 where unreadable;
    a thread that has ended takes its count with it).

    Example:
        >>> context_switches(os.getpid()) > 0
        True
    """
    total = 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                # voluntary_ctxt_switches and nonvoluntary_ctxt_switches
                total += sum(int(line.split()[1]) for line in f if "ctxt_switches:" in line)
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended meanwhile
    return total


def thread_cpu_seconds() -> dict[tuple[int, str], float]:
    """User + system CPU seconds of each thread of this process so far, by ``(thread id, thread name)``, from
    ``/proc`` (threads that end while it reads are left out).

    Example:
        >>> any(tid == os.getpid() for tid, _ in thread_cpu_seconds())
        True
    """
    seconds = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as stat:
                comm, _, rest = stat.read().partition("(")[2].rpartition(")")
        except OSError:
            continue
        fields = rest.split()
        seconds[(int(tid), comm)] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return seconds


class OpcodeCounter:
    """Counts the bytecodes (and calls) of every Python function the traced threads run, by code object, and the
    calls they make into C functions that ``sys.setprofile`` reports, by function: builtins and methods of C types
    (``len``, ``dict.get``, ``numpy.frombuffer``, ``Tensor.reshape``, ``torch.from_numpy``). Not seen: Cython-compiled
    functions (pyzmq's ``Socket.send``/``recv``, msgpack's ``packb``/``unpackb``) and operators (``t + t``).

    ``start()`` traces the calling thread and every thread started later, ``stop()`` ends it; ``clear()`` drops
    what was counted so far (a window starts). ``bench_opcodes.py`` counts every process of a run with it.

    Example:
        >>> counter = OpcodeCounter()
        >>> counter.start(); _ = sorted([3, 1, 2], key=lambda v: -v); counter.stop()
        >>> any(name == "<lambda>" for (_, _, name) in counter.opcodes)
        True
        >>> counter.c_calls["builtins.sorted"]
        1
    """

    def __init__(self) -> None:
        self.opcodes: collections.Counter[tuple[str, int, str]] = collections.Counter()
        self.calls: collections.Counter[tuple[str, int, str]] = collections.Counter()
        self.c_calls: collections.Counter[str] = collections.Counter()
        self._on = False

    def _profile(self, frame: Any, event: str, arg: Any) -> None:
        if event == "c_call" and self._on:
            self.c_calls[_c_function_name(arg)] += 1

    def _trace(self, frame: Any, event: str, arg: Any) -> Any:
        if not self._on:
            return None
        code = frame.f_code
        key = (code.co_filename, code.co_firstlineno, code.co_name)
        self.calls[key] += 1
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        opcodes = self.opcodes

        def local(frame: Any, event: str, arg: Any) -> Any:
            if event == "opcode":
                opcodes[key] += 1
            return local

        return local

    def start(self) -> None:
        self._on = True
        threading.settrace(self._trace)
        threading.setprofile(self._profile)
        sys.settrace(self._trace)
        sys.setprofile(self._profile)

    def stop(self) -> None:
        self._on = False
        sys.settrace(None)
        sys.setprofile(None)
        threading.settrace(None)  # type: ignore[arg-type]
        threading.setprofile(None)  # type: ignore[arg-type]

    def clear(self) -> None:
        self.opcodes.clear()
        self.calls.clear()
        self.c_calls.clear()

    def snapshot(self) -> dict[str, Any]:
        """The counts as JSON-ready lists (copied while other threads may still count)."""
        while True:
            try:
                opcodes, calls = list(self.opcodes.items()), list(self.calls.items())
                c_calls = list(self.c_calls.items())
                break
            except RuntimeError:  # another thread added a function while this copied
                continue
        return {
            "opcodes": [[*key, n] for key, n in opcodes],
            "calls": [[*key, n] for key, n in calls],
            "c_calls": [[name, n] for name, n in c_calls],
        }


def _c_function_name(fn: Any) -> str:
    """``numpy.frombuffer``, ``Tensor.reshape``, ``dict.get``: a C function by its owner and name.

    Example:
        >>> _c_function_name(len), _c_function_name([].append)
        ('builtins.len', 'list.append')
    """
    owner = getattr(fn, "__self__", None)
    if owner is None or isinstance(owner, types.ModuleType):
        where = getattr(fn, "__module__", None) or getattr(owner, "__name__", "?")
    else:
        where = (owner if isinstance(owner, type) else type(owner)).__qualname__
    return f"{where}.{getattr(fn, '__name__', '?')}"


def serve_profiled(name: str, argv: list[str]) -> None:
    """``python -m dtf_notebook.server`` with every thread under cProfile; the profiles of all threads, merged,
    go to ``$DTF_BENCH_PROFILE/server-<name>.prof`` when the server stops (SIGINT)."""
    import cProfile
    import threading

    profiles: list[cProfile.Profile] = []

    def start_thread_profile(frame: Any, event: str, arg: Any) -> None:
        profile = cProfile.Profile()
        profiles.append(profile)
        profile.enable()  # replaces this hook in the new thread

    threading.setprofile(start_thread_profile)
    main_profile = cProfile.Profile()
    profiles.append(main_profile)
    import dtf_notebook.server as server_main

    real_exit = os._exit
    from dtf_notebook.distributed.server import Server

    real_stop = Server.stop

    def stop_and_dump_threads(server: Any) -> None:
        # Each thread's CPU seconds, while the server's threads still run (named where Python knows them).
        with open(os.path.join(os.environ["DTF_BENCH_PROFILE"], f"threads-{name}.txt"), "w") as f:
            python_threads = {t.native_id: f"{type(t).__name__} {t.name}" for t in threading.enumerate()}
            for (tid, comm), cpu in sorted(thread_cpu_seconds().items()):
                print(f"{tid:>8} {cpu:8.2f} s  {comm:16s} {python_threads.get(tid, '')}", file=f)
        real_stop(server)

    Server.stop = stop_and_dump_threads

    def dump_and_exit(code: int) -> None:
        import pstats

        stats = pstats.Stats(profiles[0])
        for profile in profiles[1:]:
            try:
                stats.add(profile)
            except (TypeError, ValueError):
                pass  # a thread that never ran Python code
        stats.dump_stats(os.path.join(os.environ["DTF_BENCH_PROFILE"], f"server-{name}.prof"))
        real_exit(code)

    def clear(*_: Any) -> None:  # the measurement window starts (a client sends SIGUSR1): forget the start-up
        for profile in profiles:
            profile.clear()

    signal.signal(signal.SIGUSR1, clear)
    os._exit = dump_and_exit
    main_profile.enable()
    server_main.main(argv)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--serve-profiled":
        serve_profiled(argv[1], argv[2:])
        return
    p = argparse.ArgumentParser(description="one client process of the client-process layout")
    p.add_argument("--lib", choices=("dtf", "tf"), required=True)
    p.add_argument("--workload", required=True)
    p.add_argument("--spec", required=True)
    p.add_argument("--task", type=int, default=0)
    p.add_argument("--clients", type=int, default=1)
    p.add_argument("--duration", type=float, default=5.0)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--data", default="")
    p.add_argument("--extra", default="null")
    p.add_argument("--out", required=True)
    p.add_argument("--server-pids", default="{}", help="JSON name -> pid of servers whose CPU time to report")
    args = p.parse_args(argv)
    args.extra = json.loads(args.extra)
    args.server_pids = json.loads(args.server_pids)
    result = _client(args)
    with open(args.out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
