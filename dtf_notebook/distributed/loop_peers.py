"""Requests a task's event loop sends to other tasks itself, with their replies handled on that loop.

A step served on a task's loop (see :mod:`.service_socket`) reaches other tasks from the loop's own thread:
a master sends each partition's ``RunGraph`` and goes on serving while they run, a partition's ``_Send``
pushes its tensors. :class:`LoopPeers` owns one DEALER socket per peer for this, registered in the loop's
poller, so a reply is handled where it arrives and no other thread is woken for it.

Nothing here blocks: a message to a peer not connected yet waits in a backlog the loop retries (``pump``);
while requests are outstanding the peer is pinged, and one silent for ``dead_after`` seconds fails them with
``UnavailableError`` (a backlogged one-way message is reported to ``undeliverable``).

A reply comes back only over the connection its request went out on, so requests sent on a connection that
breaks (the peer died or restarted) fail at once with ``UnavailableError``, as in the process-wide
:class:`~dtf_notebook.distributed.client.Client`: a monitor on each peer's socket reports the break. No reply's
incarnation is needed for this: a peer restarted on its port answers every ping, and a request sent before this
loop heard the old incarnation would otherwise wait forever; nor does a reply from the new incarnation fail the
requests that reached it.

Example:
    >>> import zmq
    >>> from dtf_notebook.distributed.service_socket import ServiceSocket
    >>> echo = ServiceSocket("127.0.0.1:0", lambda method, header, tensors: ({"x": header["x"]}, []))
    >>> peers, poller, got = LoopPeers(), zmq.Poller(), []
    >>> peers.request(echo.address, "Echo", {"x": 7}, [], lambda h, t, e: got.append(h["x"]), poller)
    >>> while not got:  # the loop's round: sends what waited for the connection, then handles replies
    ...     peers.pump()
    ...     peers.receive(dict(poller.poll(50)))
    >>> got
    [7]
    >>> peers.close(); echo.close()
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from dtf_notebook import errors
from dtf_notebook.distributed import wire
from dtf_notebook.distributed.client import PING, new_dealer
from dtf_notebook.distributed.cluster_key import ClusterKey
from dtf_notebook.distributed.curve import curve_keys
from dtf_notebook.distributed.wire_stream import StreamAssembler, StreamError, stream_messages
from dtf_notebook.distributed.zmq_util import (
    _NOBLOCK,
    _drain,
    _tcp,
    read_breaks,
    send_frames,
    unwatch_breaks,
    watch_breaks,
)
from dtf_notebook.lazy_modules import zmq

_log = logging.getLogger(__name__)

#: ``callback(reply_header, reply_tensors, error)``: error is None for a reply, else the OpError it failed with.
ReplyCallback = Callable[[dict[str, Any] | None, list[Any], errors.OpError | None], None]


class _Peer:
    __slots__ = ("address", "sock", "monitor", "pending", "backlog", "unsent", "last_heard", "last_ping", "down")

    def __init__(self, address: str, sock: zmq.Socket, monitor: zmq.Socket) -> None:
        self.address = address
        self.sock = sock
        self.monitor = monitor  # reports the socket's broken connections
        self.pending: dict[int, tuple[ReplyCallback, float]] = {}  # request id -> (callback, sent at)
        # messages not taken yet (no connection): (frames, queued at, header of the request they carry)
        self.backlog: list[tuple[list[Any], float, dict[str, Any]]] = []
        self.unsent: set[int] = set()  # ids of the messages none of whose parts went out yet (all in the backlog)
        self.last_heard = time.monotonic()
        self.last_ping = 0.0
        # A break was reported and no connection has come up since: what is sent waits in the backlog (see
        # zmq_util.watch_breaks: a message written now could go into the dead connection's pipe and be dropped).
        self.down = False


class LoopPeers:
    """The DEALER sockets one event loop uses to reach other tasks; every method runs on that loop's thread.

    Args:
        cluster_key: Connect with CurveZMQ keys derived from it (tasks of a keyed cluster refuse other peers).
        heartbeat_interval: Seconds between pings to a peer that owes replies.
        dead_after: Seconds of silence after which a peer's outstanding requests fail with UnavailableError.
        limits: Wire limits applied to replies.
        undeliverable: Told ``(method, header, error)`` for a one-way message that could not even be sent in
            ``dead_after`` seconds (its peer never connected).

    Example:
        >>> peers = LoopPeers(dead_after=1.0)
        >>> peers.outstanding
        0
        >>> peers.close()
    """

    def __init__(
        self,
        cluster_key: ClusterKey | None = None,
        heartbeat_interval: float = 0.5,
        dead_after: float = 3.0,
        limits: wire.WireLimits | None = None,
        undeliverable: Callable[[str, dict[str, Any], errors.OpError], None] | None = None,
    ) -> None:
        self._context = zmq.Context.instance()
        self._keys = curve_keys(cluster_key) if cluster_key else None
        self.heartbeat_interval = heartbeat_interval
        self.dead_after = dead_after
        self._limits = limits or wire.WireLimits()
        self._assembler = StreamAssembler(self._limits)
        self._undeliverable = undeliverable
        self._peers: dict[str, _Peer] = {}
        self._by_socket: dict[zmq.Socket, _Peer] = {}
        self._by_monitor: dict[zmq.Socket, _Peer] = {}
        self._ids = itertools.count(1)
        self._stream_ids = itertools.count(1)

    @property
    def outstanding(self) -> int:
        """Requests sent and not answered yet, over all peers."""
        return sum(len(p.pending) for p in self._peers.values())

    @property
    def backlogged(self) -> bool:
        """Whether some message waits for its peer's connection (the loop should call :meth:`pump` soon)."""
        return any(p.backlog for p in self._peers.values())

    def _peer(self, address: str, poller: zmq.Poller) -> _Peer:
        peer = self._peers.get(address)
        if peer is None:
            sock = new_dealer(self._context, address, self._limits, self._keys)
            monitor = watch_breaks(sock)
            sock.connect(_tcp(address))
            poller.register(sock, zmq.POLLIN)
            poller.register(monitor, zmq.POLLIN)
            peer = self._peers[address] = _Peer(address, sock, monitor)
            self._by_socket[sock] = peer
            self._by_monitor[monitor] = peer
        return peer

    def request(
        self,
        address: str,
        method: str,
        header: dict[str, Any],
        tensors: Sequence[Any],
        callback: ReplyCallback,
        poller: zmq.Poller,
    ) -> None:
        """Sends a request to the task at ``address``; ``callback`` gets its reply (or failure) on this loop."""
        peer = self._peer(address, poller)
        # A break reported before this request goes out is an earlier connection's: settle it first, so that the
        # request (sent on the next connection) is not failed with the requests that break lost.
        self._check_connection(peer)
        req_id = next(self._ids)
        peer.pending[req_id] = (callback, time.monotonic())
        self._send(peer, {**header, "id": req_id, "method": method}, tensors)

    def send_oneway(
        self, address: str, method: str, header: dict[str, Any], tensors: Sequence[Any], poller: zmq.Poller
    ) -> None:
        """Sends a request that gets no reply (see ``Client.send_oneway``)."""
        peer = self._peer(address, poller)
        self._check_connection(peer)  # a break reported by now holds it back until the next connection
        self._send(peer, {**header, "id": next(self._ids), "method": method, "oneway": True}, tensors)

    def _send(self, peer: _Peer, header: dict[str, Any], tensors: Sequence[Any]) -> None:
        frames = wire.encode_message(header, tensors, check=False)
        now = time.monotonic()
        for part, message in enumerate(stream_messages(frames, next(self._stream_ids))):
            if peer.backlog or peer.down or not _try_send(peer.sock, message):
                if not part:
                    peer.unsent.add(header["id"])
                peer.backlog.append((message, now, header))  # a stream's parts stay in order behind it

    def pump(self) -> None:
        """Sends what waits for a connection, and reports what waited longer than ``dead_after``."""
        now = time.monotonic()
        for peer in list(self._peers.values()):
            if peer.backlog:
                self._check_connection(peer)
            while peer.backlog and not peer.down and _try_send(peer.sock, peer.backlog[0][0]):
                peer.unsent.discard(peer.backlog.pop(0)[2]["id"])
            if peer.backlog and now - peer.backlog[0][1] > self.dead_after:
                lost, peer.backlog = peer.backlog, []
                peer.unsent.clear()
                error = errors.UnavailableError(
                    None, None, f"Could not reach the task at {peer.address} for {now - lost[0][1]:.1f} s"
                )
                reported: set[int] = set()
                for _, _, header in lost:
                    if id(header) in reported:
                        continue  # the parts of one stream carry the same request
                    reported.add(id(header))
                    entry = peer.pending.pop(header.get("id"), None)
                    if entry is not None:
                        _call(entry[0], None, [], error)
                    elif header.get("oneway") and self._undeliverable is not None:
                        self._undeliverable(str(header.get("method")), header, error)

    def receive(self, ready: dict[Any, int]) -> None:
        """Handles the replies waiting on the sockets the loop's poll found ready, and the connections that broke."""
        for sock, peer in list(self._by_socket.items()):
            if sock in ready:
                for frames in _drain(sock):
                    self._deliver(peer, frames)
        for monitor, peer in list(self._by_monitor.items()):
            if monitor in ready:
                self._check_connection(peer)

    def _check_connection(self, peer: _Peer) -> None:
        """Fails the requests that went out on a connection to ``peer`` that broke since the last check: their
        replies can never come (a task answers on the connection a request came in on)."""
        breaks, connected = read_breaks(peer.monitor)
        if connected is not None:
            peer.down = not connected
        if not breaks:
            return
        # Messages some of whose parts went out lost them: the rest of such a stream would reach the next
        # connection as parts of nothing. Those nothing of which went out wait for that connection.
        peer.backlog = [entry for entry in peer.backlog if entry[2]["id"] in peer.unsent]
        lost = [rid for rid in peer.pending if rid not in peer.unsent]
        if lost:
            message = f"The connection to the task at {peer.address} broke while it owed replies; the task went "
            _fail(peer, lost, errors.UnavailableError(None, None, message + "down or restarted, and they were lost"))

    def _deliver(self, peer: _Peer, frames: list[Any]) -> None:
        peer.last_heard = time.monotonic()
        try:
            message = self._assembler.feed(peer.address, [f.buffer for f in frames])
        except StreamError as e:
            message = ({"id": e.request_id, "error": wire.encode_error(e)}, [])
        except errors.OpError:
            return  # a garbled reply cannot be matched to a request; the heartbeat will fail it in time
        if message is None:
            return  # part of a streamed reply
        header, tensors = message
        entry = peer.pending.pop(header.get("id"), None) if header.get("id") else None
        if entry is None:
            return  # a pong, or the reply of a request given up
        if "error" in header:
            _call(entry[0], None, [], wire.decode_error(header["error"]))
        else:
            _call(entry[0], header, tensors, None)

    def heartbeat(self, now: float, polled: float | None = None) -> None:
        """Pings peers that owe replies; fails the requests of a peer silent for ``dead_after`` seconds.

        ``polled`` is when the loop's last poll returned (default ``now``): silence counts only up to then, so a
        loop that was itself held up (a long handler, a garbage collection) does not blame a peer whose reply
        arrived meanwhile and waits, unread, on its socket.
        """
        listened = now if polled is None else min(now, polled)
        for peer in self._peers.values():
            if not peer.pending:
                continue
            oldest = min(sent for _, sent in peer.pending.values())
            silent = listened - max(peer.last_heard, oldest)
            if silent > self.dead_after:
                error = errors.UnavailableError(
                    None, None, f"The task at {peer.address} did not answer for {silent:.1f} s; it is probably down"
                )
                _fail(peer, list(peer.pending), error)
            elif now - peer.last_ping >= self.heartbeat_interval and now - oldest > 0.2:
                peer.last_ping = now
                _try_send(peer.sock, PING)

    def close(self) -> None:
        """Fails what is outstanding with CancelledError and closes every socket."""
        cancelled = errors.CancelledError(None, None, "The task stopped serving")
        for peer in self._peers.values():
            _fail(peer, list(peer.pending), cancelled)
            unwatch_breaks(peer.sock, peer.monitor)
            peer.sock.close(0)
        self._peers.clear()
        self._by_socket.clear()
        self._by_monitor.clear()


def _fail(peer: _Peer, request_ids: list[int], error: errors.OpError) -> None:
    for rid in request_ids:
        _call(peer.pending.pop(rid)[0], None, [], error)


def _try_send(sock: zmq.Socket, frames: list[Any]) -> bool:
    try:
        send_frames(sock, frames, _NOBLOCK)  # a plain int: pyzmq's flag enums cost microseconds per send
        return True
    except zmq.Again:
        return False
    except zmq.ZMQError:
        return False  # closed under us: the heartbeat reports the peer


def _call(callback: ReplyCallback, header: dict[str, Any] | None, tensors: list[Any], error: Any) -> None:
    try:
        callback(header, tensors, error)
    except Exception:  # noqa: BLE001 - one failing continuation must not stop the loop serving everyone else
        _log.exception("A reply callback failed on the task's event loop")


__all__ = ["LoopPeers", "ReplyCallback"]
