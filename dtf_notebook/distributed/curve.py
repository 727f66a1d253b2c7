"""CurveZMQ for a cluster: key pairs derived from a shared cluster key, and the ZAP check that admits them.

Every process holding the cluster key derives the same server and client key pairs, so a task's
:class:`~dtf_notebook.distributed.service_socket.ServiceSocket` encrypts its traffic and accepts only peers
that present the cluster's client key; nobody without the key can talk to it.

Example:
    >>> keys = curve_keys("s3cret")
    >>> keys == curve_keys("s3cret"), keys == curve_keys("other")
    (True, False)
"""

from __future__ import annotations

import hashlib
from typing import Any

import zmq
from zmq.utils import z85


def _z85_secret(cluster_key: str, role: str) -> bytes:
    digest = hashlib.sha256(f"dtf_notebook/{role}/{cluster_key}".encode()).digest()
    return z85.encode(digest)


def curve_keys(cluster_key: str) -> dict[str, bytes]:
    """Server and client key pairs every holder of ``cluster_key`` can derive (and nobody else).

    Example:
        >>> keys = curve_keys("s3cret")
        >>> sorted(keys)
        ['client_public', 'client_secret', 'server_public', 'server_secret']
    """
    server_secret = _z85_secret(cluster_key, "server")
    client_secret = _z85_secret(cluster_key, "client")
    return {
        "server_secret": server_secret,
        "server_public": zmq.curve_public(server_secret),
        "client_secret": client_secret,
        "client_public": zmq.curve_public(client_secret),
    }


def _start_authenticator(context: zmq.Context, cluster_key: str) -> Any:
    from zmq.auth.thread import ThreadAuthenticator

    auth = ThreadAuthenticator(context)
    auth.start()
    auth.configure_curve_callback(domain="*", credentials_provider=_KeyCheck(curve_keys(cluster_key)["client_public"]))
    return auth


class _KeyCheck:
    """ZAP credentials provider accepting exactly the cluster's client key."""

    def __init__(self, allowed: bytes) -> None:
        self._allowed = allowed

    def callback(self, domain: str, key: bytes) -> bool:
        return z85.encode(key) == self._allowed if len(key) == 32 else key == self._allowed
