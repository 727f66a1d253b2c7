"""CurveZMQ for a cluster: key pairs derived from its cluster key, and the ZAP check that admits them.

Every process holding the :class:`~dtf_notebook.distributed.cluster_key.ClusterKey` derives the same server and
client key pairs, so a task's
:class:`~dtf_notebook.distributed.service_socket.ServiceSocket` encrypts its traffic and accepts only peers
that present the cluster's client key; nobody without the key can talk to it. The keyed sockets of a process
share one ZAP authenticator (:func:`admit`), so several keyed servers, of one cluster or of several, can run
in one process.

Example:
    >>> key = ClusterKey.generate()
    >>> curve_keys(key) == curve_keys(ClusterKey.parse(key.text)), curve_keys(key) == curve_keys(ClusterKey.generate())
    (True, False)
"""

from __future__ import annotations

import functools
import threading
import time
from typing import Any

from dtf_notebook.distributed.cluster_key import ClusterKey
from dtf_notebook.lazy_modules import LazyModule, zmq

z85: Any = LazyModule("zmq.utils.z85")


@functools.lru_cache(maxsize=64)
def curve_keys(cluster_key: ClusterKey) -> dict[str, bytes]:
    """Server and client key pairs every holder of ``cluster_key`` can derive (and nobody else).

    Example:
        >>> keys = curve_keys(ClusterKey.generate())
        >>> sorted(keys)
        ['client_public', 'client_secret', 'server_public', 'server_secret']
    """
    server_secret = z85.encode(cluster_key.derive("curve/server"))
    client_secret = z85.encode(cluster_key.derive("curve/client"))
    return {
        "server_secret": server_secret,
        "server_public": zmq.curve_public(server_secret),
        "client_secret": client_secret,
        "client_public": zmq.curve_public(client_secret),
    }


class Admission:
    """A keyed socket's place in its context's shared ZAP authenticator; :meth:`release` when the socket closes.

    ZeroMQ allows one ZAP handler per context, so every keyed socket of a context shares one authenticator
    thread, started with the first and stopped with the last. Each cluster key is its own ZAP domain
    (:attr:`domain`, set on the socket as ``zap_domain``) admitting exactly that key's clients, so servers
    of different clusters can live in one process.

    Example:
        >>> context = zmq.Context.instance()
        >>> first, second = admit(context, ClusterKey.generate()), admit(context, ClusterKey.generate())
        >>> first.domain != second.domain, _running(context)
        (True, True)
        >>> first.release(); second.release()
        >>> _running(context)
        False
    """

    def __init__(self, context: zmq.Context, domain: str) -> None:
        self.context, self.domain = context, domain
        self._released = False

    def release(self) -> None:
        """Gives up this socket's admission (once); the last one out stops the authenticator."""
        with _lock:
            if self._released:
                return
            self._released = True
            shared = _shared[id(self.context)]
            shared.users[self.domain] -= 1
            if not shared.users[self.domain]:
                del shared.users[self.domain]
                shared.auth.credentials_providers.pop(self.domain, None)
            if shared.users:
                return
            del _shared[id(self.context)]
        shared.auth.stop()


def admit(context: zmq.Context, cluster_key: ClusterKey) -> Admission:
    """Has ``context``'s shared authenticator admit the clients of ``cluster_key`` (starting it if needed).

    Set ``socket.zap_domain`` to the returned admission's ``domain`` before binding the keyed socket.

    Example:
        >>> admission = admit(zmq.Context.instance(), ClusterKey.generate())
        >>> admission.domain.startswith("dtf-")
        True
        >>> admission.release()
    """
    domain = "dtf-" + cluster_key.fingerprint
    with _lock:
        shared = _shared.get(id(context))
        if shared is None:
            shared = _shared[id(context)] = _Shared(_start_authenticator(context))
        if domain not in shared.users:
            check = _KeyCheck(curve_keys(cluster_key)["client_public"])
            shared.auth.configure_curve_callback(domain=domain, credentials_provider=check)
        shared.users[domain] = shared.users.get(domain, 0) + 1
    return Admission(context, domain)


def _start_authenticator(context: zmq.Context, patience: float = 3.0) -> Any:
    """Starts a ZAP authenticator on ``context``, retrying briefly while the handler endpoint is still taken:
    ZeroMQ frees a closed socket's endpoint asynchronously, so one stopped just now may still hold it."""
    from zmq.auth.thread import ThreadAuthenticator

    deadline = time.monotonic() + patience
    while True:
        auth = ThreadAuthenticator(context)
        try:
            auth.start()
            return auth
        except zmq.ZMQError as e:
            auth.stop()
            if e.errno != zmq.EADDRINUSE or time.monotonic() >= deadline:
                raise
            time.sleep(0.05)


class _Shared:
    """A context's authenticator and how many open sockets use each of its domains."""

    def __init__(self, auth: Any) -> None:
        self.auth = auth
        self.users: dict[str, int] = {}


_lock = threading.Lock()
_shared: dict[int, _Shared] = {}  # id(context) -> its authenticator


def _running(context: zmq.Context) -> bool:
    return id(context) in _shared


class _KeyCheck:
    """ZAP credentials provider accepting exactly the cluster's client key."""

    def __init__(self, allowed: bytes) -> None:
        self._allowed = allowed

    def callback(self, domain: str, key: bytes) -> bool:
        return z85.encode(key) == self._allowed if len(key) == 32 else key == self._allowed
