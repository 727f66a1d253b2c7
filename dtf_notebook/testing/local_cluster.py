"""``tf.test.create_local_cluster``: a cluster of in-process ``tf.train.Server`` tasks for a test.

As in TF, every task is a :class:`~dtf_notebook.distributed.server.Server` in the calling process, serving on a
free loopback port (``localhost:PORT``), and the workers' ``target`` is what a test gives ``tf.Session``. Unlike
TF's (which listen unauthenticated), the cluster is locked like every cluster the toolkit starts: its tasks share a
random cluster key, which this process remembers for their addresses, so the test's sessions (and ``Server`` peers)
use it with no extra step while other users of the machine reach nothing. A task config that names a
``cluster_key`` keeps it. A process of the test's own that must connect too can take the key from
``server.server_def.default_session_config.cluster_key`` (``DTF_CLUSTER_KEY``).

The servers stop, their ports are released and their key is forgotten by :func:`stop_local_cluster` or, at the
latest, when the process exits.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> workers, ps = create_local_cluster(num_workers=1, num_ps=1)
    >>> with tf.Graph().as_default():
    ...     with tf.device("/job:ps/task:0"):
    ...         v = tf.Variable(2.0)
    ...     with tf.device("/job:worker/task:0"):
    ...         y = v * 3.0
    ...     with tf.Session(workers[0].target) as sess:
    ...         sess.run(v.initializer)
    ...         print(sess.run(y))
    6.0
    >>> stop_local_cluster(workers + ps)
"""

from __future__ import annotations

import atexit
import dataclasses
import threading
from collections.abc import Iterable
from typing import Any

__all__ = ["create_local_cluster", "stop_local_cluster"]

_lock = threading.Lock()
_running: list[Any] = []  # servers of create_local_cluster not stopped yet, stopped at exit


def create_local_cluster(
    num_workers: int,
    num_ps: int,
    protocol: str = "grpc",
    worker_config: Any = None,
    ps_config: Any = None,
) -> tuple[list[Any], list[Any]]:
    """Starts ``num_workers`` worker and ``num_ps`` ps tasks in this process on free loopback ports.

    Args:
        num_workers: Tasks of job ``worker`` (at least 1, as in TF).
        num_ps: Tasks of job ``ps`` (0: no ps job).
        protocol: ``"grpc"`` (TF's; the same transport here) or ``"zmq"``.
        worker_config, ps_config: ``tf.ConfigProto`` of the worker and ps tasks.

    Returns:
        ``(workers, ps_servers)``: the started ``tf.train.Server`` objects, in task order.

    Raises:
        ValueError: ``num_workers`` is below 1 or ``num_ps`` below 0, or ``protocol`` is unknown.

    Example:
        >>> workers, ps = create_local_cluster(2, 0)
        >>> [w.task_index for w in workers], ps, sorted(workers[0].cluster_spec.jobs)
        ([0, 1], [], ['worker'])
        >>> stop_local_cluster(workers)
    """
    from dtf_notebook.distributed import keyring
    from dtf_notebook.distributed.cluster_key import ClusterKey
    from dtf_notebook.distributed.cluster_spec import ClusterSpec
    from dtf_notebook.distributed.local_process import free_port
    from dtf_notebook.distributed.server import Server

    if num_workers < 1:
        raise ValueError(f"create_local_cluster needs at least one worker, got num_workers={num_workers}")
    if num_ps < 0:
        raise ValueError(f"num_ps must be at least 0, got {num_ps}")
    spec: dict[str, list[str]] = {"worker": [f"localhost:{free_port()}" for _ in range(num_workers)]}
    if num_ps > 0:
        spec["ps"] = [f"localhost:{free_port()}" for _ in range(num_ps)]
    cluster = ClusterSpec(spec)
    key = ClusterKey.generate()
    keyring.remember([a for addresses in spec.values() for a in addresses], key)
    started: list[Any] = []
    try:
        for job, count, config in (("worker", num_workers, worker_config), ("ps", num_ps, ps_config)):
            for index in range(count):
                server = Server(cluster, job_name=job, task_index=index, protocol=protocol, config=_locked(config, key))
                started.append(server)
                with _lock:
                    _running.append(server)
    except BaseException:
        stop_local_cluster(started)
        raise
    return started[:num_workers], started[num_workers:]


def _locked(config: Any, key: Any) -> Any:
    """The runtime config of ``config`` with the cluster's key, unless it names a key of its own."""
    from dtf_notebook.runtime.config import as_config

    config = as_config(config)
    return config if config.cluster_key else dataclasses.replace(config, cluster_key=key.text)


def stop_local_cluster(servers: Iterable[Any]) -> None:
    """Stops the servers of :func:`create_local_cluster` (their ports are free again) and forgets their key.

    Example:
        >>> workers, ps = create_local_cluster(1, 0)
        >>> stop_local_cluster(workers); stop_local_cluster(workers)  # stopping twice does nothing
    """
    from dtf_notebook.distributed import keyring

    servers = list(servers)
    for server in servers:
        server.stop()
        with _lock:
            if server in _running:
                _running.remove(server)
    keyring.remember([s.cluster_spec.task_address(s.job_name, s.task_index) for s in servers], None)


def _stop_all() -> None:
    with _lock:
        left = list(_running)
    if left:
        stop_local_cluster(left)


atexit.register(_stop_all)
