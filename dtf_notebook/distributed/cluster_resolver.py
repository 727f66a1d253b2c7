"""The cluster-resolver base class, :class:`SimpleClusterResolver`, and master-URL formatting.

A resolver tells a process its cluster, its own task and the master to talk to
(``tf.distribute.cluster_resolver.ClusterResolver``); the subclasses that read the
environment are in ``tf_config_resolver`` and ``slurm_resolver``.

Example:
    >>> resolver = SimpleClusterResolver({"worker": ["w0:2222"]}, task_type="worker", task_id=0)
    >>> resolver.master()
    'zmq://w0:2222'
"""

from __future__ import annotations

import abc
import os
from collections.abc import Mapping, MutableMapping
from typing import Any

from dtf_notebook.distributed.cluster_spec import ClusterSpec

__all__ = ["DEFAULT_RPC_LAYER", "ClusterResolver", "Environ", "SimpleClusterResolver", "format_master_url"]

DEFAULT_RPC_LAYER = "zmq"
Environ = MutableMapping[str, str]


def format_master_url(master: str, rpc_layer: str | None = None) -> str:
    """Prefixes ``master`` with ``rpc_layer://`` unless it is empty or already has a scheme.

    Example:
        >>> format_master_url("w0:2222", "zmq"), format_master_url("grpc://w0:2222", "zmq")
        ('zmq://w0:2222', 'grpc://w0:2222')
    """
    # TF prefixes blindly ("grpc://grpc://..."); an address with a scheme is final.
    if not master or not rpc_layer or "://" in master:
        return master
    return f"{rpc_layer}://{master}"


class ClusterResolver(abc.ABC):
    """Base class: tells a process its cluster, its own task and the master to talk to.

    Subclasses implement :meth:`cluster_spec` and :meth:`master`. ``task_type``,
    ``task_id`` and ``rpc_layer`` are settable; a value set wins over what the
    environment says, and ``None`` means unknown (``rpc_layer``: ``"zmq"``).

    Example:
        >>> resolver = SimpleClusterResolver(ClusterSpec({"ps": ["p0:1"]}), task_type="ps", task_id=0)
        >>> resolver.task_id = 3
        >>> isinstance(resolver, ClusterResolver), resolver.task_id, resolver.rpc_layer, resolver.environment
        (True, 3, 'zmq', '')
    """

    _task_type: str | None = None
    _task_id: int | None = None
    _rpc_layer: str | None = None
    _environment: str | None = None

    @abc.abstractmethod
    def cluster_spec(self) -> ClusterSpec:
        """Returns the cluster as it is now (read afresh on every call)."""

    @abc.abstractmethod
    def master(self, task_type: str | None = None, task_id: int | None = None, rpc_layer: str | None = None) -> str:
        """Returns the session target (``"zmq://host:port"``, or ``""`` for in-process)."""

    def num_accelerators(
        self, task_type: str | None = None, task_id: int | None = None, config_proto: Any = None
    ) -> dict[str, int]:
        """Returns accelerator counts per task (``{"GPU": 2}``); ``{}`` when the resolver does not know.

        Example:
            >>> SimpleClusterResolver(ClusterSpec({}), num_accelerators={"GPU": 2}).num_accelerators()
            {'GPU': 2}
        """
        return {}

    def _configured_task(self) -> tuple[str | None, int | None]:
        # What the environment names as this task; overridden by TFConfigClusterResolver.
        return None, None

    def _configured_rpc_layer(self) -> str | None:
        return None

    @property
    def environment(self) -> str:
        """``""`` outside Google's internal environment, as in TF."""
        return self._environment or ""

    @property
    def task_type(self) -> str | None:
        """This process's job name (``"chief"``, ``"worker"``, ``"ps"``, ``"evaluator"``...), if known."""
        return self._task_type if self._task_type is not None else self._configured_task()[0]

    @task_type.setter
    def task_type(self, task_type: str | None) -> None:
        self._task_type = task_type

    @property
    def task_id(self) -> int | None:
        """This process's task index within its job, if known."""
        return self._task_id if self._task_id is not None else self._configured_task()[1]

    @task_id.setter
    def task_id(self, task_id: int | None) -> None:
        self._task_id = task_id

    @property
    def rpc_layer(self) -> str:
        """The scheme put in front of master addresses: the one set, else the environment's, else ``"zmq"``."""
        return self._rpc_layer or self._configured_rpc_layer() or DEFAULT_RPC_LAYER

    @rpc_layer.setter
    def rpc_layer(self, rpc_layer: str | None) -> None:
        self._rpc_layer = rpc_layer

    def _task_master(self, task_type: str | None, task_id: int | None, rpc_layer: str | None) -> str:
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        if task_type is None or task_id is None:
            raise RuntimeError(
                f"Cannot name a master: task_type={task_type!r}, task_id={task_id!r}; "
                "pass both, or give the resolver its own task"
            )
        address = self.cluster_spec().task_address(task_type, task_id)
        return format_master_url(address, rpc_layer or self.rpc_layer)


class SimpleClusterResolver(ClusterResolver):
    """A resolver holding a given cluster and task (``tf.distribute.cluster_resolver.SimpleClusterResolver``).

    The arguments keep TF's order (``master`` second), so pass the rest by keyword.

    Example:
        >>> cluster = ClusterSpec({"ps": ["p0:2222"], "worker": ["w0:2222", "w1:2222"]})
        >>> resolver = SimpleClusterResolver(cluster, task_type="worker", task_id=1)
        >>> resolver.master(), resolver.master("ps", 0, rpc_layer="grpc")
        ('zmq://w1:2222', 'grpc://p0:2222')

    Args:
        cluster_spec: a ``ClusterSpec`` or anything its constructor accepts.
        master: the session target when ``master()`` is called without a task;
            ``""`` means this process's own task (or in-process if it has none).
        task_type, task_id: this process's task.
        environment: returned by ``environment``.
        num_accelerators: returned by ``num_accelerators()``.
        rpc_layer: scheme for master addresses (``None``: ``"zmq"``).

    Raises:
        TypeError: ``master`` or ``task_type`` is not a string, or ``task_id`` not an int.
    """

    def __init__(
        self,
        cluster_spec: ClusterSpec | Mapping[str, Any],
        master: str = "",
        task_type: str | None = None,
        task_id: int | None = None,
        environment: str = "",
        num_accelerators: Mapping[str, int] | None = None,
        rpc_layer: str | None = DEFAULT_RPC_LAYER,
    ) -> None:
        # Checked because TF's order puts master second: SimpleClusterResolver(c, "worker", 0) must fail loudly.
        if not isinstance(master, str):
            raise TypeError(f"master must be a string, not {master!r}")
        if task_type is not None and not isinstance(task_type, str):
            raise TypeError(f"task_type must be a job name string, not {task_type!r}")
        if task_id is not None and (isinstance(task_id, bool) or not isinstance(task_id, int)):
            raise TypeError(f"task_id must be an integer, not {task_id!r}")
        self._cluster_spec = ClusterSpec(cluster_spec)
        self._master = master
        self._task_type = task_type
        self._task_id = task_id
        self._environment = environment
        self._num_accelerators = dict(num_accelerators or {})
        self._rpc_layer = rpc_layer

    def cluster_spec(self) -> ClusterSpec:
        """Returns the cluster given to the constructor."""
        return self._cluster_spec

    def master(self, task_type: str | None = None, task_id: int | None = None, rpc_layer: str | None = None) -> str:
        """Returns the given task's address, else the ``master`` given, else this task's address, else ``""``.

        Example:
            >>> SimpleClusterResolver(ClusterSpec({"w": ["w0:1"]}), master="zmq://other:5").master()
            'zmq://other:5'

        Raises:
            ValueError: the task is not in the cluster.
        """
        explicit = task_type is not None or task_id is not None
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        if (self._master and not explicit) or task_type is None or task_id is None:
            return format_master_url(self._master, rpc_layer or self.rpc_layer)
        return self._task_master(task_type, task_id, rpc_layer)

    def num_accelerators(
        self, task_type: str | None = None, task_id: int | None = None, config_proto: Any = None
    ) -> dict[str, int]:
        """Returns a copy of the ``num_accelerators`` given to the constructor."""
        return dict(self._num_accelerators)


def _environ(environ: Environ | None) -> Environ:
    # Resolved on each call, so tests and launchers may change os.environ freely.
    return os.environ if environ is None else environ
