"""The client side of ``Session("zmq://host:port")``: ships the graph to a task's master and runs steps there.

The backend sends the graph when the session is created and only the new
nodes afterwards (the whole graph again if existing nodes were rewired).
Feeds travel as raw tensor frames; fetched values come back the same way.
Once the master has told the client how (see ``direct_route``), a step's
partitions run on their tasks straight from the client.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.train.Server.create_local_server() as server:
    ...     with tf.Graph().as_default():
    ...         c = tf.constant([1.0, 2.0]) * 2.0
    ...         with tf.Session(server.target) as sess:
    ...             print(sess.run(c))
    [2. 4.]
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import secrets
import threading
import time
from concurrent.futures import Future
from typing import Any

from dtf_notebook import errors
from dtf_notebook.distributed import wire
from dtf_notebook.distributed.direct_route import REFRESH_SECS, DirectRoute, SplitRoute, learn_route
from dtf_notebook.distributed.keyring import client_key
from dtf_notebook.distributed.server import local_server
from dtf_notebook.distributed.session_closer import close_soon
from dtf_notebook.distributed.transport import shared_client
from dtf_notebook.framework.graph import Graph
from dtf_notebook.runtime.config import ConfigProto, NodeExecStats, RunMetadata, RunOptions
from dtf_notebook.runtime.devices import LocalDevice


class RemoteBackend:
    """Runs a session's steps on a cluster master reached at ``target``.

    Example:
        >>> import dtf_notebook as tf
        >>> backend = RemoteBackend("zmq://127.0.0.1:2222/", tf.Graph(), ConfigProto())  # connects on the first step
        >>> backend.address
        '127.0.0.1:2222'
        >>> RemoteBackend("zmq://", tf.Graph(), ConfigProto())
        Traceback (most recent call last):
            ...
        dtf_notebook.errors.InvalidArgumentError: Session target 'zmq://' needs host:port after zmq://
    """

    def __init__(self, target: str, graph: Graph, config: ConfigProto) -> None:
        scheme, _, address = target.partition("://")
        if not address or ":" not in address:
            raise errors.InvalidArgumentError(
                None, None, f"Session target {target!r} needs host:port after {scheme}://"
            )
        self.address = address.rstrip("/")
        self.config = config
        # A server of this very process (between-graph replication: a task running its own client) is called
        # directly, without sockets.
        server = local_server(self.address)
        self._client = _InProcess(server) if server is not None else shared_client(client_key(self.address, config))
        # How often the client pings the tasks its steps wait on (tasks give up a step whose client went silent);
        # None in process: the server's own threads wait, nothing to watch.
        self._pings_every: float | None = getattr(self._client, "heartbeat_interval", None)
        self._graph = graph
        self._sent = 0
        self._sent_version = -1
        self._sent_mutations = 0
        self._handle: str | None = None
        self._sync_lock = threading.Lock()
        # Steps run on their tasks directly (see direct_route): the route of each signature (None:
        # the master has none for it), whether each task's address answers as the session knows it, and per thread
        # when it last heard from the master and how many of its connections to the master had broken by then.
        self._routes: dict[tuple, DirectRoute | SplitRoute | None] = {}
        self._probes: dict[str, Future] = {}
        self._heard = threading.local()
        # The key stays here: the master has its own, and a config travels in a request.
        secret = {"cluster_key", "cluster_key_salt"}
        self._wire_config = {k: v for k, v in dataclasses.asdict(config).items() if k not in secret}

    def _timeout(self, options: RunOptions | None = None) -> float | None:
        ms = (options.timeout_in_ms if options is not None else 0) or self.config.operation_timeout_in_ms
        return ms / 1000.0 if ms > 0 else None

    def _sync_graph(self) -> None:
        graph = self._graph
        if self._handle is not None and graph.version == self._sent_version:
            return
        # Steps start from several threads at once (queue runners and the training loop): one of them creates the
        # master session, the others use it, never one master session each (their queues would differ).
        with self._sync_lock:
            if self._handle is None or graph.version != self._sent_version:
                self._send_graph(graph)

    def _send_graph(self, graph: Graph) -> None:
        ops = graph.get_operations()
        if self._handle is None or graph._mutations != self._sent_mutations:
            if self._handle is not None:
                self.close()
            plain, tensors = wire.encode_graph_def({"node": [op.node_def for op in ops]})
            wait = self.config.cluster_wait_secs + 10.0
            reply, _ = self._client.call(
                self.address, "CreateSession", {"graph": plain, "config": self._wire_config}, tensors, timeout=wait
            )
            self._handle = reply["session_handle"]
        else:
            plain, tensors = wire.encode_graph_def({"node": [op.node_def for op in ops[self._sent :]]})
            self._client.call(self.address, "ExtendSession", {"session_handle": self._handle, "graph": plain}, tensors)
        self._sent = len(ops)
        self._sent_version = graph.version
        self._sent_mutations = graph._mutations
        self._routes.clear()  # the master decides again for the new graph

    def run(
        self,
        graph: Graph,
        fetches: list[Any],
        targets: list[Any],
        feeds: list[tuple[Any, Any]],
        options: RunOptions | None,
        run_metadata: Any,
    ) -> list[Any]:
        """Runs one step on the cluster; returns numpy values of ``fetches``.

        Traced (``options.trace_level`` > 0 and a ``run_metadata``), it fills ``run_metadata.step_stats`` with
        every task's node timings (microseconds from the start of that task's partition) and adds to
        ``run_metadata.cost_graph["node"]`` one row per tensor sent between tasks: the ``_Send`` node's
        ``name``, its ``device``, ``recv_device``, ``tensor_name`` and ``bytes``. Traced, or with
        ``options.output_partition_graphs``, it adds each task's partition graph to
        ``run_metadata.partition_graphs`` (its nodes' names, ops, devices and inputs, ``_Send``/``_Recv`` pairs
        included).
        """
        self._sync_graph()
        tracing = options is not None and options.trace_level > 0 and run_metadata is not None
        # A traced step records its partition graphs too, as a local one does.
        graphs = run_metadata is not None and options is not None and (tracing or options.output_partition_graphs)
        timeout = self._timeout(options)
        wait = None if timeout is None else timeout + 5.0
        names = ([t.name for t, _ in feeds], [t.name for t in fetches], [op.name for op in targets])
        key = (tuple(names[0]), tuple(names[1]), tuple(names[2]))
        fed = [v for _, v in feeds]
        remote = not isinstance(self._client, _InProcess)
        if remote and not graphs:
            route = self._routes.get(key)
            if route is not None and self._may_go_direct(route):
                try:
                    return _scalars(self._run_direct(route, fed, len(fetches), timeout, wait))
                except errors.AbortedError as e:
                    if not route.gone(e):
                        raise
                    self._routes.pop(key, None)  # a newer plan, or the task restarted: the master knows
                    if isinstance(route, SplitRoute):
                        raise  # the other tasks may have run their partitions: the step cannot simply run again
        version = self._sent_version
        header = {
            "session_handle": self._handle,
            "feeds": names[0],
            "fetches": names[1],
            "targets": names[2],
            "timeout": timeout,
            # The client pings the master while it waits: a master that stops hearing it gives the step up.
            "pings_every": self._pings_every,
            # Large fetched values come straight from the task holding them, not relayed by the master.
            "direct_fetch": remote,
            "trace": tracing,
            "partition_graphs": graphs,
            "want_route": remote and not graphs and key not in self._routes,
            # Its name for the step: a client that gives it up (Ctrl-C, its own deadline) cancels it by this.
            "step_token": secrets.randbits(62),
        }
        started = time.monotonic()
        try:
            reply, values = self._client.call(self.address, "RunStep", header, fed, timeout=wait)
        except BaseException as e:
            # An error the master answered ended the step there; a wait this thread gave up did not.
            gave_up = not isinstance(e, errors.OpError) or (
                isinstance(e, errors.DeadlineExceededError) and wait is not None and time.monotonic() - started >= wait
            )
            if gave_up and remote:
                cancel = {"session_handle": self._handle, "step_token": header["step_token"]}
                with contextlib.suppress(errors.OpError):  # a closing client: its sessions close anyway
                    self._client.call_async(self.address, "CancelStep", cancel, [])  # fire and forget
            raise
        if remote:
            self._heard.master = (time.monotonic(), self._client.connection_breaks(self.address))
            if header["want_route"]:
                self._learn_route(key, reply.get("route"), version)
        for index, address, token in reply.get("held") or []:
            _, (values[index],) = self._client.call(address, "TakeHeld", {"token": token}, timeout=wait)
        if tracing:
            _record_trace(run_metadata, reply.get("trace") or {})
        if graphs:
            run_metadata.partition_graphs.extend(reply.get("partition_graphs") or [])
        return _scalars(values)

    def _learn_route(self, key: tuple, route: Any, version: int) -> None:
        """Keeps the master's route for signature ``key`` (None: it has none) and starts checking its address."""
        if route is None:
            self._routes[key] = None
            return
        try:
            learned = learn_route(route, self.address, version)
        except errors.DataLossError:
            self._routes[key] = None  # the step itself ran; its signature keeps going through the master
            return
        for part in learned.parts:
            if part.address not in self._probes:
                # Does the address the master named reach the task the session knows? Asked once, in the background.
                self._probes[part.address] = self._client.call_async(part.address, "GetStatus", {}, [])
        self._routes[key] = learned

    def _may_go_direct(self, route: DirectRoute | SplitRoute) -> bool:
        """Whether this thread's next step of ``route``'s signature may go straight to its tasks: the route is of
        the graph as sent, this thread heard from the master within ``REFRESH_SECS`` over a connection that has not
        broken since, and each task answered its address's probe with the incarnation the session knows."""
        if route.version != self._sent_version:
            return False
        heard = getattr(self._heard, "master", None)
        if heard is None or time.monotonic() - heard[0] > REFRESH_SECS:
            return False
        if self._client.connection_breaks(self.address) != heard[1]:
            return False  # the master went down or restarted: let the master path say so
        for part in route.parts:
            probe = self._probes.get(part.address)
            if probe is None or not probe.done() or probe.exception() is not None:
                return False
            if part.incarnation is not None and probe.result()[0].get("incarnation") != part.incarnation:
                return False
        return True

    def _run_direct(
        self,
        route: DirectRoute | SplitRoute,
        fed: list[Any],
        fetch_count: int,
        timeout: float | None,
        wait: float | None,
    ) -> list[Any]:
        step_id = secrets.randbits(62)
        pings_every = self._pings_every  # each task gives the step up if this client goes silent
        try:
            if isinstance(route, DirectRoute):
                header, tensors = route.request(fed, timeout, step_id, pings_every)
                reply, out = self._client.call(route.address, "RunGraph", header, tensors, timeout=wait)
                return route.results(reply, out, fetch_count)
            replies = self._client.call_all(route.requests(fed, timeout, step_id, pings_every), timeout=wait)
        except BaseException as e:
            # As the master does: the first failure (or this thread giving up, an interrupt included) aborts the
            # step on every task, so that no partition waits for a tensor (or a queue's element) nobody will read.
            if not (isinstance(route, DirectRoute) and isinstance(e, errors.OpError) and route.gone(e)):
                error = e if isinstance(e, errors.OpError) else errors.CancelledError(None, None, "The client gave up")
                message = {"step_id": step_id, "error": wire.encode_error(error)}
                for part in route.parts:
                    self._client.call_async(part.address, "AbortStep", message, [])  # fire and forget
            raise
        return route.results(replies, fetch_count)

    def placement(self, graph: Graph, fetches: list[Any], targets: list[Any], feeds: list[Any]) -> dict[str, Any]:
        """The master's placement of the step running ``fetches``/``targets`` with ``feeds`` fed (every node
        when both are empty), and its edges between tasks; see ``MasterSession.placement``."""
        self._sync_graph()
        header = {
            "session_handle": self._handle,
            "feeds": [t.name for t in feeds],
            "fetches": [t.name for t in fetches],
            "targets": [op.name for op in targets],
        }
        reply, _ = self._client.call(self.address, "GetPlacement", header, timeout=60)
        return {"nodes": reply["nodes"], "transfers": reply["transfers"]}

    def list_devices(self) -> list[LocalDevice]:
        """Every device of the tasks this session may use."""
        reply, _ = self._client.call(self.address, "ListDevices", {"config": self._wire_config}, timeout=60)
        return [_as_device(d) for d in reply["devices"]]

    def reset(self, containers: list[str] | None) -> list[str]:
        """Clears ``containers`` (the default one when None) on every task."""
        reply, _ = self._client.call(self.address, "Reset", {"containers": containers}, timeout=60)
        return reply.get("cleared", [])

    def close(self, wait: bool = True) -> None:
        """Closes the master session (its registered partitions are dropped); with ``wait=False`` (a finaliser)
        the ``CloseSession`` goes out from the closer thread and this returns at once."""
        self._routes.clear()
        if self._handle is None:
            return
        handle, self._handle = self._handle, None
        if wait:
            _close_master_session(self._client, self.address, handle)
        else:
            close_soon(functools.partial(_close_master_session, self._client, self.address, handle))


class _InProcess:
    """Calls the master of a server living in this process, with the transport client's ``call`` signature."""

    def __init__(self, server: Any) -> None:
        self._server = server

    def call(
        self,
        address: str,
        method: str,
        header: dict[str, Any] | None = None,
        tensors: Any = (),
        timeout: float | None = None,
    ) -> tuple[dict[str, Any], list[Any]]:
        if local_server(address) is not self._server:
            raise errors.UnavailableError(None, None, f"The in-process task at {address} was stopped")
        return self._server._handle_local(method, dict(header or {}), list(tensors))


def _close_master_session(client: Any, address: str, handle: str) -> None:
    try:
        client.call(address, "CloseSession", {"session_handle": handle}, timeout=5)
    except errors.OpError:
        pass  # the master is gone; nothing left to close


def _scalars(values: list[Any]) -> list[Any]:
    return [v[()] if getattr(v, "ndim", None) == 0 else v for v in values]


def _record_trace(run_metadata: RunMetadata, trace: dict[str, Any]) -> None:
    for name, op, device, start, duration in trace.get("nodes", []):
        stats = NodeExecStats(name, op, device, start, duration)
        run_metadata.step_stats.dev_stats.setdefault(device, []).append(stats)
    sent = run_metadata.cost_graph.setdefault("node", [])
    for send, send_device, recv_device, tensor_name, nbytes in trace.get("sent", []):
        sent.append(
            {
                "name": send,
                "device": send_device,
                "recv_device": recv_device,
                "tensor_name": tensor_name,
                "bytes": nbytes,
            }
        )


def _as_device(d: dict[str, Any]) -> LocalDevice:
    import torch

    return LocalDevice(
        d["name"], d["device_type"], d["index"], torch.device("cpu"), d.get("virtual", False), d.get("memory_limit", 0)
    )
