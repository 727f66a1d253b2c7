"""Which cluster key a process uses: for the server it runs, and for each task it calls.

A server (:func:`server_key`) takes its key from its ConfigProto (``cluster_key``, with ``cluster_key_salt``
when that is a passphrase), else from the environment: ``DTF_CLUSTER_KEY`` (with ``DTF_CLUSTER_SALT``) or
``DTF_CLUSTER_KEY_FILE`` (a key file, see :func:`~dtf_notebook.distributed.cluster_key.read_key_file`). With
none, it accepts any peer that reaches its port.

A client calling the task at ``address`` (:func:`client_key`) uses, in order:

1. the key in its session's ConfigProto;
2. the key this process knows for that address: clusters it started or connected to :func:`remember` theirs;
3. what a registered *source* knows (:func:`add_source`): the package registers one that reads this user's
   cluster files, so a script in another process of the same user reaches a notebook's cluster unchanged;
4. the environment's key, as a server would take it;
5. none: the call goes out in the clear, and a keyed task refuses it.

Example:
    >>> key = ClusterKey.generate()
    >>> remember(["127.0.0.1:2222"], key)
    >>> client_key("127.0.0.1:2222") == key
    True
    >>> forget(["127.0.0.1:2222"]); client_key("127.0.0.1:2222") is None
    True
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from typing import Any

from dtf_notebook.distributed.cluster_key import ClusterKey, read_key_file

__all__ = ["add_source", "client_key", "forget", "key_from_config", "remember", "same_task", "server_key"]

KeySource = Callable[[str], "ClusterKey | None"]

_lock = threading.Lock()
_known: dict[str, ClusterKey] = {}  # address -> key, for the clusters this process started or connected to
_sources: list[KeySource] = []


_LOOPBACK = {"localhost", "127.0.0.1", "::1"}


def same_task(address: str) -> str:
    """``host:port`` spelled one way for one task: the spellings of this machine's loopback address
    (``localhost``, ``127.0.0.1``, ``[::1]``) are one, so a script using ``grpc://localhost:PORT`` finds the key
    of a cluster bound to ``127.0.0.1:PORT``.

    Example:
        >>> same_task("localhost:2222") == same_task("127.0.0.1:2222") == same_task("zmq://[::1]:2222/")
        True
        >>> same_task("10.0.0.2:2222")
        '10.0.0.2:2222'
    """
    bare = address.rpartition("://")[2].rstrip("/")
    host, _, port = bare.rpartition(":")
    return f"loopback:{port}" if host.strip("[]").lower() in _LOOPBACK else bare


def key_from_config(config: Any) -> ClusterKey | None:
    """The key a ConfigProto names (``cluster_key``; a passphrase takes ``cluster_key_salt`` or
    ``DTF_CLUSTER_SALT``), or None.

    Raises:
        ValueError: the key is malformed, or a passphrase has no salt.

    Example:
        >>> from dtf_notebook.runtime.config import ConfigProto
        >>> key_from_config(ConfigProto()) is None
        True
        >>> key_from_config(ConfigProto(cluster_key="open sesame", cluster_key_salt="exp42"))  # doctest: +ELLIPSIS
        <ClusterKey ...>
    """
    text = getattr(config, "cluster_key", "") if config is not None else ""
    if not text:
        return None
    salt = getattr(config, "cluster_key_salt", "") or os.environ.get("DTF_CLUSTER_SALT", "")
    return ClusterKey.parse(text, salt or None)


def key_from_environment() -> ClusterKey | None:
    """The key of ``DTF_CLUSTER_KEY`` (with ``DTF_CLUSTER_SALT``) or of the file ``DTF_CLUSTER_KEY_FILE``, or None.

    Raises:
        ValueError: the key is malformed, or a passphrase has no salt.
        OSError: the key file cannot be read, or other users can read it (PermissionError).

    Example:
        >>> os.environ.get("DTF_CLUSTER_KEY") or key_from_environment() is None
        True
    """
    salt = os.environ.get("DTF_CLUSTER_SALT") or None
    text = os.environ.get("DTF_CLUSTER_KEY", "")
    if text:
        return ClusterKey.parse(text, salt)
    path = os.environ.get("DTF_CLUSTER_KEY_FILE", "")
    if path:
        return ClusterKey.parse(read_key_file(path), salt)
    return None


def server_key(config: Any) -> ClusterKey | None:
    """The key a server with ``config`` requires of its peers: the config's, else the environment's (or None).

    Example:
        >>> from dtf_notebook.runtime.config import ConfigProto
        >>> key = ClusterKey.generate()
        >>> server_key(ConfigProto(cluster_key=key.text)) == key
        True
    """
    return key_from_config(config) or key_from_environment()


def client_key(address: str, config: Any = None) -> ClusterKey | None:
    """The key to call the task at ``address`` with (see the module docstring for the order).

    Example:
        >>> client_key("127.0.0.1:1") is None or "DTF_CLUSTER_KEY" in os.environ
        True
    """
    explicit = key_from_config(config)
    if explicit is not None:
        return explicit
    with _lock:
        known = _known.get(same_task(address))
        sources = list(_sources)
    if known is not None:
        return known
    for source in sources:
        found = source(address)
        if found is not None:
            return found
    return key_from_environment()


def remember(addresses: Iterable[str], key: ClusterKey | None) -> None:
    """Calls to these task addresses use ``key`` from now on (None forgets what was known for them)."""
    with _lock:
        for address in addresses:
            if key is None:
                _known.pop(same_task(address), None)
            else:
                _known[same_task(address)] = key


def forget(addresses: Iterable[str]) -> None:
    """Undoes :func:`remember` for these addresses (a stopped cluster's)."""
    remember(addresses, None)


def add_source(source: KeySource) -> None:
    """Registers ``source(address) -> ClusterKey | None``, asked when this process knows no key for an address.

    Example:
        >>> add_source(lambda address: None)
    """
    with _lock:
        if source not in _sources:
            _sources.append(source)
