"""A process's calling end: one DEALER socket per peer, with deadlines, heartbeats and restart detection.

``Client.call`` blocks until the reply, the deadline, or the peer is judged dead: while requests to a peer
are outstanding the client pings it, and a peer silent for ``dead_after`` seconds fails them with
``UnavailableError``. A task answers on the connection a request came in on, so a request sent on a connection
that breaks (the task died or restarted) fails at once with ``UnavailableError``. Replies' incarnations are not
needed for this: a task restarted on its port answers every ping, and a request sent before any reply told the old
incarnation would otherwise wait forever; nor does a reply from the new incarnation fail the requests that reached
it. (A session's master tells a restarted task by its incarnation, see ``incarnation``.)

Example:
    >>> import dtf_notebook as tf
    >>> client = Client(dead_after=0.5)
    >>> try:
    ...     client.call("127.0.0.1:1", "Ping", timeout=5)  # nothing listens on port 1
    ... except tf.errors.UnavailableError as e:
    ...     print(type(e).__name__)
    UnavailableError
    >>> client.close()
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

from dtf_notebook import errors
from dtf_notebook.distributed import wire
from dtf_notebook.distributed.allocator import tune_for_streams
from dtf_notebook.distributed.cluster_key import ClusterKey
from dtf_notebook.distributed.curve import curve_keys
from dtf_notebook.distributed.handshake_watch import HandshakeWatch, read_events, refusal, unwatch, watch
from dtf_notebook.distributed.keyring import client_key
from dtf_notebook.distributed.wire_stream import StreamAssembler, StreamError, stream_messages
from dtf_notebook.distributed.zmq_util import (
    _NOBLOCK,
    _POLLIN,
    _apply_common_options,
    _drain,
    _push_from_thread,
    _tcp,
    read_breaks,
    send_frames,
    unwatch_breaks,
    watch_breaks,
)
from dtf_notebook.lazy_modules import zmq

#: A heartbeat request (request id 0: its pong matches no call), the same frames every time.
PING = wire.encode_message({"id": 0, "method": "Ping"})


def _try_send(sock: zmq.Socket, frames: list[Any]) -> bool:
    """Sends without blocking; False when the peer cannot take it now (not connected, or gone)."""
    try:
        send_frames(sock, frames, _NOBLOCK)  # a plain int: pyzmq's flag enums cost microseconds per send
        return True
    except zmq.Again:
        return False


#: A thread keeps at most this many sockets to peers open, over all its clients (a client per cluster key): beyond
#: it, the least recently used is closed once it has been idle for ``_IDLE_BEFORE_CLOSE`` seconds. A long-lived thread
#: (a notebook kernel's, a test run's) reaching many tasks over time would otherwise hold them all, and ZeroMQ allows
#: a process 1,023 sockets. A client's I/O thread closes a socket that owes nothing after that much idle time.
_THREAD_SOCKETS = 32
_IDLE_BEFORE_CLOSE = 10.0
_thread_use = threading.local()  # .lru: (client, address) -> when this thread last took that socket, oldest first


def _lru() -> dict[tuple[Client, str], float]:
    lru = getattr(_thread_use, "lru", None)
    if lru is None:
        lru = _thread_use.lru = {}
    return lru


class _SocketSet(dict):
    """A thread's own DEALER sockets of one client, each with the watch on its handshakes (address -> (socket,
    watch)), closed when the thread ends (its thread-local storage is freed)."""

    def __del__(self) -> None:
        for sock, handshakes in self.values():
            unwatch(sock, handshakes)
            sock.close(0)


class _Pending:
    __slots__ = ("future", "address", "sent_at", "sent")

    def __init__(self, future: Future, address: str) -> None:
        self.future = future
        self.address = address
        self.sent_at = time.monotonic()
        self.sent = False  # whether a part of it went out (the I/O thread's; a break of its connection loses it)


class Client:
    """Sends requests to tasks and waits for replies (thread-safe; one I/O thread).

    Args:
        cluster_key: Use CurveZMQ with keys derived from this cluster key (tasks that have one refuse other peers).
        heartbeat_interval: Seconds between pings to a peer that owes replies.
        dead_after: Seconds of silence after which a peer's outstanding requests fail with UnavailableError.
        limits: Wire limits applied to replies.

    Example:
        >>> client = Client(heartbeat_interval=0.1, dead_after=1.0)
        >>> print(client.incarnation("127.0.0.1:2222"))  # no reply from that task yet
        None
        >>> client.close()
    """

    def __init__(
        self,
        cluster_key: ClusterKey | None = None,
        heartbeat_interval: float = 0.5,
        dead_after: float = 3.0,
        limits: wire.WireLimits | None = None,
    ) -> None:
        tune_for_streams()  # streamed replies arrive in buffers the allocator should recycle
        self._context = zmq.Context.instance()
        self.cluster_key = cluster_key
        self._keys = curve_keys(cluster_key) if cluster_key else None
        self.heartbeat_interval = heartbeat_interval
        self.dead_after = dead_after
        self._limits = limits or wire.WireLimits()
        self._ids = itertools.count(1)
        self._stream_ids = itertools.count(1)
        self._assembler = StreamAssembler(self._limits)  # the I/O thread's; each calling thread has its own
        self._lock = threading.Lock()
        self._pending: dict[int, _Pending] = {}
        self._incarnations: dict[str, int] = {}
        self._last_heard: dict[str, float] = {}
        self._last_ping: dict[str, float] = {}
        # The I/O thread's: a socket per peer, the monitor of its broken connections, and the messages waiting for
        # a connection as (request id, frames).
        self._sockets: dict[str, zmq.Socket] = {}
        self._monitors: dict[str, zmq.Socket] = {}
        self._backlog: dict[str, list[tuple[int, list[Any]]]] = {}
        self._down: set[str] = set()  # peers whose connection broke and none came up since (I/O thread only)
        self._cmd_endpoint = f"inproc://dtf-client-{id(self)}"
        self._commands = self._context.socket(zmq.PULL)
        self._commands.bind(self._cmd_endpoint)
        self._pushers = threading.local()
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="dtf-client", daemon=True)
        self._thread.start()

    def incarnation(self, address: str) -> int | None:
        """The last incarnation seen from ``address`` (None before any reply)."""
        return self._incarnations.get(address)

    def connection_breaks(self, address: str) -> tuple[int, int] | None:
        """The calling thread's socket to ``address`` (a serial number) and how many of its connections broke so far;
        None when this thread has no socket to it. A change between two looks means the peer went down or restarted
        in between (a socket made anew, after one dropped on an error, has another serial).

        Example:
            >>> client = Client()
            >>> print(client.connection_breaks("127.0.0.1:1"))  # this thread never called it
            None
            >>> client.close()
        """
        sockets = getattr(self._pushers, "dealers", None)
        pair = sockets.get(address) if sockets is not None else None
        if pair is None:
            return None
        read_events(pair[1], self.cluster_key)
        return pair[1].serial, pair[1].breaks

    def call(
        self,
        address: str,
        method: str,
        header: dict[str, Any] | None = None,
        tensors: Sequence[Any] = (),
        timeout: float | None = None,
    ) -> tuple[dict[str, Any], list[Any]]:
        """Sends one request and returns ``(reply_header, reply_tensors)``.

        Raises:
            DeadlineExceededError: no reply within ``timeout`` seconds.
            UnavailableError: the peer stopped answering pings, or the connection the request went out on broke (the
                peer died or restarted).
            OpError: the peer answered with an error.
        """
        sock, handshakes, req_id, start, deadline, breaks = self._send_from_thread(
            address, method, header, tensors, timeout, settle=True
        )
        last_heard = pinged = start
        while True:
            now = time.monotonic()
            wait = self.heartbeat_interval if deadline is None else min(self.heartbeat_interval, deadline - now)
            if wait <= 0:
                raise errors.DeadlineExceededError(None, None, f"{method} to {address} timed out after {timeout:.3g} s")
            ready = sock.poll(int(wait * 1000) + 1, _POLLIN)
            # Silence counts up to the poll: a reply that comes while this thread is held up after it waits unread.
            polled = time.monotonic()
            if ready:
                reply, reply_tensors = self._read_reply(sock, address)
                last_heard = time.monotonic()
                if reply is not None and reply.get("id") == req_id:
                    if "error" in reply:
                        raise wire.decode_error(reply["error"])
                    return reply, reply_tensors
                # A pong, or the late reply of an earlier call that gave up.
                self._check_connection(address, handshakes, breaks, method)
            else:
                self._check_connection(address, handshakes, breaks, method)
                self._check_silence(address, polled - last_heard)
            if polled - pinged >= self.heartbeat_interval:
                # Whatever else comes in: the task gives up a step whose client it stops hearing (.client_watch).
                pinged = polled
                _try_send(sock, PING)

    def call_all(
        self, requests: Sequence[tuple[str, str, dict[str, Any], Sequence[Any]]], timeout: float | None = None
    ) -> list[tuple[dict[str, Any], list[Any]]]:
        """Sends every ``(address, method, header, tensors)`` request at once and returns their
        ``(reply_header, reply_tensors)`` in order once all have answered; as :meth:`call` (the calling thread's
        sockets, the same deadline, pings and dead-peer checks), but the first failure is raised as soon as it
        comes, leaving the others unanswered (their late replies are dropped).

        Example:
            >>> from dtf_notebook.distributed.service_socket import ServiceSocket
            >>> servers = [ServiceSocket("127.0.0.1:0", lambda m, h, t, k=k: ({"n": h["n"] * k}, [])) for k in (2, 3)]
            >>> client = Client()
            >>> [h["n"] for h, _ in client.call_all([(s.address, "Times", {"n": 7}, []) for s in servers], timeout=5)]
            [14, 21]
            >>> client.close(); [s.close() for s in servers] and None
        """
        replies: list[Any] = [None] * len(requests)
        # Request id -> (its index, address, socket, handshake watch, breaks before it went out).
        waiting: dict[int, tuple[int, str, Any, HandshakeWatch, int]] = {}
        start = time.monotonic()
        deadline = None if timeout is None else start + timeout
        poller = zmq.Poller()
        for index, (address, method, header, tensors) in enumerate(requests):
            sock, handshakes, req_id, _, _, breaks = self._send_from_thread(
                address, method, header, tensors, None if deadline is None else deadline - time.monotonic(), True
            )
            waiting[req_id] = (index, address, sock, handshakes, breaks)
            poller.register(sock, _POLLIN)
        heard = {address: start for address, *_ in requests}
        pinged = dict(heard)
        while waiting:
            now = time.monotonic()
            wait = self.heartbeat_interval if deadline is None else min(self.heartbeat_interval, deadline - now)
            if wait <= 0:
                late = sorted(address for _, address, *_ in waiting.values())
                raise errors.DeadlineExceededError(None, None, f"No reply from {late} within {timeout:.3g} s")
            ready = dict(poller.poll(int(wait * 1000) + 1))
            polled = time.monotonic()
            quiet = set()
            for req_id, (index, address, sock, handshakes, breaks) in list(waiting.items()):
                if req_id not in waiting:
                    continue  # answered by a read below for another request on the same socket
                method = requests[index][1]
                if sock in ready:
                    ready.pop(sock)
                    reply, tensors = self._read_reply(sock, address)
                    heard[address] = time.monotonic()
                    answered = waiting.pop(reply.get("id"), None) if reply is not None else None
                    if answered is None:
                        self._check_connection(address, handshakes, breaks, method)  # a pong, or a late reply
                        continue
                    if "error" in reply:
                        raise wire.decode_error(reply["error"])
                    replies[answered[0]] = (reply, tensors)
                    continue
                self._check_connection(address, handshakes, breaks, method)
                quiet.add(address)
            for address in quiet:
                self._check_silence(address, polled - heard[address])
            if polled - min(pinged.values()) >= self.heartbeat_interval:
                # Whatever else comes in: a task gives up a step whose client it stops hearing (.client_watch).
                for _, address, sock, *_ in list(waiting.values()):
                    if polled - pinged[address] >= self.heartbeat_interval:  # (once per address)
                        pinged[address] = polled
                        _try_send(sock, PING)
        return replies

    def _check_silence(self, address: str, silent: float) -> None:
        """Raises UnavailableError (and drops the thread's socket to it) when the task at ``address`` owing a reply
        has been silent for more than ``dead_after`` seconds."""
        if silent > self.dead_after:
            self._drop_thread_socket(address)
            raise errors.UnavailableError(
                None, None, f"The task at {address} did not answer for {silent:.1f} s; it is probably down"
            )

    def _check_connection(self, address: str, handshakes: HandshakeWatch, breaks: int, method: str) -> None:
        """Raises UnavailableError when the connection a call's request went out on (``breaks`` connections of
        the thread's socket had broken before) broke since: the reply can never come."""
        read_events(handshakes, self.cluster_key)
        if handshakes.breaks != breaks:
            self._drop_thread_socket(address)
            raise errors.UnavailableError(
                None,
                None,
                f"The connection to the task at {address} broke while {method} waited for its reply; the task went "
                "down or restarted, and the request was lost with it",
            )

    def send_oneway(
        self, address: str, method: str, header: dict[str, Any] | None = None, tensors: Sequence[Any] = ()
    ) -> None:
        """Sends one request that gets no reply, from the calling thread's own socket, and returns once it is
        queued (large tensors stream in parts like any request).

        The receiver handles a failure itself (a worker aborts the step a failed ``SendTensor`` was for), so
        the sender never waits a round trip for an acknowledgement.

        Raises:
            UnavailableError: the peer could not be reached for ``dead_after`` seconds.

        Example:
            >>> from dtf_notebook.distributed.service_socket import ServiceSocket
            >>> seen = []
            >>> server = ServiceSocket("127.0.0.1:0", lambda m, h, t: (seen.append(h["n"]) or {}, []))
            >>> client = Client()
            >>> client.send_oneway(server.address, "Note", {"n": 1})
            >>> _ = client.call(server.address, "Note", {"n": 2}, timeout=5)  # requests arrive in order
            >>> seen
            [1, 2]
            >>> server.close(); client.close()
        """
        self._send_from_thread(address, method, {**(header or {}), "oneway": True}, tensors, None, settle=False)

    def _send_from_thread(
        self,
        address: str,
        method: str,
        header: dict[str, Any] | None,
        tensors: Sequence[Any],
        timeout: float | None,
        settle: bool,
    ) -> tuple[zmq.Socket, HandshakeWatch, int, float, float | None, int]:
        """Encodes and sends a request on the calling thread's socket: (socket, its monitor, request id, start,
        deadline, breaks).

        ``breaks`` counts the socket's connections that broke before the request's first part went out: with
        ``settle`` the monitor is read just before, so a later break (which loses the request) tells from earlier
        ones.
        """
        if self._closing.is_set():
            raise errors.CancelledError(None, None, "The client is closed")
        # A socket owned by the calling thread: no hand-off to the I/O thread and back.
        sock, handshakes = self._thread_socket(address)
        req_id = next(self._ids)
        request = wire.encode_message({**(header or {}), "id": req_id, "method": method}, tensors, check=False)
        start = time.monotonic()
        deadline = None if timeout is None else start + timeout
        breaks = 0
        for part, message in enumerate(stream_messages(request, next(self._stream_ids))):
            first = settle and not part
            self._send_patiently(sock, handshakes, message, address, method, start, deadline, first)
            if first:
                breaks = handshakes.breaks
        return sock, handshakes, req_id, start, deadline, breaks

    def _send_patiently(
        self,
        sock: zmq.Socket,
        handshakes: HandshakeWatch,
        frames: list[Any],
        address: str,
        method: str,
        start: float,
        deadline: float | None,
        settle: bool = False,
    ) -> None:
        # A DEALER with no connected peer blocks on send: never block, wait in slices and give up like a call.
        # With ``settle``, each try reads the monitor first: a connection that broke while this waited is not the
        # one the message goes out on (a new one comes up only after the old one's break was reported). From a
        # reported break until a connection is up again nothing is sent (see ``watch_breaks``).
        while True:
            if settle:
                read_events(handshakes, self.cluster_key)
            if not handshakes.down and _try_send(sock, frames):
                return
            patience = 1.0 if deadline is None else min(1.0, max(0.05, deadline - time.monotonic()))
            refused = refusal(handshakes, address, self.cluster_key, patience)
            if refused is not None:
                self._drop_thread_socket(address)
                raise refused
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                raise errors.DeadlineExceededError(None, None, f"{method} to {address}: could not even send in time")
            if now - start > self.dead_after:
                self._drop_thread_socket(address)
                raise errors.UnavailableError(
                    None, None, f"Could not reach the task at {address} for {now - start:.1f} s; it is probably down"
                )
            if handshakes.down:
                handshakes.monitor.poll(50)  # until the next connection comes up
            else:
                sock.poll(50, zmq.POLLOUT)

    def _read_reply(self, sock: zmq.Socket, address: str) -> tuple[dict[str, Any] | None, list[Any]]:
        frames = sock.recv_multipart(copy=False)
        try:
            message = self._pushers.assembler.feed(address, [f.buffer for f in frames])
        except StreamError as e:
            message = ({"id": e.request_id, "error": wire.encode_error(e)}, [])
        except errors.OpError:
            return None, []
        if message is None:
            return None, []  # part of a streamed reply
        header, tensors = message
        incarnation = header.get("incarnation")
        if isinstance(incarnation, int):
            self._incarnations[address] = incarnation
        return header, tensors

    def _thread_socket(self, address: str) -> tuple[zmq.Socket, HandshakeWatch]:
        sockets = getattr(self._pushers, "dealers", None)
        if sockets is None:
            sockets = self._pushers.dealers = _SocketSet()
            self._pushers.assembler = StreamAssembler(self._limits)
        now, lru = time.monotonic(), _lru()
        lru.pop((self, address), None)
        lru[(self, address)] = now  # the most recently used last
        pair = sockets.get(address)
        if pair is None:
            while len(lru) > _THREAD_SOCKETS:
                (client, oldest), used = next(iter(lru.items()))
                if now - used <= _IDLE_BEFORE_CLOSE:
                    break
                client._drop_thread_socket(oldest)  # this thread's own socket, of whichever client
            sock = self._new_dealer(address)
            handshakes = watch(sock)  # before connecting, so that no failed handshake goes unseen
            sock.connect(_tcp(address))
            pair = sockets[address] = (sock, handshakes)
        return pair

    def _drop_thread_socket(self, address: str) -> None:
        sockets = getattr(self._pushers, "dealers", None)
        pair = sockets.pop(address, None) if sockets is not None else None
        _lru().pop((self, address), None)
        if pair is not None:
            sock, handshakes = pair
            unwatch(sock, handshakes)
            sock.close(0)
            self._pushers.assembler.forget(address)

    def call_async(
        self, address: str, method: str, header: dict[str, Any] | None = None, tensors: Sequence[Any] = ()
    ) -> Future:
        """Sends one request; the returned future yields ``(reply_header, reply_tensors)`` or raises."""
        if self._closing.is_set():
            raise errors.CancelledError(None, None, "The client is closed")
        req_id = next(self._ids)
        future: Future = Future()
        frames = wire.encode_message({**(header or {}), "id": req_id, "method": method}, tensors, check=False)
        with self._lock:
            self._pending[req_id] = _Pending(future, address)
        self._command([b"send", address.encode(), req_id.to_bytes(8, "little"), *frames])
        return future

    def _forget(self, future: Future) -> None:
        with self._lock:
            for req_id, pending in list(self._pending.items()):
                if pending.future is future:
                    del self._pending[req_id]

    def _command(self, frames: list[Any]) -> None:
        _push_from_thread(self._pushers, self._context, self._cmd_endpoint, frames)

    def _socket(self, address: str, poller: zmq.Poller) -> zmq.Socket:
        sock = self._sockets.get(address)
        if sock is None:
            sock = self._sockets[address] = self._new_dealer(address)
            monitor = self._monitors[address] = watch_breaks(sock)  # before connecting: no break goes unseen
            sock.connect(_tcp(address))
            poller.register(sock, zmq.POLLIN)
            poller.register(monitor, zmq.POLLIN)
        return sock

    def _check_connection_io(self, address: str) -> None:
        """On the I/O thread: fails the requests to ``address`` that went out on a connection that broke since the
        last check (their replies can never come); the parts of a stream left behind it are dropped. From a break
        until a connection is up again, ``address`` is in ``_down`` and its messages wait (see ``watch_breaks``)."""
        breaks, connected = read_breaks(self._monitors[address])
        if connected is not None:
            (self._down.discard if connected else self._down.add)(address)
        if not breaks:
            return
        with self._lock:
            lost = [(rid, p) for rid, p in self._pending.items() if p.address == address and p.sent]
            for rid, _ in lost:
                del self._pending[rid]
            queued = self._backlog.get(address)
            if queued:  # what is left of the requests lost (or given up): on the next connection, parts of nothing
                queued[:] = [entry for entry in queued if not getattr(self._pending.get(entry[0]), "sent", True)]
        for _, p in lost:
            p.future.set_exception(
                errors.UnavailableError(
                    None,
                    None,
                    f"The connection to the task at {address} broke while it owed a reply; the task went down or "
                    "restarted, and the request was lost with it",
                )
            )

    def _new_dealer(self, address: str) -> zmq.Socket:
        """A DEALER set up to reach ``address`` (its caller connects it)."""
        return new_dealer(self._context, address, self._limits, self._keys)

    def _loop(self) -> None:
        poller = zmq.Poller()
        poller.register(self._commands, zmq.POLLIN)
        by_socket: dict[zmq.Socket, str] = {}
        backlog, pending = self._backlog, self._pending
        next_check = time.monotonic() + self.heartbeat_interval
        while not self._closing.is_set():
            timeout_ms = max(0, int((next_check - time.monotonic()) * 1000))
            try:
                ready = dict(poller.poll(min(timeout_ms, 100)))
            except zmq.ZMQError:
                break
            polled = time.monotonic()
            if self._commands in ready:
                for frames in _drain(self._commands):
                    address = bytes(frames[1].buffer).decode()
                    sock = self._socket(address, poller)
                    by_socket[sock] = address
                    self._last_heard.setdefault(address, time.monotonic())
                    req_id = int.from_bytes(frames[2].buffer, "little")
                    messages = stream_messages(frames[3:], next(self._stream_ids))
                    backlog.setdefault(address, []).extend((req_id, message) for message in messages)
            for address, queued in list(backlog.items()):
                # Messages to a peer not connected yet wait here; the heartbeat fails them if it never comes. A break
                # reported before they go out is an earlier connection's: settled first, it does not fail them.
                self._check_connection_io(address)
                sock = self._sockets[address]
                while queued and address not in self._down and _try_send(sock, queued[0][1]):
                    sent = pending.get(queued.pop(0)[0])  # None: failed or given up meanwhile
                    if sent is not None:
                        sent.sent = True
                # A socket that holds messages back wakes the loop once it can take them (its connection is up),
                # not at the next poll timeout: a first request to a peer would otherwise wait up to 100 ms.
                # (Not while its connection is down: the next handshake, on the monitor, wakes the loop then.)
                writable = queued and address not in self._down
                poller.register(sock, zmq.POLLIN | zmq.POLLOUT if writable else zmq.POLLIN)
                if not queued:
                    del backlog[address]
            for sock, address in list(by_socket.items()):
                if sock in ready:
                    for frames in _drain(sock):
                        self._deliver(address, frames)
                if self._monitors[address] in ready:
                    self._check_connection_io(address)
            now = time.monotonic()
            if now >= next_check:
                self._heartbeat(now, polled, poller)
                self._close_idle_sockets(now, poller, by_socket)
                next_check = now + self.heartbeat_interval
        for address, sock in self._sockets.items():
            unwatch_breaks(sock, self._monitors[address])
            sock.close(0)
        self._commands.close(0)

    def _deliver(self, address: str, frames: list[Any]) -> None:
        self._last_heard[address] = time.monotonic()
        try:
            message = self._assembler.feed(address, [f.buffer for f in frames])
        except StreamError as e:
            message = ({"id": e.request_id, "error": wire.encode_error(e)}, [])
        except errors.OpError:
            return  # a garbled reply cannot be matched to a request; the deadline or heartbeat will fire
        if message is None:
            return  # part of a streamed reply
        header, tensors = message
        incarnation = header.get("incarnation")
        if isinstance(incarnation, int):
            self._incarnations[address] = incarnation
        with self._lock:
            pending = self._pending.pop(header.get("id"), None)
        if pending is None:
            return
        if "error" in header:
            pending.future.set_exception(wire.decode_error(header["error"]))
        else:
            pending.future.set_result((header, tensors))

    def _heartbeat(self, now: float, polled: float, poller: zmq.Poller) -> None:
        # Silence counts up to the last poll: replies that came while this thread was held up are not read yet.
        with self._lock:
            owing = {}
            for p in self._pending.values():
                owing[p.address] = min(owing.get(p.address, p.sent_at), p.sent_at)
        for address, oldest in owing.items():
            silent = polled - max(self._last_heard.get(address, oldest), oldest)
            if silent > self.dead_after:
                self._fail_address(
                    address,
                    errors.UnavailableError(
                        None, None, f"The task at {address} did not answer for {silent:.1f} s; it is probably down"
                    ),
                )
            elif now - self._last_ping.get(address, 0.0) >= self.heartbeat_interval and now - oldest > 0.2:
                self._last_ping[address] = now
                _try_send(self._socket(address, poller), PING)

    def _close_idle_sockets(self, now: float, poller: zmq.Poller, by_socket: dict[zmq.Socket, str]) -> None:
        """On the I/O thread: closes the sockets that owe no reply and were idle for ``_IDLE_BEFORE_CLOSE`` seconds
        (a later request opens a new one)."""
        with self._lock:
            owing = {p.address for p in self._pending.values()}
        idle = [
            address
            for address in self._sockets
            if address not in owing
            and address not in self._backlog
            and now - self._last_heard.get(address, 0.0) > _IDLE_BEFORE_CLOSE
        ]
        for address in idle:
            sock, monitor = self._sockets.pop(address), self._monitors.pop(address)
            poller.unregister(sock)
            poller.unregister(monitor)
            by_socket.pop(sock, None)
            unwatch_breaks(sock, monitor)
            sock.close(0)
            self._last_heard.pop(address, None)
            self._last_ping.pop(address, None)
            self._down.discard(address)  # a new socket starts with no break
            self._assembler.forget(address)

    def _fail_address(self, address: str, error: errors.OpError) -> None:
        """On the I/O thread: fails every request owed by ``address``; what of them still waits to go out is dropped,
        so that a task coming up there later never runs a request its caller was told had failed."""
        with self._lock:
            failed = [(rid, p) for rid, p in self._pending.items() if p.address == address]
            for rid, _ in failed:
                del self._pending[rid]
        queued = self._backlog.get(address)
        if queued:
            ids = {rid for rid, _ in failed}
            queued[:] = [entry for entry in queued if entry[0] not in ids]
        for _, p in failed:
            p.future.set_exception(error)

    def close(self) -> None:
        """Fails outstanding requests with CancelledError and closes every socket."""
        if self._closing.is_set():
            return
        self._closing.set()
        self._thread.join(5)
        with self._lock:
            pending, self._pending = list(self._pending.values()), {}
        for p in pending:
            p.future.set_exception(errors.CancelledError(None, None, "The client was closed"))


_shared_clients: dict[ClusterKey | None, Client] = {}
_shared_lock = threading.Lock()


def shared_client(cluster_key: ClusterKey | None = None) -> Client:
    """The process-wide client for ``cluster_key`` (created on first use).

    Example:
        >>> shared_client() is shared_client()
        True
    """
    with _shared_lock:
        client = _shared_clients.get(cluster_key)
        if client is None or client._closing.is_set():
            client = _shared_clients[cluster_key] = Client(cluster_key)
        return client


def client_for(address: str, cluster_key: ClusterKey | None = None) -> Client:
    """The shared client to call the task at ``address`` with: keyed with ``cluster_key``, else with the key this
    process finds for that address (see :func:`~dtf_notebook.distributed.keyring.client_key`).

    Example:
        >>> client_for("127.0.0.1:1", None) is shared_client(client_key("127.0.0.1:1"))
        True
    """
    return shared_client(cluster_key if cluster_key is not None else client_key(address))


def new_dealer(context: zmq.Context, address: str, limits: wire.WireLimits, keys: dict[str, Any] | None) -> zmq.Socket:
    """A DEALER set up to reach the task at ``address`` (the caller connects it): fast reconnects, replies over
    ``limits.max_tensor_bytes`` refused, CurveZMQ client keys when ``keys`` (see ``curve_keys``) are given.

    Example:
        >>> sock = new_dealer(zmq.Context.instance(), "127.0.0.1:1", wire.WireLimits(), None)
        >>> sock.getsockopt(zmq.IMMEDIATE)
        1
        >>> sock.close(0)
    """
    sock = context.socket(zmq.DEALER)
    _apply_common_options(sock, address)
    # (Also what makes holding sends from a break until the next handshake safe, see watch_breaks: a reconnect
    # comes at least 50 ms after the break, long after the socket took in the dead pipe's end.)
    sock.setsockopt(zmq.RECONNECT_IVL, 50)
    sock.setsockopt(zmq.RECONNECT_IVL_MAX, 500)
    sock.setsockopt(zmq.MAXMSGSIZE, limits.max_tensor_bytes)
    # Queue messages only on a completed connection: a send to a peer that is not there waits (and gives up after
    # dead_after) instead of sitting in a queue until some later task takes the port.
    sock.setsockopt(zmq.IMMEDIATE, 1)
    if keys is not None:
        sock.curve_serverkey = keys["server_public"]
        sock.curve_secretkey = keys["client_secret"]
        sock.curve_publickey = keys["client_public"]
    return sock
