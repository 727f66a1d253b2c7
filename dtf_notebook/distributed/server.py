"""``tf.train.Server``: one task of a cluster, offering the master and worker services over ZeroMQ.

A server binds the address its task has in the cluster spec and serves both
services from background threads, so a script can run a server and a client
session in one process (TF1's between-graph replication), or just ``join()``.
Unlike TF1, ``stop()`` releases the port at once, so re-running a notebook
cell or restarting a task on the same port works.

Servers in one process reach each other directly (no sockets, no copies
beyond one clone per tensor); other tasks are reached through the shared
:class:`~dtf_notebook.distributed.transport.Client`.

Example:
    >>> server = Server.create_local_server()
    >>> server.target.startswith("zmq://127.0.0.1:")
    True
    >>> server.stop()
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from dtf_notebook import errors
from dtf_notebook.distributed.cluster_key import ClusterKey
from dtf_notebook.distributed.cluster_spec import ClusterSpec
from dtf_notebook.distributed.keyring import server_key
from dtf_notebook.distributed.master_service import MasterService
from dtf_notebook.distributed.peer_limits import PeerLedger, PeerLimits
from dtf_notebook.distributed.server_def import ServerDef, merge_config, server_def_of
from dtf_notebook.distributed.transport import Client, ServiceSocket, shared_client
from dtf_notebook.distributed.worker_service import WorkerService
from dtf_notebook.distributed.zmq_util import wait_for_port_release
from dtf_notebook.lazy_modules import torch
from dtf_notebook.runtime.config import ConfigProto, as_config
from dtf_notebook.runtime.dataflow import DEAD
from dtf_notebook.runtime.file_access import FileAccess

_log = logging.getLogger(__name__)

_MASTER_METHODS = frozenset(
    {
        "CreateSession",
        "ExtendSession",
        "RunStep",
        "CancelStep",
        "CloseSession",
        "ListDevices",
        "Reset",
        "GetPlacement",
        "GetClusterSpec",
    }
)
# The requests a training step's start serves on the event loop (see _start_on_loop).
_LOOP_METHODS = frozenset({"RunGraph", "RunStep"})
# Bookkeeping a master sends to a task of its own process: handled at once, in the order sent (see _call_task).
_IN_ORDER = frozenset({"DeregisterGraph", "ForgetSession"})

# address -> Server, for servers of this process (direct calls between them).
_local_servers: dict[str, Server] = {}
_local_lock = threading.Lock()


def local_server(address: str) -> Server | None:
    """The running server of this process bound at ``address``, if any.

    Example:
        >>> server = Server.create_local_server()
        >>> local_server(server.target[len("zmq://"):]) is server, local_server("127.0.0.1:1")
        (True, None)
        >>> server.stop()
    """
    return _local_servers.get(address)


def is_loopback(address: str) -> bool:
    """Whether ``host:port`` binds only this machine's loopback interface (other machines cannot reach it).

    Example:
        >>> is_loopback("127.0.0.1:2222"), is_loopback("[::1]:2222"), is_loopback("localhost:1")
        (True, True, True)
        >>> is_loopback("0.0.0.0:2222"), is_loopback("10.0.0.2:2222"), is_loopback("node-1:2222")
        (False, False, False)
    """
    host = address.rpartition("://")[2].rpartition(":")[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: it may well resolve to an address other machines reach


class Server:
    """A task of a cluster: ``Server(cluster, job_name, task_index)`` or ``Server(server_def)``.

    Args:
        server_or_cluster_def: A ClusterSpec, a dict of job → addresses, a ``tf.train.ClusterDef`` (or its dict
            form), or a ``tf.train.ServerDef`` protobuf (or the runtime's
            :class:`~dtf_notebook.distributed.server_def.ServerDef`, or its dict form).
        job_name: This task's job. With a ServerDef, overrides its ``job_name``; otherwise inferred when the
            cluster has one job.
        task_index: This task's index. With a ServerDef, overrides its ``task_index``; otherwise inferred when
            the job has one task.
        protocol: ``"zmq"`` (``"grpc"`` is accepted and means the same, so TF1 scripts run unchanged); with a
            ServerDef, overrides its ``protocol``.
        config: A ``tf.ConfigProto`` (protobuf or the runtime's): devices, GPU options and virtual GPUs of this
            task, cluster key. With a ServerDef, merged into its ``default_session_config`` (as TF merges
            protocol buffers).
        start: Start serving now.
        file_roots: Directories (or fsspec URLs) outside which no op of this task reads, writes, renames or
            removes a file (``PermissionDeniedError`` names the path and the roots); None: anywhere the process
            may, as in TF.
        peer_limits: Caps on what one peer may hold of this task at once (sessions, requests and bytes in
            flight, streams); over them it gets ``ResourceExhaustedError``.

    The server requires its peers to hold the cluster key of ``config`` (``cluster_key``) or of the environment
    (``DTF_CLUSTER_KEY``, ``DTF_CLUSTER_KEY_FILE``); without one it serves any peer that reaches its port, and
    says so in a warning when that port is reachable from other machines.

    Raises:
        ValueError: the job or task is missing, unknown, or cannot be inferred; the protocol is unknown; the
            cluster key is malformed.
        PermissionDeniedError: a file root does not exist.

    Example:
        >>> cluster = ClusterSpec({"local": ["127.0.0.1:0"]})
        >>> Server(cluster, job_name="local", task_index=0, start=False).job_name
        'local'
        >>> server_def = ServerDef(cluster={"worker": ["127.0.0.1:0", "127.0.0.1:1"]}, job_name="worker")
        >>> Server(server_def, start=False).address   # task_index 0: unset in the ServerDef
        '127.0.0.1:0'
    """

    def __init__(
        self,
        server_or_cluster_def: Any,
        job_name: str | None = None,
        task_index: int | None = None,
        protocol: str | None = None,
        config: Any = None,
        start: bool = True,
        *,
        file_roots: Sequence[str] | None = None,
        peer_limits: PeerLimits | None = None,
    ) -> None:
        # tf.train.ServerDef / tf.ConfigProto protobufs become the runtime's forms here.
        config = as_config(config) if config is not None else None
        given = server_def_of(server_or_cluster_def)
        if given is not None:
            # TF1: explicit arguments override the ServerDef's fields; nothing is inferred.
            job_name = given.job_name if job_name is None else job_name
            task_index = given.task_index if task_index is None else task_index
            protocol = (given.protocol or None) if protocol is None else protocol
            config = merge_config(given.default_session_config, config)
            server_or_cluster_def = given.cluster
        if protocol not in (None, "", "zmq", "grpc", "grpc+verbs", "grpc+gdr"):
            raise ValueError(f"Unknown protocol {protocol!r}: use 'zmq' (or 'grpc', which means the same here)")
        self.protocol = protocol or "zmq"
        cluster = ClusterSpec(server_or_cluster_def)
        if job_name is None:
            if len(cluster.jobs) != 1:
                raise ValueError(
                    "Must specify an explicit `job_name`: the cluster has several jobs " + str(cluster.jobs)
                )
            job_name = cluster.jobs[0]
        if task_index is None:
            indices = cluster.task_indices(job_name)
            if len(indices) != 1:
                raise ValueError(f"Must specify an explicit `task_index`: job {job_name!r} has {len(indices)} tasks")
            task_index = indices[0]
        self._address = cluster.task_address(job_name, task_index)
        self.cluster_spec = cluster
        self.job_name = job_name
        self.task_index = int(task_index)
        self.config = config or ConfigProto()
        self.cluster_key: ClusterKey | None = server_key(self.config)
        self.files = FileAccess(file_roots)
        self.ledger = PeerLedger(peer_limits)
        self._socket: ServiceSocket | None = None
        self._stopped = threading.Event()
        # step id -> receiving task -> (keys, dead keys, tensors): pushes held for that task's RunGraph request
        self._held_sends: dict[int, dict[str, tuple[list[str], list[str], list[Any]]]] = {}
        self._pool = ThreadPoolExecutor(max_workers=64, thread_name_prefix=f"dtf-{job_name}{task_index}")
        self.worker = WorkerService(
            job_name,
            self.task_index,
            self.config,
            peers=self._send_to_peer,
            master_alive=self._check_master,
            files=self.files,
            client_silence=self._client_silence,
        )
        self.master = MasterService(
            cluster,
            job_name,
            self.task_index,
            self._call_task,
            self._call_task_sync,
            session_gc_secs=self.config.session_gc_secs,
            ledger=self.ledger,
            client_silence=self._client_silence,
        )
        self._client: Client = shared_client(self.cluster_key)
        if start:
            self.start()

    # ---- properties -------------------------------------------------------------------------
    @property
    def target(self) -> str:
        """The session target for this server: ``zmq://host:port``."""
        return f"zmq://{self.address}"

    @property
    def address(self) -> str:
        """``host:port`` this task serves on (the real port once started with port 0)."""
        return self._socket.address if self._socket is not None else self._address

    @property
    def server_def(self) -> Any:
        """This server's ``tf.train.ServerDef`` protobuf (``tf.train.Server.server_def``): cluster (with the real
        port once started on port 0), job, task, protocol and config (with its cluster key, when one is set).

        Example:
            >>> with Server.create_local_server() as server:
            ...     server_def = server.server_def
            ...     again = Server(server_def, start=False)   # the same task, described again
            >>> server_def.job_name, again.address == server.address, again.protocol
            ('localhost', True, 'zmq')
        """
        return ServerDef(
            cluster=self.cluster_spec.as_cluster_def_dict(),
            job_name=self.job_name,
            task_index=self.task_index,
            protocol=self.protocol,
            default_session_config=merge_config(self.config, None),
        ).to_proto()

    # ---- lifetime ---------------------------------------------------------------------------
    def start(self) -> None:
        """Binds the task's address and starts serving (a no-op when already serving).

        Raises:
            UnavailableError: the address cannot be bound (port in use, host not local).
        """
        if self._socket is not None:
            return
        self._socket = ServiceSocket(
            self._address,
            self._handle,
            cluster_key=self.cluster_key,
            inline=self.worker.can_inline,
            oneway_failed=self.worker.oneway_failed,
            ledger=self.ledger,
            start=self._start_on_loop,
            start_methods=_LOOP_METHODS,
            tick=self.worker.tick,
            undeliverable=self._undeliverable,
        )
        if self.cluster_key is None and not is_loopback(self._socket.address):
            _log.warning(
                "Task /job:%s/task:%d serves %s without a cluster key: anyone who can reach that port can run any "
                "op on it and read or write its files and variables (give it a key: dtf-server --key-file, "
                "DTF_CLUSTER_KEY_FILE or ConfigProto(cluster_key=...))",
                self.job_name,
                self.task_index,
                self._socket.address,
            )
        self.worker.incarnation = self._socket.incarnation
        self.master.address = self._socket.address
        self.master.incarnation = self._socket.incarnation
        self.worker.address = self._socket.address
        if self._address.endswith(":0"):
            # Port 0 picks a free port; the cluster spec now names the real address.
            self._rewrite_own_address(self._socket.address)
        with _local_lock:
            _local_servers[self._socket.address] = self
        self._stopped.clear()
        if self.master.session_gc_secs > 0:
            threading.Thread(target=self._collect_idle_sessions, name="dtf-session-gc", daemon=True).start()

    def _collect_idle_sessions(self) -> None:
        # Checks a few times per period, so a session goes at most a quarter period late.
        every = min(10.0, self.master.session_gc_secs / 4)
        while not self._stopped.wait(every):
            try:
                self.master.collect_idle()
            except Exception:
                # One failed round (a session that would not close cleanly) must not end collection for good.
                _log.exception("Collecting idle master sessions failed; trying again in %.1f s", every)

    def _rewrite_own_address(self, address: str) -> None:
        spec = self.cluster_spec.as_dict()
        spec[self.job_name][self.task_index] = address  # a list (dense job) or a dict (sparse job)
        self.cluster_spec = ClusterSpec(spec)
        self.master.cluster = self.cluster_spec
        self._address = address

    def join(self) -> None:
        """Blocks until the server is stopped."""
        self._stopped.wait()

    def stop(self) -> None:
        """Stops serving and releases the port at once; running steps on this task fail with Cancelled."""
        if self._socket is None:
            return
        with _local_lock:
            if _local_servers.get(self._socket.address) is self:
                del _local_servers[self._socket.address]
        self.worker.rendezvous.abort_all(errors.CancelledError(None, None, f"Task {self.target} was stopped"))
        address = self._socket.address
        self._socket.close()
        self._socket = None
        self._stopped.set()
        # Its sessions die with it: their partitions registered on the other tasks go too.
        self.master.close_all()
        # ZeroMQ closes the listener on its I/O thread after close() returns: the port is free when stop() returns.
        wait_for_port_release(address)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @staticmethod
    def create_local_server(config: Any = None, start: bool = True) -> Server:
        """A single-task cluster on a free local port (``tf.train.Server.create_local_server``).

        Example:
            >>> with Server.create_local_server() as server:
            ...     server.job_name, server.task_index
            ('localhost', 0)
        """
        return Server({"localhost": ["127.0.0.1:0"]}, job_name="localhost", task_index=0, config=config, start=start)

    # ---- request routing --------------------------------------------------------------------
    def _handle(self, method: str, header: dict[str, Any], tensors: list[Any]) -> tuple[dict[str, Any], list[Any]]:
        if method in _MASTER_METHODS:
            return self.master.handle(method, header, tensors)
        return self.worker.handle(method, header, tensors)

    def _start_on_loop(self, method: str, header: dict[str, Any], tensors: list[Any], reply: Any) -> bool:
        """Takes the requests of a training step to serve on the event loop (see ServiceSocket's ``start``)."""
        if method == "RunGraph":
            return self.worker.start_run_graph(header, tensors, reply, self._socket)
        if method == "RunStep":
            return self.master.start_run_step(
                header, tensors, reply, self._call_from_loop, self._socket, self._hold_sends
            )
        return False

    def _call_from_loop(
        self, task: str, method: str, header: dict[str, Any], tensors: list[Any], callback: Callable[..., None]
    ) -> None:
        """Calls a task's worker from the event loop; ``callback(header, tensors, error)`` runs on the loop.

        This task's own partition runs on the loop too when it can; another task is reached through the loop's
        own sockets, so no thread of this process is woken for the step."""
        loop = self._socket
        try:
            address, peer = self._route(task)
        except ValueError as e:
            callback(None, [], errors.InvalidArgumentError(None, None, str(e)))
            return
        if loop is None:
            callback(None, [], errors.CancelledError(None, None, f"Task {self.target} was stopped"))
            return
        if peer is None:
            loop.request(address, method, header, tensors, callback)
            return
        if (
            peer is self
            and method == "RunGraph"
            and self.worker.start_run_graph(header, tensors, _Answer(callback), loop)
        ):
            return
        future = self._pool.submit(peer._handle_local, method, header, tensors)

        def done(f: Future) -> None:
            try:
                reply, out = f.result()
            except Exception as e:  # noqa: BLE001 - any failure is the call's answer
                outcome = (None, [], e if isinstance(e, errors.OpError) else errors.InternalError(None, None, repr(e)))
            else:
                outcome = (reply, out, None)
            loop.call_soon(lambda: callback(*outcome))

        future.add_done_callback(done)

    def _undeliverable(self, method: str, header: dict[str, Any], error: errors.OpError) -> None:
        # A partition's tensors the loop could not send: the step fails here rather than hang on the receiver.
        step_id = header.get("step_id")
        if method == "SendTensor" and type(step_id) is int:
            self.worker.rendezvous.abort(step_id, type(error)(None, None, f"Could not send tensors: {error.message}"))

    def _route(self, task: str) -> tuple[str, Server | None]:
        """The task's address, and its Server when that lives in this process (then called directly)."""
        address = self.master.task_address(task)
        return address, (self if address == self.address else local_server(address))

    def _call_task(self, task: str, method: str, header: dict[str, Any], tensors: list[Any]) -> Future:
        try:
            address, peer = self._route(task)
        except ValueError as e:
            future: Future = Future()
            future.set_exception(errors.InvalidArgumentError(None, None, str(e)))
            return future
        if peer is not None:
            if method in _IN_ORDER:
                # Done before the caller's next request (a Reset's CleanupContainers, a CloseSession's reply), as they
                # are for a task across the network, whose requests arrive in order; each is instant.
                future = Future()
                try:
                    future.set_result(peer._handle_local(method, header, tensors))
                except Exception as e:  # noqa: BLE001 - the call's answer
                    future.set_exception(e)
                return future
            return self._pool.submit(peer._handle_local, method, header, tensors)
        return self._client.call_async(address, method, header, tensors)

    def _call_task_sync(
        self, task: str, method: str, header: dict[str, Any], tensors: list[Any], timeout: float | None
    ) -> tuple[dict[str, Any], list[Any]]:
        address, peer = self._route(task)
        if peer is not None:
            return peer._handle_local(method, header, tensors)
        # The step's own deadline is enforced by the worker; allow it a moment to report back.
        return self._client.call(address, method, header, tensors, None if timeout is None else timeout + 5.0)

    def _handle_local(self, method: str, header: dict[str, Any], tensors: list[Any]) -> tuple[dict[str, Any], list]:
        reply, out = self._handle(method, header, tensors)
        return {**reply, "incarnation": self.worker.incarnation}, list(out)

    def _send_to_peer(self, task: str, step_id: int, keys: list[str], tensors: list[Any]) -> None:
        address, peer = self._route(task)
        if peer is not None:
            # Same process: hand over private copies (a sender's buffer may be a variable updated in place).
            for key, value in zip(keys, tensors):
                if value is not DEAD:
                    value = value.clone() if isinstance(value, torch.Tensor) else value.copy()
                peer.worker.deliver(step_id, key, value)
            return
        # Straight from the executing thread's own socket, with no reply: the send is done once queued (as a
        # TF Send is once its tensor is in the rendezvous), and the receiver aborts the step itself when the
        # tensors cannot be delivered. A receiver that cannot be reached fails the send after ``dead_after``.
        header: dict[str, Any] = {"step_id": step_id, "keys": keys}
        if any(value is DEAD for value in tensors):
            # A dead value (a branch not taken) travels as its key alone, as TF's is_dead flag.
            header["keys"] = [k for k, value in zip(keys, tensors) if value is not DEAD]
            header["dead_keys"] = [k for k, value in zip(keys, tensors) if value is DEAD]
            tensors = [value for value in tensors if value is not DEAD]
        loop = self._socket
        if loop is not None and loop.on_loop:
            held = self._held_sends.get(step_id)
            if held is not None:  # the master starting this step: they go with the receiver's RunGraph request
                keys_held, dead_held, tensors_held = held.setdefault(task, ([], [], []))
                keys_held += header["keys"]
                dead_held += header.get("dead_keys", [])
                tensors_held += tensors
                return
            loop.send_oneway(address, "SendTensor", header, tensors)  # a partition served on the event loop
            return
        self._client.send_oneway(address, "SendTensor", header, tensors)

    @contextlib.contextmanager
    def _hold_sends(self, step_id: int) -> Iterator[dict[str, tuple[list[str], list[str], list[Any]]]]:
        """While the master's loop starts step ``step_id`` with this task's own partition, that partition's pushes
        to other tasks are held (by receiving task) instead of sent: the master puts them in those tasks'
        ``RunGraph`` requests, one message instead of two."""
        held: dict[str, tuple[list[str], list[str], list[Any]]] = {}
        self._held_sends[step_id] = held
        try:
            yield held
        finally:
            del self._held_sends[step_id]

    def _client_silence(self, peer: bytes) -> float | None:
        """Seconds since this task last heard from connection ``peer`` (see ``ServiceSocket.silent_for``)."""
        socket = self._socket
        return None if socket is None else socket.silent_for(peer)

    def _check_master(self, address: str, incarnation: Any = None) -> None:
        if address == self.address or local_server(address) is not None:
            return
        try:
            reply, _ = self._client.call(address, "Ping", {}, timeout=self._client.dead_after)
        except (errors.UnavailableError, errors.DeadlineExceededError) as e:
            raise errors.UnavailableError(
                None, None, f"The master of this step ({address}) is gone; giving up the step ({e.message})"
            ) from None
        seen = reply.get("incarnation")
        if None not in (seen, incarnation) and seen != incarnation:
            # Its address answers, but a restarted master knows nothing of this step: nobody will take its result.
            raise errors.UnavailableError(
                None, None, f"The master of this step ({address}) restarted since; giving up the step"
            )

    def __repr__(self) -> str:
        state = "serving" if self._socket is not None else "stopped"
        return f"<Server /job:{self.job_name}/task:{self.task_index} at {self.address} {state}>"


class _Answer:
    """A :class:`~dtf_notebook.distributed.service_socket.Reply` for a call this task's event loop makes to itself:
    the answer goes to ``callback(header, tensors, error)``."""

    __slots__ = ("_callback",)

    def __init__(self, callback: Callable[..., None]) -> None:
        self._callback = callback

    def ok(self, header: dict[str, Any], tensors: Any = ()) -> None:
        self._callback(header, list(tensors), None)

    def fail(self, error: BaseException) -> None:
        if not isinstance(error, errors.OpError):
            error = errors.InternalError(None, None, f"RunGraph failed: {type(error).__name__}: {error}")
        self._callback(None, [], error)
