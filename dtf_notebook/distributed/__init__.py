"""The distributed runtime: clusters of task processes talking over ZeroMQ.

Importing this package registers the ``zmq://`` session backend (and ``grpc://`` as an alias, so TF1 scripts run
unchanged). The package loads its parts when they are first used: a client never imports the server's services,
and the package's root (which registers key sources here) pays for none of it.

Example:
    >>> import dtf_notebook as tf
    >>> cluster = tf.train.ClusterSpec({"ps": ["127.0.0.1:2222"], "worker": ["127.0.0.1:2223"]})
    >>> cluster.num_tasks("worker")
    1
"""

import importlib as _importlib
from typing import Any

from dtf_notebook.runtime.session_backends import register_session_backend

__all__ = ["ClusterSpec", "RemoteBackend", "Server"]

_HOMES = {
    "ClusterSpec": "dtf_notebook.distributed.cluster_spec",
    "RemoteBackend": "dtf_notebook.distributed.remote_session",
    "Server": "dtf_notebook.distributed.server",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(_HOMES[name]), name)
    globals()[name] = value
    return value


def _remote_backend(target: str, graph: Any, config: Any) -> Any:
    """A session's backend for a ``zmq://``/``grpc://`` target (the client's modules load with the first one)."""
    from dtf_notebook.distributed.remote_session import RemoteBackend

    return RemoteBackend(target, graph, config)


register_session_backend("zmq", _remote_backend)
register_session_backend("grpc", _remote_backend)
