"""Runs a TF1 between-graph program of this folder as its authors intended: one process per task (a ps and some
workers on loopback ports picked now), each started with ``--job_name``/``--task_index`` and the cluster's host
flags, under real TensorFlow (its own servers) or dtf_notebook (through ``run_script.py``).

Every process it starts is killed before it returns; the ps serves forever (``server.join()``), as in TF.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence

from dtf_notebook.distributed.cluster_key import write_key_file
from dtf_notebook.distributed.local_process import free_port, task_env

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "run_script.py")


@dataclasses.dataclass
class WorkerRun:
    """What one worker process left: its stdout (``None`` when it was still running after its grace) and stderr."""

    out: str | None
    err: str


def run_tasks(
    lib: str,
    script: str,
    tmp: str,
    workers: int,
    args: Sequence[str],
    *,
    deadline: float,
    runner_options: Mapping[int, Sequence[str]] | None = None,
    may_block: Mapping[int, float] | None = None,
) -> list[WorkerRun]:
    """Runs ``script`` as one ps and ``workers`` worker processes under ``lib`` (``"tf"`` or ``"dtf"``).

    ``args`` go to every task; ``runner_options[i]`` go to ``run_script.py`` for worker ``i`` (``--save-init``...).
    Each worker must exit 0 within ``deadline`` seconds of the start, except that worker ``i`` in ``may_block`` is
    given only ``may_block[i]`` more seconds once the workers before it have finished, and is then stopped and
    reported with ``out=None`` (a sync-mode worker waiting for tokens nobody will hand out, as under TF).
    """
    hosts = {"ps": [f"127.0.0.1:{free_port()}"], "worker": [f"127.0.0.1:{free_port()}" for _ in range(workers)]}
    common = [f"--ps_hosts={','.join(hosts['ps'])}", f"--worker_hosts={','.join(hosts['worker'])}", *args]
    env = task_env()
    if lib == "dtf":
        key_file = os.path.join(tmp, f"cluster-{time.monotonic_ns()}.key")
        write_key_file(key_file)
        env["DTF_CLUSTER_KEY_FILE"] = key_file
    runner_options, may_block = runner_options or {}, may_block or {}
    procs: dict[str, subprocess.Popen] = {}
    paths: dict[str, list[str]] = {}
    blocked: set[int] = set()
    try:
        for job, index in [("ps", 0), *(("worker", i) for i in range(workers))]:
            name = f"{job}{index}"
            paths[name] = [os.path.join(tmp, f"{lib}_{script}_{name}.{s}") for s in ("out", "err")]
            options = runner_options.get(index, []) if job == "worker" else []
            command = [sys.executable, RUNNER, "--lib", lib, *options, script]
            command += [f"--job_name={job}", f"--task_index={index}", *common]
            with open(paths[name][0], "w") as out, open(paths[name][1], "w") as err:
                procs[name] = subprocess.Popen(command, cwd=HERE, env=env, stdout=out, stderr=err)
        end = time.monotonic() + deadline
        for index in range(workers):
            name = f"worker{index}"
            if index in may_block:
                end = min(end, time.monotonic() + may_block[index])
            try:
                code = procs[name].wait(max(1.0, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                if index in may_block:
                    blocked.add(index)
                    continue
                code = "still running after the deadline"
            if code != 0:
                with open(paths[name][1]) as f:
                    raise AssertionError(f"{lib} {script} {name} {list(args)}: {code}\n{f.read()[-4000:]}")
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
            proc.wait()
    runs = []
    for index in range(workers):
        out_path, err_path = paths[f"worker{index}"]
        with open(out_path) as out, open(err_path) as err:
            runs.append(WorkerRun(None if index in blocked else out.read(), err.read()))
    return runs
