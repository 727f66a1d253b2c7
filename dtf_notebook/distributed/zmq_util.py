"""ZeroMQ socket helpers shared by both ends of the transport (server and client).

Example:
    >>> import zmq
    >>> _tcp("127.0.0.1:2222"), _tcp("ipc:///tmp/task")
    ('tcp://127.0.0.1:2222', 'ipc:///tmp/task')
    >>> sock = zmq.Context.instance().socket(zmq.PULL)
    >>> _apply_common_options(sock)
    >>> list(_drain(sock))      # nothing waiting: returns at once
    []
    >>> sock.close(0)
"""

from __future__ import annotations

import contextlib
import errno
import socket
import struct
import threading
import time
from typing import Any

from dtf_notebook.lazy_modules import zmq


def _tcp(address: str) -> str:
    return address if "://" in address else f"tcp://{address}"


def _apply_common_options(sock: zmq.Socket, address: str = "") -> None:
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.SNDHWM, 0)
    sock.setsockopt(zmq.RCVHWM, 0)
    sock.setsockopt(zmq.TCP_KEEPALIVE, 1)
    if is_ipv6(address):
        sock.setsockopt(zmq.IPV6, 1)  # ZeroMQ speaks IPv4 only unless told


def is_ipv6(address: str) -> bool:
    """Whether a ``host:port`` address names an IPv6 host, written in brackets as in URLs (``[::1]:2222``).

    Example:
        >>> is_ipv6("[::1]:2222"), is_ipv6("tcp://[fe80::1%eth0]:2222"), is_ipv6("127.0.0.1:2222")
        (True, True, False)
    """
    return address.rpartition("://")[2].startswith("[")


# zmq.h's ZMQ_EVENTS and ZMQ_POLLIN as plain ints: pyzmq's enum wrappers cost microseconds (a test checks them).
_EVENTS, _POLLIN = 15, 1
# zmq.h's ZMQ_EVENT_DISCONNECTED, for the same reason.
_DISCONNECTED = 0x0200
# zmq.h's ZMQ_EVENT_HANDSHAKE_SUCCEEDED: a connection is up (its pipe handed to the socket, which takes it in with
# its next commands, after the dead connection's pipe is gone: see watch_breaks).
_HANDSHAKE_SUCCEEDED = 0x1000
# ZMQ_DONTWAIT and ZMQ_SNDMORE, for the same reason (pyzmq's send_multipart and recv_multipart build enums per frame).
_NOBLOCK, _SNDMORE = 1, 2
# Messages smaller than this are copied into ZeroMQ: for a few bytes a copy is cheaper than a zero-copy frame.
COPY_BYTES = 1 << 16


def _drain(sock: zmq.Socket):
    """Every message waiting on ``sock`` now, without blocking."""
    # Asking for the socket's events is cheaper than a receive that fails with an exception.
    recv = sock.recv
    while sock.getsockopt(_EVENTS) & _POLLIN:
        try:
            frame = recv(_NOBLOCK, copy=False)
        except zmq.Again:
            return
        frames = [frame]
        while frame.more:  # the rest of a multipart message is there with its first part
            frame = recv(copy=False)
            frames.append(frame)
        yield frames


def watch_breaks(sock: zmq.Socket) -> zmq.Socket:
    """A monitor socket that reports each connection of ``sock`` that breaks, and each that comes up (call it before
    ``connect``, so that none goes unseen); read it with :func:`read_breaks`, close it with :func:`unwatch_breaks`.

    A task answers a request on the connection it came in on, so a request sent on a connection that broke can
    never be answered, whoever takes the port next. Nor can one sent after a break is reported and before the next
    connection is up: ZeroMQ reports the break before it detaches the dead connection's pipe (with ``IMMEDIATE``),
    and a message written into that pipe meanwhile is dropped without an error, so a sender holds its messages from
    a reported break until a connection comes up again.

    Example:
        >>> server = zmq.Context.instance().socket(zmq.ROUTER)
        >>> port = server.bind_to_random_port("tcp://127.0.0.1")
        >>> sock = zmq.Context.instance().socket(zmq.DEALER)
        >>> monitor = watch_breaks(sock)
        >>> _ = sock.connect(f"tcp://127.0.0.1:{port}")
        >>> sock.send(b"hello"); _ = server.recv_multipart()
        >>> server.close(0)  # the task goes away
        >>> breaks = 0
        >>> while not breaks and monitor.poll(5000):  # (the connection coming up was reported first)
        ...     breaks, connected = read_breaks(monitor)
        >>> breaks, connected
        (1, False)
        >>> unwatch_breaks(sock, monitor); sock.close(0)
    """
    return sock.get_monitor_socket(events=_DISCONNECTED | _HANDSHAKE_SUCCEEDED)


def read_breaks(monitor: zmq.Socket) -> tuple[int, bool | None]:
    """What the monitor made by :func:`watch_breaks` reported since the last call (read without blocking): how many
    connections broke, and whether the socket is connected after them (False when a break came last, True when a
    connection came up last, None when nothing was reported).

    Example:
        >>> sock = zmq.Context.instance().socket(zmq.DEALER)
        >>> monitor = watch_breaks(sock)
        >>> read_breaks(monitor)
        (0, None)
        >>> unwatch_breaks(sock, monitor); sock.close(0)
    """
    breaks, connected = 0, None
    while monitor.getsockopt(_EVENTS) & _POLLIN:
        event = struct.unpack_from("=H", monitor.recv_multipart()[0])[0]
        if event == _DISCONNECTED:
            breaks, connected = breaks + 1, False
        elif event == _HANDSHAKE_SUCCEEDED:
            connected = True
    return breaks, connected


def unwatch_breaks(sock: zmq.Socket, monitor: zmq.Socket) -> None:
    """Detaches and closes a monitor made by :func:`watch_breaks`."""
    with contextlib.suppress(zmq.ZMQError):
        sock.disable_monitor()  # the socket may be closed already
    monitor.close(0)


def _push_from_thread(local: threading.local, context: zmq.Context, endpoint: str, frames: list[Any]) -> None:
    """Sends ``frames`` to an inproc PULL ``endpoint`` over the calling thread's own PUSH socket (kept in
    ``local``): ZeroMQ sockets are not thread-safe, so each thread that hands work to an I/O thread has one."""
    sock = getattr(local, "sock", None)
    if sock is None:
        sock = local.sock = context.socket(zmq.PUSH)
        sock.setsockopt(zmq.LINGER, 1000)
        sock.connect(endpoint)
    send_frames(sock, frames)


def send_frames(sock: zmq.Socket, frames: list[Any], flags: int = 0) -> None:
    """``send_multipart`` that copies small messages and sends large ones zero-copy.

    Example:
        >>> pull = zmq.Context.instance().socket(zmq.PULL)
        >>> port = pull.bind_to_random_port("tcp://127.0.0.1")
        >>> push = zmq.Context.instance().socket(zmq.PUSH)
        >>> _ = push.connect(f"tcp://127.0.0.1:{port}")
        >>> send_frames(push, [b"head", memoryview(b"body")])
        >>> pull.recv_multipart()
        [b'head', b'body']
        >>> push.close(0); pull.close(0)
    """
    # Frames are bytes, zmq frames or flat byte views, as encode_message makes them: their length is their size
    # (summed in C). Anything else only decides the copy less well.
    if not frames:
        return
    try:
        small = sum(map(len, frames)) < COPY_BYTES
    except TypeError:  # a buffer without a length
        small = sum(memoryview(f).nbytes for f in frames) < COPY_BYTES
    send, more = sock.send, flags | _SNDMORE
    for frame in frames[:-1]:
        send(frame, more, copy=small)
    send(frames[-1], flags, copy=small)


def wait_for_port_release(address: str, patience: float = 2.0) -> bool:
    """Waits until the TCP port of ``host:port`` can be bound again; False if it is still held after ``patience``.

    ZeroMQ closes a socket's listener on its I/O thread after ``close()`` returns, so a caller that promises a
    free port once it returns (``Server.stop``) waits for that here. Other endpoints (``ipc://``) return True.

    Example:
        >>> import socket
        >>> with socket.socket() as s:
        ...     s.bind(("127.0.0.1", 0)); s.listen(); port = s.getsockname()[1]
        ...     wait_for_port_release(f"127.0.0.1:{port}", patience=0.1)
        False
        >>> wait_for_port_release(f"127.0.0.1:{port}")
        True
    """
    if "://" in address and not address.startswith("tcp://"):
        return True
    host, _, port = address.split("://")[-1].rpartition(":")
    host = host.strip("[]")
    host = "0.0.0.0" if host in ("*", "") else host
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    deadline = time.monotonic() + patience
    while True:
        with socket.socket(family) as probe:
            # as a server binds (ZeroMQ too): connections of the closed socket may linger in TIME_WAIT
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, int(port)))
                probe.listen()  # as the task will: the port is free for serving, not only for binding
                return True
            except OSError as e:
                if e.errno != errno.EADDRINUSE or time.monotonic() >= deadline:
                    return e.errno != errno.EADDRINUSE  # another error (an address not of this machine): no wait
        time.sleep(0.01)
