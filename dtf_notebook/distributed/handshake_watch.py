"""Telling "the task is down" from "the task refused our key" while a connection does not come up.

A DEALER socket connecting to a task whose cluster key differs from ours (or that has a key where we have none,
or none where we have one) never completes its ZeroMQ handshake, so a send waits as if the task were down. A
monitor on the socket sees why: :func:`watch` attaches one, and :func:`refusal` turns a failed handshake into
an ``UnauthenticatedError`` that says which side lacks which key, at once instead of after the dead-peer wait.

Example:
    >>> from dtf_notebook.distributed.cluster_key import ClusterKey
    >>> from dtf_notebook.distributed.service_socket import ServiceSocket
    >>> server = ServiceSocket("127.0.0.1:0", lambda m, h, t: ({}, []), cluster_key=ClusterKey.generate())
    >>> sock = zmq.Context.instance().socket(zmq.DEALER)
    >>> monitor = watch(sock)
    >>> _ = sock.connect(f"tcp://{server.address}")
    >>> error = None
    >>> for _ in range(100):
    ...     error = error or refusal(monitor, server.address, None)
    ...     if error: break
    ...     _ = monitor.poll(20)
    >>> type(error).__name__
    'UnauthenticatedError'
    >>> unwatch(sock, monitor); sock.close(0); server.close()
"""

from __future__ import annotations

import zmq
from zmq.utils.monitor import parse_monitor_message

from dtf_notebook import errors
from dtf_notebook.distributed.cluster_key import ClusterKey

__all__ = ["refusal", "unwatch", "watch"]

_FAILED = {
    int(zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL): "protocol",
    int(zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL): "refused",
    int(zmq.EVENT_HANDSHAKE_FAILED_AUTH): "refused",
}
_EVENTS = int(
    zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL | zmq.EVENT_HANDSHAKE_FAILED_AUTH
)


def watch(sock: zmq.Socket) -> zmq.Socket:
    """Attaches a monitor reporting ``sock``'s failed handshakes (call before ``connect``, so none is missed)."""
    return sock.get_monitor_socket(events=_EVENTS)


def unwatch(sock: zmq.Socket, monitor: zmq.Socket) -> None:
    """Detaches and closes a monitor made by :func:`watch`."""
    try:
        sock.disable_monitor()
    except zmq.ZMQError:
        pass  # the socket is closed already
    monitor.close(0)


def refusal(monitor: zmq.Socket, address: str, key: ClusterKey | None) -> errors.UnauthenticatedError | None:
    """The error a failed handshake reported on ``monitor`` means (None when none failed since the last call).

    ``key`` is the one this side connects with (None: no key).
    """
    failure = None
    while monitor.poll(0):
        event = parse_monitor_message(monitor.recv_multipart())
        failure = _FAILED.get(int(event["event"]), failure)
    if failure is None:
        return None
    if key is None:
        why = "it requires a cluster key and this client has none"
        fix = (
            "connect with the cluster's key: ConfigProto(cluster_key=...), DTF_CLUSTER_KEY_FILE, or "
            "%dtf_cluster connect NAME / LocalCluster.connect(NAME) for a local cluster of yours"
        )
    elif failure == "protocol":
        why = f"this client holds cluster key {key.fingerprint} and the task runs without one"
        fix = "connect without a key (unset DTF_CLUSTER_KEY / DTF_CLUSTER_KEY_FILE) or give the task the key"
    else:
        why = f"it has another cluster key than this client's ({key.fingerprint})"
        fix = "use the key the cluster was started with"
    return errors.UnauthenticatedError(None, None, f"The task at {address} refused this client: {why}; {fix}")
