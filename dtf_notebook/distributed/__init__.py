"""The distributed runtime: clusters of task processes talking over ZeroMQ.

Importing this package registers the ``zmq://`` session backend (and
``grpc://`` as an alias, so TF1 scripts run unchanged).

Example:
    >>> import dtf_notebook as tf
    >>> cluster = tf.train.ClusterSpec({"ps": ["127.0.0.1:2222"], "worker": ["127.0.0.1:2223"]})
    >>> cluster.num_tasks("worker")
    1
"""

from dtf_notebook.distributed.cluster_spec import ClusterSpec
from dtf_notebook.distributed.remote_session import RemoteBackend
from dtf_notebook.distributed.server import Server
from dtf_notebook.runtime.session import register_session_backend

register_session_backend("zmq", RemoteBackend)
register_session_backend("grpc", RemoteBackend)

__all__ = ["ClusterSpec", "RemoteBackend", "Server"]
