"""What a task process on this machine needs: a loopback port nobody else is about to take, and an environment.

The one launcher of local clusters,
:class:`~dtf_notebook.notebook.local_cluster.LocalCluster`, picks its tasks' ports with :func:`free_port` and
gives plain task processes (and client scripts of its clusters) :func:`task_env`; tests and benchmarks that start
a lone server or client process use them too.

Example:
    >>> port = free_port()
    >>> env = task_env()
    >>> 0 < port < 65536, env["OMP_NUM_THREADS"]
    (True, '1')
"""

from __future__ import annotations

import collections
import os
import random
import socket

_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


_LOW_PORT = 20000
_issued: collections.deque[int] = collections.deque(maxlen=1024)  # handed out lately by this process


def _ephemeral_range() -> tuple[int, int]:
    """The ports the kernel gives outgoing connections (Linux: ``ip_local_port_range``; elsewhere IANA's)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low, high = (int(x) for x in f.read().split())
        return low, high
    except (OSError, ValueError):
        return 49152, 65535


def free_port(host: str = "127.0.0.1") -> int:
    """A port that was free a moment ago, for a task to bind shortly.

    The port is below the kernel's ephemeral range when there is room there: a port the kernel picks
    itself could be taken, before the task binds it, as the source port of any outgoing connection on the
    machine (a cluster's own tasks open many). Ports handed out lately by this process are not reused.

    ``host`` may be an IPv6 address, bracketed (``[::1]``) or not.

    Example:
        >>> port = free_port()
        >>> _LOW_PORT <= port < _ephemeral_range()[0] and port not in {free_port() for _ in range(20)}
        True
    """
    host = host.strip("[]")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    low, _ = _ephemeral_range()
    if low - _LOW_PORT >= 1000:
        for _ in range(200):
            port = random.randrange(_LOW_PORT, low)
            if port in _issued:
                continue
            with socket.socket(family) as s:
                try:
                    s.bind((host, port))
                except OSError:
                    continue
            _issued.append(port)
            return port
    with socket.socket(family) as s:  # no room below the ephemeral range: let the kernel pick
        s.bind((host, 0))
        port = s.getsockname()[1]
    _issued.append(port)
    return port


def task_env(threads: int = 1) -> dict[str, str]:
    """Environment for a task process: this package importable, and a thread budget for shared cores.

    Example:
        >>> env = task_env(threads=2)
        >>> env["OMP_NUM_THREADS"], env["PYTHONPATH"].startswith(_PACKAGE_PARENT)
        ('2', True)
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = _PACKAGE_PARENT + os.pathsep + env.get("PYTHONPATH", "")
    env["OMP_NUM_THREADS"] = str(threads)
    return env
