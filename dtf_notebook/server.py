"""Start one task of a cluster: ``python -m dtf_notebook.server`` (console script ``dtf-server``).

The cluster comes from ``--cluster`` (JSON, or ``@file.json``) with ``--job``
and ``--task``; or, with neither given, from the environment: ``TF_CONFIG``
(set by Kubernetes/Kubeflow training operators) or SLURM's variables (one
task per SLURM process, jobs split by ``--slurm-jobs ps=1,worker=2``).

Examples:
    python -m dtf_notebook.server --cluster '{"ps": ["10.0.0.1:2222"], "worker": ["10.0.0.2:2222"]}' \\
        --job ps --task 0
    TF_CONFIG='{"cluster": {...}, "task": {"type": "worker", "index": 1}}' python -m dtf_notebook.server
    srun -n 3 python -m dtf_notebook.server --slurm-jobs ps=1,worker=2
    srun -N 2 --ntasks-per-node 4 python -m dtf_notebook.server --gpus-per-node 4   # one GPU per task

With ``--key-file PATH`` (a key from ``dtf-cluster keygen PATH``; or ``DTF_CLUSTER_KEY_FILE``) the task serves
only peers holding that key; without a key it serves anyone who reaches its port, and says so in one line when
that port is reachable from other machines. ``--file-root DIR`` confines the files its ops may touch, and the
``--max-...-per-peer`` flags set what one peer may hold of it (see the README's Security section)::

    dtf-cluster keygen cluster.key    # once; copy it to every machine with owner-only permissions
    python -m dtf_notebook.server --cluster @cluster.json --job ps --task 0 --key-file cluster.key \
        --file-root /shared/checkpoints

The server prints ``ready <job> <task> <address> <pid>`` once it serves, then runs until SIGINT/SIGTERM.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from typing import Any

# A task runs whatever graph a client sends it: besides the op library (``import dtf_notebook`` registers it), the
# ops that the input-pipeline and summary layers register.
from dtf_notebook.data import iterator_ops  # noqa: F401
from dtf_notebook.distributed.cluster_key import read_key_file
from dtf_notebook.distributed.peer_limits import PeerLimits
from dtf_notebook.runtime.config import ConfigProto
from dtf_notebook.summary import media_summaries, summary_ops  # noqa: F401


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (see the module docstring).

    Example:
        >>> parse_args(["--cluster", '{"local": ["127.0.0.1:2222"]}', "--job", "local", "--task", "0"]).task
        0
    """
    p = argparse.ArgumentParser(prog="dtf-server", description="Run one task of a dtf_notebook cluster.")
    p.add_argument("--cluster", help="cluster spec as JSON, or @path to a JSON file")
    p.add_argument("--job", help="this task's job name")
    p.add_argument("--task", type=int, help="this task's index in its job")
    p.add_argument(
        "--slurm-jobs",
        default="ps=1,worker=-1",
        help="under SLURM: tasks per job in rank order, -1 = the rest (default ps=1,worker=-1)",
    )
    p.add_argument("--slurm-port-base", type=int, default=8888)
    p.add_argument(
        "--gpus-per-node",
        type=int,
        help="under SLURM: GPUs on each node, shared out among its tasks through CUDA_VISIBLE_DEVICES",
    )
    p.add_argument(
        "--gpus-per-task",
        type=int,
        help="under SLURM: GPUs for each task (local rank r gets GPUs r*N .. r*N+N-1 in CUDA_VISIBLE_DEVICES)",
    )
    p.add_argument("--virtual-gpus", type=int, default=0, help="CPU-backed /gpu:N devices for this task")
    p.add_argument("--memory-fraction", type=float, default=0.0, help="per-process GPU memory fraction")
    p.add_argument(
        "--key-file",
        "--cluster-key-file",
        dest="key_file",
        metavar="PATH",
        help="the cluster key (from `dtf-cluster keygen PATH`; only its owner may read it): peers without it are "
        "refused (default: DTF_CLUSTER_KEY or DTF_CLUSTER_KEY_FILE; none: any peer is served)",
    )
    p.add_argument("--cluster-salt", metavar="NAME", help="when the key is a passphrase: the salt naming the cluster")
    p.add_argument(
        "--file-root",
        action="append",
        metavar="DIR",
        help="confine this task's file access (checkpoints) to DIR (repeatable; default: anywhere)",
    )
    limits = PeerLimits()
    for name, what in (
        ("sessions", "open sessions"),
        ("inflight_bytes", "bytes of requests in flight"),
        ("requests", "requests in flight"),
        ("streams", "large requests arriving at once"),
    ):
        flag = "--max-" + name.replace("_", "-") + "-per-peer"
        default = getattr(limits, f"max_{name}")
        p.add_argument(flag, type=int, default=default, metavar="N", help=f"cap on {what} per peer (default {default})")
    p.add_argument(
        "--session-gc-secs",
        type=float,
        default=0.0,
        help="close master sessions idle this long, e.g. of clients that died (default 0: never)",
    )
    return p.parse_args(argv)


def _load_cluster(text: str) -> Any:
    if text.startswith("@"):
        with open(text[1:], encoding="utf-8") as f:
            text = f.read()
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise SystemExit(f"dtf-server: --cluster is not valid JSON: {e}") from None


def _slurm_jobs(text: str, total: int) -> dict[str, int]:
    jobs: dict[str, int] = {}
    for part in filter(None, text.split(",")):
        name, _, count = part.partition("=")
        jobs[name] = int(count)
    rest = total - sum(n for n in jobs.values() if n >= 0)
    return {name: (rest if n < 0 else n) for name, n in jobs.items() if (rest if n < 0 else n) > 0}


def resolve(args: argparse.Namespace) -> tuple[Any, str, int]:
    """Works out ``(cluster, job, task)`` from the arguments or the environment.

    Under SLURM with ``--gpus-per-node`` or ``--gpus-per-task``, this also sets the task's
    ``CUDA_VISIBLE_DEVICES`` (as TF's SlurmClusterResolver with ``auto_set_gpu``), before anything starts CUDA.

    Raises:
        SystemExit: nothing says which cluster or task this is, or GPU flags are given outside SLURM.

    Example:
        >>> args = parse_args(["--cluster", '{"ps": ["127.0.0.1:2222"]}', "--job", "ps", "--task", "0"])
        >>> cluster, job, task = resolve(args)
        >>> job, task
        ('ps', 0)
    """
    slurm = "SLURM_PROCID" in os.environ and not args.cluster and not os.environ.get("TF_CONFIG", "").strip()
    gpus = {"gpus_per_node": args.gpus_per_node, "gpus_per_task": args.gpus_per_task}
    if not slurm and any(n is not None for n in gpus.values()):
        raise SystemExit(
            "dtf-server: --gpus-per-node and --gpus-per-task only apply under SLURM (use CUDA_VISIBLE_DEVICES)"
        )
    if args.cluster:
        if args.job is None or args.task is None:
            raise SystemExit("dtf-server: --cluster needs --job and --task")
        return _load_cluster(args.cluster), args.job, args.task
    from dtf_notebook.distributed.resolvers import SlurmClusterResolver, TFConfigClusterResolver

    if os.environ.get("TF_CONFIG", "").strip():
        resolver: Any = TFConfigClusterResolver()
    elif slurm:
        total = int(os.environ.get("SLURM_STEP_NUM_TASKS") or os.environ.get("SLURM_NTASKS") or "1")
        try:
            resolver = SlurmClusterResolver(
                jobs=_slurm_jobs(args.slurm_jobs, total), port_base=args.slurm_port_base, **gpus
            )
        except (RuntimeError, ValueError) as e:
            raise SystemExit(f"dtf-server: {e}") from None
    else:
        raise SystemExit("dtf-server: give --cluster/--job/--task, or set TF_CONFIG, or run under SLURM")
    spec = resolver.cluster_spec()
    job = args.job or resolver.task_type
    task = args.task if args.task is not None else resolver.task_id
    if job is None or task is None:
        raise SystemExit("dtf-server: the environment does not say which task this process is")
    return spec, job, int(task)


def main(argv: list[str] | None = None) -> int:
    """Starts the task and serves until interrupted."""
    args = parse_args(argv)
    cluster, job, task = resolve(args)
    config = ConfigProto(virtual_gpus=args.virtual_gpus, session_gc_secs=args.session_gc_secs)
    config.gpu_options.per_process_gpu_memory_fraction = args.memory_fraction
    config.cluster_key_salt = args.cluster_salt or ""
    try:
        if args.key_file:
            config.cluster_key = read_key_file(args.key_file)  # parsed (and refused if malformed) by the Server
        limits = PeerLimits(
            **{k.removesuffix("_per_peer"): v for k, v in vars(args).items() if k.endswith("_per_peer")}
        )
    except (OSError, ValueError) as e:
        raise SystemExit(f"dtf-server: {e}") from None
    from dtf_notebook.distributed.server import Server

    try:
        server = Server(
            cluster, job_name=job, task_index=task, config=config, file_roots=args.file_root, peer_limits=limits
        )
    except ValueError as e:
        raise SystemExit(f"dtf-server: {e}") from None
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: server.stop())
    print(f"ready {job} {task} {server.address} {os.getpid()}", flush=True)
    server.join()
    # The task is done: leave now rather than wait for handler threads still blocked on vanished peers.
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
