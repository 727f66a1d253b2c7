"""Which backend serves a session target's scheme (``zmq://``, ``grpc://``): a registry with no imports, so that
the cluster runtime can register its backend without loading the session machinery.

Example:
    >>> register_session_backend("echo", lambda target, graph, config: (target, graph, config))
    >>> session_backend("echo")("echo://x", None, None)[0]
    'echo://x'
    >>> _ = _BACKENDS.pop("echo")
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["known_schemes", "register_session_backend", "session_backend"]

# scheme -> factory(target, graph, config) returning a backend with run/close(wait)/list_devices.
_BACKENDS: dict[str, Callable[..., Any]] = {}


def register_session_backend(scheme: str, factory: Callable[..., Any]) -> None:
    """Registers ``factory(target, graph, config)`` as the backend of targets ``scheme://...``.

    Example:
        >>> register_session_backend("echo", lambda target, graph, config: None)
        >>> "echo" in known_schemes()
        True
        >>> _ = _BACKENDS.pop("echo")
    """
    _BACKENDS[scheme] = factory


def session_backend(scheme: str) -> Callable[..., Any] | None:
    """The factory registered for ``scheme``, or None.

    Example:
        >>> session_backend("no-such-scheme") is None
        True
    """
    return _BACKENDS.get(scheme)


def known_schemes() -> list[str]:
    """The registered schemes, sorted.

    Example:
        >>> isinstance(known_schemes(), list)
        True
    """
    return sorted(_BACKENDS)
