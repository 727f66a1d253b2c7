"""What one peer may hold of a task at once: open sessions, requests and bytes in flight, streams arriving.

A task serves every peer that holds the cluster key (or every peer, when it runs without one), so one peer,
malicious or merely buggy, could otherwise exhaust its memory: open sessions without end, or send requests
faster than they are served. A :class:`PeerLedger` counts what each peer holds and refuses what goes over its
:class:`PeerLimits` with ``ResourceExhaustedError``; the task and its other peers carry on.

A *peer* is one connection to the task (a ZeroMQ routing identity): a client process's sockets, one per thread
that calls the task, and each other task of the cluster. Requests made inside the task's own process (a
server calling itself) are not counted.

Example:
    >>> ledger = PeerLedger(PeerLimits(max_sessions=1))
    >>> ledger.open_session(b"peer-1")
    >>> ledger.open_session(b"peer-1")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    dtf_notebook.errors.ResourceExhaustedError: This client already has 1 open session(s) on this task, its cap ...
    >>> ledger.open_session(b"peer-2")   # another peer is not affected
"""

from __future__ import annotations

import contextvars
import threading
from dataclasses import dataclass

from dtf_notebook import errors

__all__ = ["PeerLedger", "PeerLimits", "current_peer"]

#: The peer whose request the current thread is serving (None: a call from inside this process).
current_peer: contextvars.ContextVar[bytes | None] = contextvars.ContextVar("dtf_current_peer", default=None)


@dataclass(frozen=True)
class PeerLimits:
    """Caps on what one peer holds of a task at once (``dtf-server --max-...-per-peer`` sets them).

    Attributes:
        max_sessions: Master sessions the peer has open (``tf.Session`` objects not closed).
        max_inflight_bytes: Bytes of the peer's requests received and not yet answered (TF's gRPC refuses
            messages over 2 GiB; so, by default, does this).
        max_requests: The peer's requests received and not yet answered.
        max_streams: Large requests of the peer arriving at once (a well-behaved peer sends one at a time
            per connection).

    Example:
        >>> PeerLimits().max_inflight_bytes == 2 << 30
        True
    """

    max_sessions: int = 256
    max_inflight_bytes: int = 2 << 30
    max_requests: int = 4096
    max_streams: int = 16

    def __post_init__(self) -> None:
        for name in ("max_sessions", "max_inflight_bytes", "max_requests", "max_streams"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"PeerLimits.{name} must be an int >= 1, not {value!r}")


class _Usage:
    __slots__ = ("sessions", "bytes", "requests", "streams")

    def __init__(self) -> None:
        self.sessions = self.bytes = self.requests = self.streams = 0

    def empty(self) -> bool:
        return not (self.sessions or self.bytes or self.requests or self.streams)


class PeerLedger:
    """Counts what each peer holds of one task, against :class:`PeerLimits` (thread-safe).

    Example:
        >>> ledger = PeerLedger(PeerLimits(max_inflight_bytes=100))
        >>> ledger.admit_request(b"p", 60)
        >>> ledger.admit_request(b"p", 60)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
            ...
        dtf_notebook.errors.ResourceExhaustedError: This client already has 60 bytes of requests in flight ...
        >>> ledger.release_request(b"p", 60); ledger.admit_request(b"p", 60)
        >>> ledger.usage(b"p")
        {'sessions': 0, 'bytes': 60, 'requests': 1, 'streams': 0}
    """

    def __init__(self, limits: PeerLimits | None = None) -> None:
        self.limits = limits or PeerLimits()
        self._lock = threading.Lock()
        self._usage: dict[bytes, _Usage] = {}

    def usage(self, peer: bytes) -> dict[str, int]:
        """What ``peer`` holds now."""
        with self._lock:
            u = self._usage.get(peer) or _Usage()
            return {"sessions": u.sessions, "bytes": u.bytes, "requests": u.requests, "streams": u.streams}

    def peers(self) -> int:
        """How many peers hold anything now."""
        with self._lock:
            return len(self._usage)

    def _get(self, peer: bytes) -> _Usage:
        usage = self._usage.get(peer)
        if usage is None:
            usage = self._usage[peer] = _Usage()
        return usage

    def _tidy(self, peer: bytes, usage: _Usage) -> None:
        if usage.empty():
            self._usage.pop(peer, None)  # peers come and go: keep only those holding something

    def _over_cap(self, usage: _Usage, nbytes: int, streamed: bool) -> str | None:
        """Why one more request (or stream) of ``nbytes`` would pass a cap of the peer using ``usage``, or None."""
        limits = self.limits
        if streamed and usage.streams >= limits.max_streams:
            return (
                f"This client already sends {usage.streams} large requests at once to this task, its cap "
                "(dtf-server --max-streams-per-peer)"
            )
        if usage.requests + usage.streams >= limits.max_requests:
            return (
                f"This client already has {usage.requests + usage.streams} requests in flight on this task, its cap "
                "(dtf-server --max-requests-per-peer); wait for replies before sending more"
            )
        if usage.bytes + nbytes > limits.max_inflight_bytes:
            what = "a streamed request" if streamed else "a request"
            return (
                f"This client already has {usage.bytes} bytes of requests in flight on this task; {what} of "
                f"{nbytes} bytes would pass its cap of {limits.max_inflight_bytes} "
                "(dtf-server --max-inflight-bytes-per-peer)"
            )
        return None

    def _admit(self, peer: bytes, nbytes: int, streamed: bool) -> None:
        with self._lock:
            usage = self._usage.get(peer) or _Usage()
            why = self._over_cap(usage, nbytes, streamed)
            if why is not None:
                raise errors.ResourceExhaustedError(None, None, why)
            self._usage[peer] = usage
            if streamed:
                usage.streams += 1
            else:
                usage.requests += 1
            usage.bytes += nbytes

    def admit_request(self, peer: bytes, nbytes: int) -> None:
        """Counts a request of ``nbytes`` that arrived whole, until :meth:`release_request`.

        Raises:
            ResourceExhaustedError: the peer is at its cap of requests or bytes in flight.
        """
        self._admit(peer, nbytes, streamed=False)

    def _release(self, peer: bytes, nbytes: int, streamed: bool) -> None:
        with self._lock:
            usage = self._usage.get(peer)
            if usage is None:
                return  # holding nothing: nothing to release
            if streamed:
                usage.streams = usage.streams - 1 if usage.streams > 0 else 0
            else:
                usage.requests = usage.requests - 1 if usage.requests > 0 else 0
            usage.bytes = usage.bytes - nbytes if usage.bytes > nbytes else 0
            if usage.empty():
                del self._usage[peer]  # peers come and go: keep only those holding something

    def release_request(self, peer: bytes, nbytes: int) -> None:
        """The request counted by :meth:`admit_request` (or :meth:`stream_complete`) was answered."""
        self._release(peer, nbytes, streamed=False)

    def admit_stream(self, peer: bytes, nbytes: int) -> None:
        """Counts a streamed request announcing ``nbytes``, before its buffers are reserved.

        Raises:
            ResourceExhaustedError: the peer is at its cap of streams, requests or bytes in flight.
        """
        self._admit(peer, nbytes, streamed=True)

    def stream_complete(self, peer: bytes) -> None:
        """A stream counted by :meth:`admit_stream` arrived whole: it is now a request (same bytes)."""
        with self._lock:
            usage = self._get(peer)
            usage.streams = max(usage.streams - 1, 0)
            usage.requests += 1

    def stream_dropped(self, peer: bytes, nbytes: int) -> None:
        """A stream counted by :meth:`admit_stream` will never complete (stale, malformed, replaced, a Ping)."""
        self._release(peer, nbytes, streamed=True)

    def open_session(self, peer: bytes | None) -> None:
        """Counts a master session ``peer`` opened (None: from this process, not counted).

        Raises:
            ResourceExhaustedError: the peer is at its cap of open sessions.
        """
        if peer is None:
            return
        with self._lock:
            usage = self._get(peer)
            if usage.sessions >= self.limits.max_sessions:
                self._tidy(peer, usage)
                raise errors.ResourceExhaustedError(
                    None,
                    None,
                    f"This client already has {usage.sessions} open session(s) on this task, its cap "
                    "(dtf-server --max-sessions-per-peer): close sessions you no longer use (sess.close(), or "
                    "`with tf.Session(...) as sess:`)",
                )
            usage.sessions += 1

    def close_session(self, peer: bytes | None) -> None:
        """A session counted by :meth:`open_session` was closed."""
        if peer is None:
            return
        with self._lock:
            usage = self._get(peer)
            usage.sessions = max(usage.sessions - 1, 0)
            self._tidy(peer, usage)
