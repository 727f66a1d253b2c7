"""Cluster resolvers: find the cluster and this process's task from the environment.

Mirrors ``tf.distribute.cluster_resolver`` (TF 2.21's ``cluster_resolver.py``,
``tfconfig_cluster_resolver.py`` and ``slurm_cluster_resolver.py``):

* :class:`SimpleClusterResolver` holds what it is given.
* :class:`TFConfigClusterResolver` reads the ``TF_CONFIG`` JSON that Kubernetes /
  Kubeflow TFJob operators set, every time it is asked (never at import).
* :class:`SlurmClusterResolver` reads SLURM's job-step variables when built.
* :func:`resolve_from_environment` picks one of the last two, or ``None``.

Differences from TF, all deliberate: ``master()`` defaults to the ``zmq://``
scheme (``rpc_layer="grpc"`` gives ``grpc://``, which our sessions accept);
``SimpleClusterResolver.master()`` without arguments falls back to its own task's
address; resolvers take an optional ``environ`` mapping to read (and, for
SLURM's ``CUDA_VISIBLE_DEVICES``, write) instead of ``os.environ``; SLURM tasks
follow the node list's order (TF sorts host names, so ``node10`` came before
``node9``) and GPUs are only managed when ``gpus_per_node`` or ``gpus_per_task``
is given (TF runs ``nvidia-smi``). Task types stay TF's: ``chief``, ``worker``,
``ps`` and ``evaluator`` (the evaluator is usually not part of the cluster).

The classes live in ``cluster_resolver`` (base, simple), ``tf_config_resolver`` and
``slurm_resolver``; this module gathers them and picks one for the environment.

Example:
    >>> import json
    >>> env = {"TF_CONFIG": json.dumps({"cluster": {"chief": ["c0:2222"], "worker": ["w0:2222", "w1:2222"]},
    ...                                 "task": {"type": "worker", "index": 1}})}
    >>> resolver = resolve_from_environment(environ=env)
    >>> resolver.task_type, resolver.task_id, resolver.master()
    ('worker', 1, 'zmq://w1:2222')
"""

from __future__ import annotations

from collections.abc import Mapping

from dtf_notebook.distributed.cluster_resolver import (
    DEFAULT_RPC_LAYER as DEFAULT_RPC_LAYER,
)
from dtf_notebook.distributed.cluster_resolver import (
    ClusterResolver,
    Environ,
    SimpleClusterResolver,
    _environ,
    format_master_url,
)
from dtf_notebook.distributed.slurm_resolver import SlurmClusterResolver, expand_hostlist, expand_tasks_per_node
from dtf_notebook.distributed.tf_config_resolver import TFConfigClusterResolver

__all__ = [
    "ClusterResolver",
    "SimpleClusterResolver",
    "SlurmClusterResolver",
    "TFConfigClusterResolver",
    "expand_hostlist",
    "expand_tasks_per_node",
    "format_master_url",
    "resolve_from_environment",
]


def resolve_from_environment(
    jobs: Mapping[str, int] | None = None, port_base: int = 8888, *, environ: Environ | None = None
) -> ClusterResolver | None:
    """Returns a resolver for the environment: ``TF_CONFIG`` if set, else SLURM if ``SLURM_PROCID`` is set, else None.

    ``jobs`` and ``port_base`` go to :class:`SlurmClusterResolver` (which then
    leaves GPUs alone); ``TF_CONFIG`` names its own jobs and ports.

    Example:
        >>> resolve_from_environment(environ={}) is None
        True
        >>> env = {"SLURM_PROCID": "0", "SLURM_JOB_NODELIST": "n1", "SLURM_TASKS_PER_NODE": "2", "SLURM_NTASKS": "2"}
        >>> resolve_from_environment(environ=env).cluster_spec()
        ClusterSpec({'worker': ['n1:8888', 'n1:8889']})
    """
    env = _environ(environ)
    if env.get("TF_CONFIG", "").strip():
        return TFConfigClusterResolver(environ=environ)
    if env.get("SLURM_PROCID", "").strip():
        return SlurmClusterResolver(jobs, port_base=port_base, environ=environ)
    return None
