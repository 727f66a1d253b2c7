"""Telling "the task is down" from "the task refused our key" while a connection does not come up.

A DEALER socket connecting to a task whose cluster key differs from ours (or that has a key where we have none,
or none where we have one) never completes its ZeroMQ handshake, so a send waits as if the task were down. A
monitor on the socket sees why: :func:`watch` attaches one, and :func:`refusal` turns a failed handshake into
an ``UnauthenticatedError`` that says which side lacks which key, at once instead of after the dead-peer wait.
The same monitor counts the socket's connections that broke (see :func:`~.zmq_util.watch_breaks`), so that a
call waiting on a connection that broke fails at once.

Example:
    >>> from dtf_notebook.distributed.cluster_key import ClusterKey
    >>> from dtf_notebook.distributed.service_socket import ServiceSocket
    >>> server = ServiceSocket("127.0.0.1:0", lambda m, h, t: ({}, []), cluster_key=ClusterKey.generate())
    >>> sock = zmq.Context.instance().socket(zmq.DEALER)
    >>> handshakes = watch(sock)
    >>> _ = sock.connect(f"tcp://{server.address}")
    >>> error = None
    >>> for _ in range(100):
    ...     error = error or refusal(handshakes, server.address, None)
    ...     if error: break
    ...     _ = handshakes.monitor.poll(20)
    >>> type(error).__name__
    'UnauthenticatedError'
    >>> unwatch(sock, handshakes); sock.close(0); server.close()
"""

from __future__ import annotations

import errno
import itertools
import socket
import time

from dtf_notebook import errors
from dtf_notebook.distributed.cluster_key import ClusterKey
from dtf_notebook.distributed.zmq_util import _DISCONNECTED, _POLLIN, unwatch_breaks
from dtf_notebook.distributed.zmq_util import _EVENTS as _SOCKET_EVENTS
from dtf_notebook.distributed.zmq_util import _HANDSHAKE_SUCCEEDED as _SUCCEEDED
from dtf_notebook.lazy_modules import zmq

__all__ = ["HandshakeWatch", "greeting_mechanism", "read_events", "refusal", "unwatch", "watch"]

# zmq.h's ZMQ_EVENT_HANDSHAKE_* values, written out so that importing this module does not import pyzmq (a test
# checks them against pyzmq's).
_PROTOCOL = 0x2000  # FAILED_PROTOCOL: one side speaks CurveZMQ, the other not: a key mismatch
_AUTH = 0x4000  # FAILED_AUTH: the task's authenticator refused our key
_NO_DETAIL = 0x0800  # FAILED_NO_DETAIL: a wrong key (EPIPE), or a reset mid-handshake
_EVENTS = _PROTOCOL | _AUTH | _NO_DETAIL | _SUCCEEDED | _DISCONNECTED
# A task with another key drops our hello at every attempt (reconnects come every 50-500 ms); a task going down
# resets a connection once. Only this many failures in a row, with no handshake between, count as a refusal.
_NO_DETAIL_IN_A_ROW = 3


_serials = itertools.count(1)


class HandshakeWatch:
    """The monitor of one socket's handshakes, how many unclear failures came in a row since the last success, the
    refusal they mean (not reported yet), and how many of the socket's connections broke so far.

    Made by :func:`watch`; :func:`read_events` and :func:`refusal` read it, :func:`unwatch` closes it.
    """

    __slots__ = ("monitor", "failures_in_a_row", "failure", "breaks", "unclear", "serial", "down")

    def __init__(self, monitor: zmq.Socket) -> None:
        self.monitor = monitor
        self.serial = next(_serials)  # tells this socket's breaks from those of one made later for the same peer
        self.failures_in_a_row = 0
        self.failure: str | None = None
        self.breaks = 0
        self.unclear = False  # a handshake failed without saying why since the task's greeting was last probed
        # A connection broke and none has come up since: hold messages back (see zmq_util.watch_breaks).
        self.down = False


def watch(sock: zmq.Socket) -> HandshakeWatch:
    """Attaches a monitor reporting ``sock``'s handshakes (call before ``connect``, so none is missed)."""
    return HandshakeWatch(sock.get_monitor_socket(events=_EVENTS))


def unwatch(sock: zmq.Socket, handshakes: HandshakeWatch) -> None:
    """Detaches and closes a monitor made by :func:`watch`."""
    unwatch_breaks(sock, handshakes.monitor)


def read_events(handshakes: HandshakeWatch, key: ClusterKey | None) -> None:
    """Takes in the events waiting on the monitor (without blocking): handshakes that say the task refused this
    side's key (``key``: the one it connects with, None for none), and connections that broke.

    Example:
        >>> sock = zmq.Context.instance().socket(zmq.DEALER)
        >>> handshakes = watch(sock)
        >>> read_events(handshakes, None)
        >>> handshakes.breaks, handshakes.failure
        (0, None)
        >>> unwatch(sock, handshakes); sock.close(0)
    """
    monitor = handshakes.monitor
    while monitor.getsockopt(_SOCKET_EVENTS) & _POLLIN:  # cheaper than a poll: a call reads this before it sends
        from zmq.utils.monitor import parse_monitor_message  # pyzmq is imported by the time a socket exists

        message = parse_monitor_message(monitor.recv_multipart())
        event, value = int(message["event"]), int(message["value"])
        if event == _DISCONNECTED:
            handshakes.breaks += 1
            handshakes.down = True
        elif event == _SUCCEEDED:
            handshakes.down = False
            handshakes.failures_in_a_row = 0
            handshakes.failure = None
            handshakes.unclear = False
        elif event in (_PROTOCOL, _AUTH):
            handshakes.failure = "protocol" if event == _PROTOCOL else "refused"
        elif event == _NO_DETAIL:
            # A task with another key closes on our hello (we see EPIPE); a reset (ECONNRESET) is a task going
            # down, or a task that speaks another mechanism and closed before we read its greeting (a race a
            # loaded machine loses now and then): refusal() then asks the task which mechanism it speaks.
            handshakes.unclear = True
            if key is None or value != errno.EPIPE:
                continue
            handshakes.failures_in_a_row += 1
            if handshakes.failures_in_a_row >= _NO_DETAIL_IN_A_ROW:
                handshakes.failure = "refused"


def refusal(
    handshakes: HandshakeWatch, address: str, key: ClusterKey | None, patience: float = 1.0
) -> errors.UnauthenticatedError | None:
    """The error the handshakes seen since the last call mean, when they say the task refused this client's key
    (None otherwise: no failure, or one a task going down could cause too).

    ``key`` is the one this side connects with (None: no key); ``patience`` bounds the greeting probe (seconds).
    """
    read_events(handshakes, key)
    failure, handshakes.failure = handshakes.failure, None
    if failure is None and handshakes.unclear:
        handshakes.unclear = False
        spoken = greeting_mechanism(address, patience)
        if spoken is not None and spoken != ("NULL" if key is None else "CURVE"):
            failure = "protocol"
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


def greeting_mechanism(address: str, timeout: float = 1.0) -> str | None:
    """The security mechanism (``"NULL"``, ``"CURVE"``) the ZeroMQ task at ``host:port`` announces in its ZMTP 3
    greeting; None when no greeting comes (nothing listens, the connection is reset, or it is no ZeroMQ task).

    It reads the greeting as libzmq's own client does, a step at a time (signature, then major version), so
    the task sends all of its greeting before it could see a mismatch and close; it never sends a mechanism.

    Example:
        >>> from dtf_notebook.distributed.cluster_key import ClusterKey
        >>> from dtf_notebook.distributed.service_socket import ServiceSocket
        >>> server = ServiceSocket("127.0.0.1:0", lambda m, h, t: ({}, []), cluster_key=ClusterKey.generate())
        >>> greeting_mechanism(server.address)
        'CURVE'
        >>> server.close()
    """
    if "://" in address and not address.startswith("tcp://"):
        return None
    host, _, port = address.split("://")[-1].rpartition(":")
    deadline = time.monotonic() + timeout  # for the whole probe: a peer dribbling bytes cannot stretch it
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as probe:
            probe.sendall(_SIGNATURE)
            theirs = _read_exactly(probe, len(_SIGNATURE), deadline)
            if theirs[:1] != b"\xff" or theirs[-1:] != b"\x7f":
                return None
            probe.sendall(b"\x03")  # ZMTP 3: the task answers with the rest of its greeting
            rest = _read_exactly(probe, _GREETING - len(_SIGNATURE), deadline)
    except (OSError, ValueError):
        return None
    if len(rest) < 22:  # version (2 bytes) and mechanism (20)
        return None
    return rest[2:22].rstrip(b"\0").decode("ascii", "replace")


_SIGNATURE = b"\xff" + b"\0" * 8 + b"\x7f"  # ZMTP 3 (RFC 23): signature, then version, mechanism, as-server, filler
_GREETING = 64


def _read_exactly(sock: socket.socket, size: int, deadline: float) -> bytes:
    data = b""
    while len(data) < size:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the greeting did not come in time")
        sock.settimeout(left)
        chunk = sock.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data
