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

import zmq


def _tcp(address: str) -> str:
    return address if "://" in address else f"tcp://{address}"


def _apply_common_options(sock: zmq.Socket) -> None:
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.SNDHWM, 0)
    sock.setsockopt(zmq.RCVHWM, 0)
    sock.setsockopt(zmq.TCP_KEEPALIVE, 1)


def _drain(sock: zmq.Socket):
    """Every message waiting on ``sock`` now, without blocking."""
    # Asking for the socket's events is cheaper than a receive that fails with an exception.
    while sock.get(zmq.EVENTS) & zmq.POLLIN:
        try:
            yield sock.recv_multipart(zmq.NOBLOCK, copy=False)
        except zmq.Again:
            return
