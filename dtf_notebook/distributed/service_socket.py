"""A task's listening end: a bound ROUTER socket serving requests on its event loop and a thread pool.

The socket's I/O thread is the task's event loop. A request the ``start`` hook takes is served on the loop
itself and answered later through a :class:`Reply` (a training step: the master's fan-out and the task's own
partitions, which stop instead of waiting for a tensor and go on when it arrives, see
:meth:`ServiceSocket.call_soon`); the loop reaches other tasks through its own sockets (:meth:`request`,
:meth:`send_oneway`). So a step crosses no thread of the task: each hand-off between threads cost a wake-up and
a turn at the GIL, and under load the GIL's switch interval. Other requests go to a thread pool, whose replies
the loop sends back (ZeroMQ sockets are not thread-safe, so only the loop touches them). ``Ping`` is answered
on the loop, so a busy task still proves it is alive. Every reply carries the server's *incarnation* (random
per start).

Example:
    >>> from dtf_notebook.distributed.client import Client
    >>> server = ServiceSocket("127.0.0.1:0", lambda method, header, tensors: ({"method": method}, []))
    >>> client = Client()
    >>> client.call(server.address, "Hello", timeout=5)[0]["method"]
    'Hello'
    >>> client.incarnation(server.address) == server.incarnation
    True
    >>> server.close(); client.close()
"""

from __future__ import annotations

import collections
import heapq
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from dtf_notebook import errors
from dtf_notebook.distributed import wire
from dtf_notebook.distributed.allocator import tune_for_streams
from dtf_notebook.distributed.cluster_key import ClusterKey
from dtf_notebook.distributed.curve import admit, curve_keys
from dtf_notebook.distributed.loop_peers import LoopPeers, ReplyCallback
from dtf_notebook.distributed.peer_limits import PeerLedger, current_peer
from dtf_notebook.distributed.wire_stream import StreamAssembler, StreamError, stream_messages
from dtf_notebook.distributed.zmq_util import _apply_common_options, _drain, _push_from_thread, _tcp, send_frames
from dtf_notebook.lazy_modules import zmq

Handler = Callable[[str, dict[str, Any], list[Any]], tuple[dict[str, Any], Sequence[Any]]]

_log = logging.getLogger(__name__)
_TICK = 0.1  # seconds between the loop's checks of deadlines, heartbeats and stale streams
_HEARD_KEEP_SECS = 600.0  # a connection not heard from for this long is forgotten (see ServiceSocket.silent_for)
_FORGET_EVERY_SECS = 60.0  # how often the loop forgets such connections
_WAKE = [b""]  # a message on the reply channel that only wakes the loop (replies have an identity frame first)


class Reply:
    """The answer to one request served on the event loop, given later with :meth:`ok` or :meth:`fail` from
    any thread (a request taken by the ``start`` hook).

    Example:
        >>> from dtf_notebook.distributed.client import Client
        >>> def start(method, header, tensors, reply):
        ...     threading.Timer(0.01, reply.ok, [{"later": header["x"]}]).start()   # answered from another thread
        ...     return True
        >>> server = ServiceSocket("127.0.0.1:0", lambda m, h, t: ({}, []), start=start)
        >>> client = Client()
        >>> client.call(server.address, "Slow", {"x": 3}, timeout=5)[0]["later"]
        3
        >>> server.close(); client.close()
    """

    __slots__ = ("_socket", "identity", "req_id", "method", "header", "_nbytes", "_done")

    def __init__(
        self, socket: ServiceSocket, identity: Any, req_id: int, method: str, header: dict[str, Any], nbytes: int
    ) -> None:
        self._socket = socket
        self.identity, self.req_id, self.method, self.header = identity, req_id, method, header
        self._nbytes = nbytes
        self._done = False

    def ok(self, header: dict[str, Any], tensors: Sequence[Any] = ()) -> None:
        """Answers with ``header`` and ``tensors``."""
        sock = self._socket
        if self._finish():
            return
        if self.header.get("oneway") is True:
            return
        try:
            frames = wire.encode_message({**header, "id": self.req_id, **sock._stamp()}, tensors, check=False)
        except errors.OpError as e:
            frames = sock._error_frames(self.req_id, e)
        sock._deliver_reply([self.identity, *frames])

    def fail(self, error: BaseException) -> None:
        """Answers with ``error`` (an ``InternalError`` naming it, when it is not an OpError)."""
        sock = self._socket
        if self._finish():
            return
        if not isinstance(error, errors.OpError):
            error = errors.InternalError(None, None, f"{self.method} failed: {type(error).__name__}: {error}")
        if self.header.get("oneway") is True:
            sock._fail_oneway(self.method, self.header, error)
            return
        sock._deliver_reply([self.identity, *sock._error_frames(self.req_id, error)])

    def _finish(self) -> bool:
        """True when already answered; else marks it answered and stops counting it as in flight."""
        if self._done:
            return True
        self._done = True
        self._socket.ledger.release_request(self.identity.bytes, self._nbytes)
        return False


#: ``start(method, header, tensors, reply) -> bool``: takes a request to serve on the loop (True) or leaves it
#: to the thread pool (False). It runs on the loop and must not block; it answers through ``reply``.
Starter = Callable[[str, dict[str, Any], list[Any], Reply], bool]


class ServiceSocket:
    """A bound ROUTER socket serving requests with ``handler(method, header, tensors)``.

    Args:
        address: ``host:port`` to bind; port 0 picks a free port (see ``address`` afterwards).
        handler: Returns ``(reply_header, reply_tensors)``; an ``OpError`` it raises is sent back as an error.
        cluster_key: Enables CurveZMQ: only peers holding the same key can talk to this socket.
        ledger: Counts what each peer (connection) holds in flight, refusing requests and streams over its caps
            with ``ResourceExhaustedError`` (default: a ledger with the default :class:`PeerLimits`).
        incarnation: This server's start identity (random when None).
        max_workers: Size of the thread pool running handlers.
        limits: Wire limits applied to incoming messages.
        inline: Says which requests are short enough to run on the I/O thread itself.
        oneway_failed: Called with ``(method, header, error)`` when a request sent with ``"oneway": True`` in
            its header (see ``Client.send_oneway``) fails: such a request gets no reply, error or not.
        stale_stream_secs: A streamed request still incomplete after this many seconds is dropped and failed
            (its sender died or lied).
        start: Takes requests to serve on the event loop (see :data:`Starter` and :class:`Reply`).
        start_methods: The methods ``start`` may take (None: any); the others skip it.
        tick: Called with ``time.monotonic()`` on the loop every 0.1 s (deadlines of the steps it serves).
        undeliverable: Told ``(method, header, error)`` for a one-way message the loop could not send (see
            :class:`~dtf_notebook.distributed.loop_peers.LoopPeers`).

    Raises:
        UnavailableError: the address cannot be bound (e.g. the port is in use).

    Example:
        >>> from dtf_notebook.distributed.client import Client
        >>> server = ServiceSocket("127.0.0.1:0", lambda method, header, tensors: ({"sum": header["a"] + 1}, []))
        >>> client = Client()
        >>> client.call(server.address, "AddOne", {"a": 41}, timeout=5)[0]["sum"]
        42
        >>> server.close(); client.close()
    """

    def __init__(
        self,
        address: str,
        handler: Handler,
        cluster_key: ClusterKey | None = None,
        incarnation: int | None = None,
        max_workers: int = 64,
        limits: wire.WireLimits | None = None,
        inline: Callable[[str, dict[str, Any]], bool] | None = None,
        oneway_failed: Callable[[str, dict[str, Any], errors.OpError], None] | None = None,
        stale_stream_secs: float = 60.0,
        ledger: PeerLedger | None = None,
        start: Starter | None = None,
        start_methods: frozenset[str] | None = None,
        tick: Callable[[float], None] | None = None,
        undeliverable: Callable[[str, dict[str, Any], errors.OpError], None] | None = None,
    ) -> None:
        self.incarnation = incarnation if incarnation is not None else int.from_bytes(os.urandom(6), "little")
        tune_for_streams()  # streamed tensors arrive in buffers the allocator should recycle
        self._handler = handler
        # Requests this predicate accepts are known to be short and never to wait on a peer: they run on the
        # I/O thread itself, saving two thread hand-offs per call.
        self._inline = inline
        # A request whose header says "oneway" gets no reply; when it fails, this is told instead.
        self._oneway_failed = oneway_failed
        self._start = start
        self._start_methods = start_methods
        self._tick = tick
        self._limits = limits or wire.WireLimits()
        self.ledger = ledger or PeerLedger()
        self._assembler = StreamAssembler(
            self._limits, stale_after=stale_stream_secs, on_drop=self._stream_dropped, admit=self.ledger.admit_stream
        )
        self._stream_ids = itertools.count(1)
        # Connection identity -> when the loop last heard anything from it, and when the loop last polled: a step
        # whose client went silent is given up (see ``silent_for`` and :mod:`.client_watch`).
        self._heard: dict[bytes, float] = {}
        self._polled = time.monotonic()
        self._context = zmq.Context.instance()
        self._router = self._context.socket(zmq.ROUTER)
        _apply_common_options(self._router, address)
        self._router.setsockopt(zmq.ROUTER_MANDATORY, 0)
        # No single message may hold more than a peer may have in flight: ZeroMQ would buffer all of it first.
        largest = min(
            self._limits.max_tensor_bytes, self.ledger.limits.max_inflight_bytes + self._limits.max_header_bytes
        )
        self._router.setsockopt(zmq.MAXMSGSIZE, largest)
        self._auth = None
        host, _, port = address.rpartition(":")
        try:
            if cluster_key:
                self._auth = admit(self._context, cluster_key)
                keys = curve_keys(cluster_key)
                self._router.zap_domain = self._auth.domain.encode()
                self._router.curve_server = True
                self._router.curve_secretkey = keys["server_secret"]
                self._router.curve_publickey = keys["server_public"]
            if port == "0":
                bound = self._router.bind_to_random_port(f"tcp://{host}")
                self.address = f"{host}:{bound}"
            else:
                _bind_with_retry(self._router, _tcp(address))
                self.address = address
        except BaseException as e:
            # Whatever failed, the socket and this socket's admission to the shared authenticator go.
            self._router.close(0)
            if self._auth is not None:
                self._auth.release()
            if isinstance(e, zmq.ZMQError):
                raise errors.UnavailableError(None, None, f"Could not bind {address}: {e.strerror}") from None
            raise
        self._reply_endpoint = f"inproc://dtf-replies-{id(self)}-{self.incarnation}"
        self._replies = self._context.socket(zmq.PULL)
        self._replies.bind(self._reply_endpoint)
        self._pushers = threading.local()
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="dtf-handler")
        self._closing = threading.Event()
        self._calls: collections.deque[Callable[[], None]] = collections.deque()  # run on the loop, in order
        self._timers: list[tuple[float, int, Callable[[], None]]] = []  # (when, order, fn): a heap, loop-only
        self._timer_order = itertools.count()
        self._poller = zmq.Poller()
        self.peers = LoopPeers(cluster_key, limits=self._limits, undeliverable=undeliverable)
        self._thread = threading.Thread(target=self._loop, name=f"dtf-server-{self.address}", daemon=True)
        self._loop_ident = -1
        self._thread.start()

    def _push(self, frames: list[Any]) -> None:
        _push_from_thread(self._pushers, self._context, self._reply_endpoint, frames)

    @property
    def on_loop(self) -> bool:
        """Whether the calling thread is this socket's event loop."""
        return threading.get_ident() == self._loop_ident

    def call_soon(self, fn: Callable[[], None]) -> None:
        """Runs ``fn()`` on the event loop, after what it is doing now (callable from any thread).

        Example:
            >>> server = ServiceSocket("127.0.0.1:0", lambda m, h, t: ({}, []))
            >>> done = threading.Event()
            >>> server.call_soon(done.set)
            >>> done.wait(5)
            True
            >>> server.close()
        """
        self._calls.append(fn)
        if not self.on_loop:
            self._push(_WAKE)

    def call_later(self, delay: float, fn: Callable[[], None]) -> None:
        """Runs ``fn()`` on the event loop about ``delay`` seconds from now (call it on the loop)."""
        heapq.heappush(self._timers, (time.monotonic() + delay, next(self._timer_order), fn))

    def request(
        self, address: str, method: str, header: dict[str, Any], tensors: Sequence[Any], callback: ReplyCallback
    ) -> None:
        """Sends a request to the task at ``address`` from the loop; ``callback(header, tensors, error)`` runs on
        the loop with its reply (see :class:`~dtf_notebook.distributed.loop_peers.LoopPeers`)."""
        if not self.on_loop:
            self.call_soon(lambda: self.request(address, method, header, tensors, callback))
            return
        self.peers.request(address, method, header, tensors, callback, self._poller)

    def send_oneway(self, address: str, method: str, header: dict[str, Any], tensors: Sequence[Any]) -> None:
        """Sends a request that gets no reply, from the loop (see ``Client.send_oneway``)."""
        if not self.on_loop:
            self.call_soon(lambda: self.send_oneway(address, method, header, tensors))
            return
        self.peers.send_oneway(address, method, header, tensors, self._poller)

    def _deliver_reply(self, frames: list[Any]) -> None:
        if self.on_loop:
            self._send(frames)
        elif not self._closing.is_set():
            self._push(frames)

    def _loop(self) -> None:
        self._loop_ident = threading.get_ident()
        poller = self._poller
        poller.register(self._router, zmq.POLLIN)
        poller.register(self._replies, zmq.POLLIN)
        peers = self.peers
        next_tick = time.monotonic() + _TICK
        next_forget = next_tick + _FORGET_EVERY_SECS
        while not self._closing.is_set():
            timeout = 100
            if self._calls:
                timeout = 0
            elif peers.backlogged:
                timeout = 5
            elif self._timers:
                timeout = max(0, min(timeout, int((self._timers[0][0] - time.monotonic()) * 1000) + 1))
            try:
                ready = dict(poller.poll(timeout))
            except zmq.ZMQError:
                break
            polled = time.monotonic()
            if self._replies in ready:
                for frames in _drain(self._replies):
                    if len(frames) > 1:
                        self._send(frames)
            if self._router in ready:
                for frames in _drain(self._router):
                    self._receive(frames, polled)
            # Published once what came in by the poll is counted: a loop held up makes no peer look silent.
            self._polled = polled
            if len(ready) > (self._router in ready) + (self._replies in ready):
                peers.receive(ready)  # replies to the loop's own requests
            self._run_calls()
            if peers.backlogged:
                peers.pump()
            now = time.monotonic()
            while self._timers and self._timers[0][0] <= now:
                self._run(heapq.heappop(self._timers)[2])
            if now >= next_tick:
                self._assembler.expire(now)  # report streams whose sender went quiet
                peers.heartbeat(now, polled)
                if self._tick is not None:
                    self._run(self._tick, now)
                next_tick = now + _TICK
            if now >= next_forget:
                self._forget_quiet(now)
                next_forget = now + _FORGET_EVERY_SECS
        peers.close()
        self._router.close(0)
        self._replies.close(0)

    def _run_calls(self) -> None:
        # Only those queued so far: what they queue runs in the next round, after the sockets had their turn.
        for _ in range(len(self._calls)):
            self._run(self._calls.popleft())

    @staticmethod
    def _run(fn: Callable[..., None], *args: Any) -> None:
        try:
            fn(*args)
        except Exception:  # noqa: BLE001 - one failing continuation must not stop the loop serving everyone else
            _log.exception("A call on the task's event loop failed")

    def _send(self, frames: list[Any]) -> None:
        identity = frames[0]
        try:
            for message in stream_messages(frames[1:], next(self._stream_ids)):
                send_frames(self._router, [identity, *message])
        except zmq.ZMQError:
            pass  # the peer is gone; nothing to deliver to

    def _receive(self, frames: list[Any], polled: float) -> None:
        if len(frames) < 2:
            return  # not even an identity and a header: drop
        identity = frames[0]
        peer = identity.bytes
        self._heard[peer] = polled
        buffers = [f.buffer for f in frames[1:]]
        try:
            message = self._assembler.feed(peer, buffers)
            if message is None:
                return  # part of a stream still arriving
            nbytes = self._assembler.last_nbytes
            header, tensors = message
            req_id = header.get("id")
            method = header.get("method")
            if not isinstance(method, str) or not isinstance(req_id, int):
                if self._assembler.last_streamed:
                    self.ledger.stream_dropped(peer, nbytes)
                raise wire.WireError(None, None, "A request needs an integer 'id' and a string 'method'")
            if method == "Ping":
                if self._assembler.last_streamed:
                    self.ledger.stream_dropped(peer, nbytes)  # answered at once below: nothing stays in flight
            elif self._assembler.last_streamed:
                self.ledger.stream_complete(peer)  # its bytes were counted when its head arrived
            else:
                self.ledger.admit_request(peer, nbytes)
        except errors.OpError as e:
            if isinstance(e, StreamError) and e.reserved:
                self.ledger.stream_dropped(peer, e.reserved)
            request = e.header if isinstance(e, StreamError) else self._assembler.request_of(buffers)
            if request is not None and request.get("oneway") is True:
                self._fail_oneway(request.get("method"), request, e)
                return
            req_id = request.get("id") if request is not None else None
            self._send([identity, *self._error_frames(req_id if isinstance(req_id, int) else -1, e)])
            return
        if method == "Ping":
            self._send([identity, *wire.encode_message({"id": req_id, **self._stamp()})])
            return
        if self._start is not None and (self._start_methods is None or method in self._start_methods):
            reply = Reply(self, identity, req_id, method, header, nbytes)
            token = current_peer.set(peer)
            try:
                taken = self._start(method, header, tensors, reply)
            except Exception as e:  # noqa: BLE001 - a handler bug must reach the caller, not kill the server
                taken = True
                reply.fail(e)
            finally:
                current_peer.reset(token)
            if taken:
                return
        if self._inline is not None and self._inline(method, header):
            self._handle(identity, req_id, method, header, tensors, nbytes, direct=True)
        else:
            self._pool.submit(self._handle, identity, req_id, method, header, tensors, nbytes)

    def silent_for(self, peer: bytes) -> float | None:
        """Seconds this socket had heard nothing from connection ``peer`` (an identity, as ``current_peer`` holds
        it) when its loop last looked; None for a peer never heard, or not heard from for ten minutes (forgotten
        within a minute after that). A loop held up does not make its peers look silent: what they sent meanwhile
        is counted before the loop's next look is published.

        Example:
            >>> from dtf_notebook.distributed.client import Client
            >>> from dtf_notebook.distributed.peer_limits import current_peer
            >>> server = ServiceSocket("127.0.0.1:0", lambda m, h, t: ({"peer": current_peer.get()}, []))
            >>> client = Client()
            >>> peer = client.call(server.address, "Who", timeout=5)[0]["peer"]
            >>> 0 <= server.silent_for(peer) < 5, server.silent_for(b"nobody")
            (True, None)
            >>> server.close(); client.close()
        """
        heard = self._heard.get(peer)
        return None if heard is None else max(0.0, self._polled - heard)

    def _forget_quiet(self, now: float) -> None:
        for peer, heard in list(self._heard.items()):
            if now - heard > _HEARD_KEEP_SECS:
                del self._heard[peer]

    def _stamp(self) -> dict[str, Any]:
        return {"incarnation": self.incarnation}

    def _error_frames(self, req_id: int, error: errors.OpError) -> list[Any]:
        return wire.encode_message({"id": req_id, **self._stamp(), "error": wire.encode_error(error)})

    def _handle(
        self,
        identity: Any,
        req_id: int,
        method: str,
        header: dict[str, Any],
        tensors: list[Any],
        nbytes: int,
        direct: bool = False,
    ) -> None:
        oneway = header.get("oneway") is True
        peer = identity.bytes
        token = current_peer.set(peer)
        try:
            reply, reply_tensors = self._handler(method, header, tensors)
            if oneway:
                return
            frames = wire.encode_message({**reply, "id": req_id, **self._stamp()}, reply_tensors, check=False)
        except Exception as e:  # noqa: BLE001 - a handler bug must reach the caller, not kill the server
            if not isinstance(e, errors.OpError):
                e = errors.InternalError(None, None, f"{method} failed: {type(e).__name__}: {e}")
            if oneway:
                self._fail_oneway(method, header, e)
                return
            frames = self._error_frames(req_id, e)
        finally:
            current_peer.reset(token)
            del tensors  # the request's buffers are released before it stops counting as in flight
            self.ledger.release_request(peer, nbytes)
        if direct:
            self._send([identity, *frames])
        elif not self._closing.is_set():
            self._push([identity, *frames])

    def _stream_dropped(self, identity: Any, error: StreamError) -> None:
        if error.reserved:
            self.ledger.stream_dropped(identity, error.reserved)
        request = error.header or {}
        if request.get("oneway") is True:
            self._fail_oneway(request.get("method"), request, error)
        elif isinstance(request.get("id"), int):
            self._send([identity, *self._error_frames(request["id"], error)])

    def _fail_oneway(self, method: Any, header: dict[str, Any], error: errors.OpError) -> None:
        if self._oneway_failed is not None:
            self._oneway_failed(str(method), header, error)

    def close(self) -> None:
        """Stops serving and releases the port at once."""
        if self._closing.is_set():
            return
        self._closing.set()
        self._thread.join(5)
        self._pool.shutdown(wait=False, cancel_futures=True)
        if self._auth is not None:
            self._auth.release()


def _bind_with_retry(sock: zmq.Socket, endpoint: str, patience: float = 3.0) -> None:
    """Binds, retrying briefly while the port is still held: ZeroMQ releases a closed socket's port
    asynchronously, so a task restarted on its own port right after ``stop()`` may race the release."""
    deadline = time.monotonic() + patience
    while True:
        try:
            sock.bind(endpoint)
            return
        except zmq.ZMQError as e:
            if e.errno != zmq.EADDRINUSE or time.monotonic() >= deadline:
                raise
            time.sleep(0.05)
