"""ZeroMQ request/reply transport between tasks, with deadlines, heartbeats and optional CurveZMQ.

:class:`ServiceSocket` is a task's listening end: a ROUTER socket bound at the
task's address whose I/O thread hands each request to a thread pool and sends
the replies back (ZeroMQ sockets are not thread-safe, so only the I/O thread
touches them). ``Ping`` is answered on the I/O thread itself, so a busy task
still proves it is alive.

:class:`Client` is a process's calling end: one DEALER socket per peer, all
owned by one I/O thread. ``call`` blocks until the reply, the deadline, or the
peer is judged dead: while requests to a peer are outstanding the client pings
it, and a peer silent for ``dead_after`` seconds fails them with
``UnavailableError``. Every reply carries the server's *incarnation* (random
per start); a reply from a new incarnation fails requests sent to the old one
with ``AbortedError`` (the task restarted and lost their state).

Example:
    >>> server = ServiceSocket("127.0.0.1:0", lambda method, header, tensors: ({"echo": header["x"]}, []))
    >>> client = Client()
    >>> reply, _ = client.call(server.address, "Echo", {"x": 7}, timeout=5)
    >>> reply["echo"]
    7
    >>> server.close(); client.close()
"""

from __future__ import annotations

import hashlib
import itertools
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import zmq
from zmq.utils import z85

from dtf_notebook import errors
from dtf_notebook.distributed import wire
from dtf_notebook.distributed.wire_stream import StreamAssembler, StreamError, stream_messages

Handler = Callable[[str, dict[str, Any], list[Any]], tuple[dict[str, Any], Sequence[Any]]]


# ---- CurveZMQ keys derived from a shared cluster key --------------------------------------------
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


def _tcp(address: str) -> str:
    return address if "://" in address else f"tcp://{address}"


def _apply_common_options(sock: zmq.Socket) -> None:
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.SNDHWM, 0)
    sock.setsockopt(zmq.RCVHWM, 0)
    sock.setsockopt(zmq.TCP_KEEPALIVE, 1)


# ---- server end -------------------------------------------------------------------------------
class ServiceSocket:
    """A bound ROUTER socket serving requests with ``handler(method, header, tensors)``.

    Args:
        address: ``host:port`` to bind; port 0 picks a free port (see ``address`` afterwards).
        handler: Returns ``(reply_header, reply_tensors)``; an ``OpError`` it raises is sent back as an error.
        cluster_key: Enables CurveZMQ: only peers holding the same key can talk to this socket.
        incarnation: This server's start identity (random when None).
        max_workers: Size of the thread pool running handlers.
        limits: Wire limits applied to incoming messages.

    Raises:
        UnavailableError: the address cannot be bound (e.g. the port is in use).
    """

    def __init__(
        self,
        address: str,
        handler: Handler,
        cluster_key: str | None = None,
        incarnation: int | None = None,
        max_workers: int = 64,
        limits: wire.WireLimits | None = None,
        inline: Callable[[str, dict[str, Any]], bool] | None = None,
    ) -> None:
        self.incarnation = incarnation if incarnation is not None else int.from_bytes(os.urandom(6), "little")
        self._handler = handler
        # Requests this predicate accepts are known to be short and never to wait on a peer: they run on the
        # I/O thread itself, saving two thread hand-offs per call.
        self._inline = inline
        self._limits = limits or wire.WireLimits()
        self._assembler = StreamAssembler(self._limits)
        self._stream_ids = itertools.count(1)
        self._context = zmq.Context.instance()
        self._router = self._context.socket(zmq.ROUTER)
        _apply_common_options(self._router)
        self._router.setsockopt(zmq.ROUTER_MANDATORY, 0)
        self._router.setsockopt(zmq.MAXMSGSIZE, self._limits.max_tensor_bytes)
        self._auth = None
        if cluster_key:
            self._auth = _start_authenticator(self._context, cluster_key)
            keys = curve_keys(cluster_key)
            self._router.curve_server = True
            self._router.curve_secretkey = keys["server_secret"]
            self._router.curve_publickey = keys["server_public"]
        host, _, port = address.rpartition(":")
        try:
            if port == "0":
                bound = self._router.bind_to_random_port(f"tcp://{host}")
                self.address = f"{host}:{bound}"
            else:
                _bind_with_retry(self._router, _tcp(address))
                self.address = address
        except zmq.ZMQError as e:
            self._router.close(0)
            raise errors.UnavailableError(None, None, f"Could not bind {address}: {e.strerror}") from None
        self._reply_endpoint = f"inproc://dtf-replies-{id(self)}-{self.incarnation}"
        self._replies = self._context.socket(zmq.PULL)
        self._replies.bind(self._reply_endpoint)
        self._pushers = threading.local()
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="dtf-handler")
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"dtf-server-{self.address}", daemon=True)
        self._thread.start()

    def _push(self, frames: list[Any]) -> None:
        sock = getattr(self._pushers, "sock", None)
        if sock is None:
            sock = self._pushers.sock = self._context.socket(zmq.PUSH)
            sock.setsockopt(zmq.LINGER, 1000)
            sock.connect(self._reply_endpoint)
        sock.send_multipart(frames, copy=False)

    def _loop(self) -> None:
        poller = zmq.Poller()
        poller.register(self._router, zmq.POLLIN)
        poller.register(self._replies, zmq.POLLIN)
        while not self._closing.is_set():
            try:
                ready = dict(poller.poll(100))
            except zmq.ZMQError:
                break
            if self._replies in ready:
                for frames in _drain(self._replies):
                    self._send(frames)
            if self._router in ready:
                for frames in _drain(self._router):
                    self._receive(frames)
        self._router.close(0)
        self._replies.close(0)

    def _send(self, frames: list[Any]) -> None:
        identity = frames[0]
        try:
            for message in stream_messages(frames[1:], next(self._stream_ids)):
                self._router.send_multipart([identity, *message], copy=False)
        except zmq.ZMQError:
            pass  # the peer is gone; nothing to deliver to

    def _receive(self, frames: list[Any]) -> None:
        if len(frames) < 2:
            return  # not even an identity and a header: drop
        identity = frames[0]
        try:
            message = self._assembler.feed(identity.bytes, [f.buffer for f in frames[1:]])
            if message is None:
                return  # part of a stream still arriving
            header, tensors = message
            req_id = header.get("id")
            method = header.get("method")
            if not isinstance(method, str) or not isinstance(req_id, int):
                raise wire.WireError(None, None, "A request needs an integer 'id' and a string 'method'")
        except errors.OpError as e:
            req_id = e.request_id if isinstance(e, StreamError) and isinstance(e.request_id, int) else -1
            self._send([identity, *wire.encode_message({"id": req_id, **self._stamp(), "error": wire.encode_error(e)})])
            return
        if method == "Ping":
            self._send([identity, *wire.encode_message({"id": req_id, **self._stamp()})])
            return
        if self._inline is not None and self._inline(method, header):
            self._handle(identity, req_id, method, header, tensors, direct=True)
        else:
            self._pool.submit(self._handle, identity, req_id, method, header, tensors)

    def _stamp(self) -> dict[str, Any]:
        return {"incarnation": self.incarnation}

    def _handle(
        self, identity: Any, req_id: int, method: str, header: dict[str, Any], tensors: list[Any], direct: bool = False
    ) -> None:
        try:
            reply, reply_tensors = self._handler(method, header, tensors)
            frames = wire.encode_message({**reply, "id": req_id, **self._stamp()}, reply_tensors, check=False)
        except errors.OpError as e:
            frames = wire.encode_message({"id": req_id, **self._stamp(), "error": wire.encode_error(e)})
        except Exception as e:  # noqa: BLE001 - a handler bug must reach the caller, not kill the server
            err = errors.InternalError(None, None, f"{method} failed: {type(e).__name__}: {e}")
            frames = wire.encode_message({"id": req_id, **self._stamp(), "error": wire.encode_error(err)})
        if direct:
            self._send([identity, *frames])
        elif not self._closing.is_set():
            self._push([identity, *frames])

    def close(self) -> None:
        """Stops serving and releases the port at once."""
        if self._closing.is_set():
            return
        self._closing.set()
        self._thread.join(5)
        self._pool.shutdown(wait=False, cancel_futures=True)
        if self._auth is not None:
            self._auth.stop()


def _drain(sock: zmq.Socket):
    """Every message waiting on ``sock`` now, without blocking."""
    # Asking for the socket's events is cheaper than a receive that fails with an exception.
    while sock.get(zmq.EVENTS) & zmq.POLLIN:
        try:
            yield sock.recv_multipart(zmq.NOBLOCK, copy=False)
        except zmq.Again:
            return


def _try_send(sock: zmq.Socket, frames: list[Any]) -> bool:
    """Sends without blocking; False when the peer cannot take it now (not connected, or gone)."""
    try:
        sock.send_multipart(frames, flags=zmq.NOBLOCK, copy=False)
        return True
    except zmq.Again:
        return False


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


# ---- client end -------------------------------------------------------------------------------
class _SocketSet(dict):
    """A thread's own DEALER sockets, closed when the thread ends (its thread-local storage is freed)."""

    def __del__(self) -> None:
        for sock in self.values():
            sock.close(0)


class _Pending:
    __slots__ = ("future", "address", "sent_at", "incarnation")

    def __init__(self, future: Future, address: str, incarnation: int | None) -> None:
        self.future = future
        self.address = address
        self.sent_at = time.monotonic()
        self.incarnation = incarnation


class Client:
    """Sends requests to tasks and waits for replies (thread-safe; one I/O thread).

    Args:
        cluster_key: Use CurveZMQ with keys derived from this shared secret.
        heartbeat_interval: Seconds between pings to a peer that owes replies.
        dead_after: Seconds of silence after which a peer's outstanding requests fail with UnavailableError.
        limits: Wire limits applied to replies.
    """

    def __init__(
        self,
        cluster_key: str | None = None,
        heartbeat_interval: float = 0.5,
        dead_after: float = 3.0,
        limits: wire.WireLimits | None = None,
    ) -> None:
        self._context = zmq.Context.instance()
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
        self._sockets: dict[str, zmq.Socket] = {}
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
            UnavailableError: the peer stopped answering pings.
            AbortedError: the peer restarted while the request was outstanding.
            OpError: the peer answered with an error.
        """
        if self._closing.is_set():
            raise errors.CancelledError(None, None, "The client is closed")
        # Synchronous calls use a socket owned by the calling thread: no hand-off to the I/O thread and back.
        sock = self._thread_socket(address)
        req_id = next(self._ids)
        sent_to = self._incarnations.get(address)
        request = wire.encode_message({**(header or {}), "id": req_id, "method": method}, tensors, check=False)
        start = time.monotonic()
        deadline = None if timeout is None else start + timeout
        for message in stream_messages(request, next(self._stream_ids)):
            self._send_patiently(sock, message, address, method, start, deadline)
        last_heard = start
        while True:
            now = time.monotonic()
            wait = self.heartbeat_interval if deadline is None else min(self.heartbeat_interval, deadline - now)
            if wait <= 0:
                raise errors.DeadlineExceededError(None, None, f"{method} to {address} timed out after {timeout:.3g} s")
            if sock.poll(int(wait * 1000) + 1, zmq.POLLIN):
                reply, reply_tensors = self._read_reply(sock, address, sent_to)
                last_heard = time.monotonic()
                if reply is None or reply.get("id") != req_id:
                    continue  # a pong, or the late reply of an earlier call that gave up
                if "error" in reply:
                    raise wire.decode_error(reply["error"])
                return reply, reply_tensors
            silent = time.monotonic() - last_heard
            if silent > self.dead_after:
                self._drop_thread_socket(address)
                raise errors.UnavailableError(
                    None, None, f"The task at {address} did not answer for {silent:.1f} s; it is probably down"
                )
            _try_send(sock, wire.encode_message({"id": 0, "method": "Ping"}))

    def _send_patiently(
        self, sock: zmq.Socket, frames: list[Any], address: str, method: str, start: float, deadline: float | None
    ) -> None:
        # A DEALER with no connected peer blocks on send: never block, wait in slices and give up like a call.
        while not _try_send(sock, frames):
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                raise errors.DeadlineExceededError(None, None, f"{method} to {address}: could not even send in time")
            if now - start > self.dead_after:
                self._drop_thread_socket(address)
                raise errors.UnavailableError(
                    None, None, f"Could not reach the task at {address} for {now - start:.1f} s; it is probably down"
                )
            sock.poll(50, zmq.POLLOUT)

    def _read_reply(
        self, sock: zmq.Socket, address: str, sent_to: int | None
    ) -> tuple[dict[str, Any] | None, list[Any]]:
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
            if sent_to is not None and sent_to != incarnation and header.get("id") == 0:
                # A pong from a new incarnation: the task restarted and lost the request we are waiting on.
                self._drop_thread_socket(address)
                raise errors.AbortedError(None, None, f"The task at {address} restarted; the request was lost with it")
        return header, tensors

    def _thread_socket(self, address: str) -> zmq.Socket:
        sockets = getattr(self._pushers, "dealers", None)
        if sockets is None:
            sockets = self._pushers.dealers = _SocketSet()
            self._pushers.assembler = StreamAssembler(self._limits)
        sock = sockets.get(address)
        if sock is None:
            sock = sockets[address] = self._new_dealer(address)
        return sock

    def _drop_thread_socket(self, address: str) -> None:
        sockets = getattr(self._pushers, "dealers", None)
        sock = sockets.pop(address, None) if sockets is not None else None
        if sock is not None:
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
            self._pending[req_id] = _Pending(future, address, self._incarnations.get(address))
        self._command([b"send", address.encode(), *frames])
        return future

    def _forget(self, future: Future) -> None:
        with self._lock:
            for req_id, pending in list(self._pending.items()):
                if pending.future is future:
                    del self._pending[req_id]

    def _command(self, frames: list[Any]) -> None:
        sock = getattr(self._pushers, "sock", None)
        if sock is None:
            sock = self._pushers.sock = self._context.socket(zmq.PUSH)
            sock.setsockopt(zmq.LINGER, 1000)
            sock.connect(self._cmd_endpoint)
        sock.send_multipart(frames, copy=False)

    def _socket(self, address: str, poller: zmq.Poller) -> zmq.Socket:
        sock = self._sockets.get(address)
        if sock is None:
            sock = self._sockets[address] = self._new_dealer(address)
            poller.register(sock, zmq.POLLIN)
        return sock

    def _new_dealer(self, address: str) -> zmq.Socket:
        sock = self._context.socket(zmq.DEALER)
        _apply_common_options(sock)
        sock.setsockopt(zmq.RECONNECT_IVL, 50)
        sock.setsockopt(zmq.RECONNECT_IVL_MAX, 500)
        sock.setsockopt(zmq.MAXMSGSIZE, self._limits.max_tensor_bytes)
        if self._keys is not None:
            sock.curve_serverkey = self._keys["server_public"]
            sock.curve_secretkey = self._keys["client_secret"]
            sock.curve_publickey = self._keys["client_public"]
        sock.connect(_tcp(address))
        return sock

    def _loop(self) -> None:
        poller = zmq.Poller()
        poller.register(self._commands, zmq.POLLIN)
        by_socket: dict[zmq.Socket, str] = {}
        backlog: dict[str, list[list[Any]]] = {}
        next_check = time.monotonic() + self.heartbeat_interval
        while not self._closing.is_set():
            timeout_ms = max(0, int((next_check - time.monotonic()) * 1000))
            try:
                ready = dict(poller.poll(min(timeout_ms, 100)))
            except zmq.ZMQError:
                break
            if self._commands in ready:
                for frames in _drain(self._commands):
                    address = bytes(frames[1].buffer).decode()
                    sock = self._socket(address, poller)
                    by_socket[sock] = address
                    self._last_heard.setdefault(address, time.monotonic())
                    backlog.setdefault(address, []).extend(stream_messages(frames[2:], next(self._stream_ids)))
            for address, queued in list(backlog.items()):
                # Messages to a peer not connected yet wait here; the heartbeat fails them if it never comes.
                sock = self._sockets[address]
                while queued and _try_send(sock, queued[0]):
                    queued.pop(0)
                if not queued:
                    del backlog[address]
            for sock, address in list(by_socket.items()):
                if sock in ready:
                    for frames in _drain(sock):
                        self._deliver(address, frames)
            now = time.monotonic()
            if now >= next_check:
                self._heartbeat(now, poller)
                next_check = now + self.heartbeat_interval
        for sock in self._sockets.values():
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
            known = self._incarnations.get(address)
            if known is not None and known != incarnation:
                self._abort_old_incarnation(address, incarnation)
            self._incarnations[address] = incarnation
        with self._lock:
            pending = self._pending.pop(header.get("id"), None)
        if pending is None:
            return
        if "error" in header:
            pending.future.set_exception(wire.decode_error(header["error"]))
        else:
            pending.future.set_result((header, tensors))

    def _abort_old_incarnation(self, address: str, incarnation: int) -> None:
        with self._lock:
            stale = [
                (rid, p)
                for rid, p in self._pending.items()
                if p.address == address and p.incarnation is not None and p.incarnation != incarnation
            ]
            for rid, _ in stale:
                del self._pending[rid]
        for _, p in stale:
            p.future.set_exception(
                errors.AbortedError(None, None, f"The task at {address} restarted; the request was lost with it")
            )

    def _heartbeat(self, now: float, poller: zmq.Poller) -> None:
        with self._lock:
            owing = {}
            for p in self._pending.values():
                owing[p.address] = min(owing.get(p.address, p.sent_at), p.sent_at)
        for address, oldest in owing.items():
            silent = now - max(self._last_heard.get(address, oldest), oldest)
            if silent > self.dead_after:
                self._fail_address(
                    address,
                    errors.UnavailableError(
                        None, None, f"The task at {address} did not answer for {silent:.1f} s; it is probably down"
                    ),
                )
            elif now - self._last_ping.get(address, 0.0) >= self.heartbeat_interval and now - oldest > 0.2:
                self._last_ping[address] = now
                ping = wire.encode_message({"id": 0, "method": "Ping"})
                _try_send(self._socket(address, poller), ping)

    def _fail_address(self, address: str, error: errors.OpError) -> None:
        with self._lock:
            failed = [(rid, p) for rid, p in self._pending.items() if p.address == address]
            for rid, _ in failed:
                del self._pending[rid]
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


_shared_clients: dict[str | None, Client] = {}
_shared_lock = threading.Lock()


def shared_client(cluster_key: str | None = None) -> Client:
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
