"""The worker service of a task: runs registered graph partitions and holds the task's resources.

Every task has one :class:`WorkerService`. Its resource containers (variables,
queues) are shared by every session on the cluster, so a second client sees
the same ``x``. Masters register one partition per step signature
(``RegisterGraph``) and run it once per step (``RunGraph``); tensors that cross
tasks are pushed by ``_Send`` kernels straight to the receiving worker
(``SendTensor``), never through the client.

Requests (method → header fields → reply):

* ``GetStatus`` → job, task, incarnation, devices.
* ``RegisterGraph`` (graph, session, isolate) → graph_handle; ``DeregisterGraph`` (graph_handle, cancel): runs
  already going finish, unless ``cancel`` (the session was closed) aborts them with ``CancelledError``;
  ``ForgetSession`` (session): the master closed it, so its private state goes with its last graph.
* ``RunGraph`` (graph_handle, step_id, feeds, fetches, targets, timeout) + feed tensors → fetched tensors (from the
  master, or straight from a client, see ``direct_route``);
  with ``trace`` also the step's node timings and the bytes each ``_Send`` pushed to another task. Optional
  ``sent_keys``/``sent_dead_keys`` carry tensors the master's own partition pushed to this task before the request
  left (one tensor per ``sent_keys`` entry, after the feeds), as a ``SendTensor`` would.
* ``SendTensor`` (step_id, keys, dead_keys) + one tensor per key, sent one-way (no reply: a sender's partition is done
  once its tensors are queued, and a tensor that cannot be delivered aborts its step here); ``dead_keys`` (optional)
  name dead values, which carry no tensor (TF's ``is_dead``); ``AbortStep`` (step_id, error).
* ``CleanupContainers`` (containers, or None for the default one, which is named after the job) → cleared names.
* ``TakeHeld`` (token) → a large fetched value kept for the client when RunGraph had ``direct_fetch``.
* ``ListVariables`` (containers) → name, container, shape, dtype, device and min/max/mean/norm of each variable.
* ``VariableHistogram`` (container, name, bins) → a histogram of one variable's values, computed here.

Example:
    >>> from dtf_notebook.runtime.config import ConfigProto
    >>> worker = WorkerService("localhost", 0, ConfigProto(), peers=None)
    >>> header, _ = worker.handle("GetStatus", {}, [])
    >>> header["devices"][0]["name"]
    '/job:localhost/replica:0/task:0/device:CPU:0'
"""

from __future__ import annotations

import itertools
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.distributed import wire
from dtf_notebook.distributed.client_watch import Silence, client_watch, inherited
from dtf_notebook.distributed.direct_route import unregistered_message
from dtf_notebook.distributed.outbox import Outbox
from dtf_notebook.distributed.peer_limits import current_peer
from dtf_notebook.framework.graph_import import import_graph_def
from dtf_notebook.lazy_modules import torch
from dtf_notebook.placement.partition import rendezvous_prefix
from dtf_notebook.runtime import values
from dtf_notebook.runtime.config import ConfigProto, RunMetadata, RunOptions
from dtf_notebook.runtime.dataflow import DEAD
from dtf_notebook.runtime.executor import ExecutionState, StepContext
from dtf_notebook.runtime.file_access import FileAccess
from dtf_notebook.runtime.local_backend import LocalBackend
from dtf_notebook.runtime.rendezvous import RendezvousTable
from dtf_notebook.runtime.resources import ResourceMgr, VariableResource

# Deliver tensors to another task: (task_name, step_id, keys, values); returns once they are on their way.
PeerSender = Callable[[str, int, list[str], list[Any]], None]


def task_of(device: str) -> str:
    """``/job:w/replica:0/task:1/device:GPU:0`` → ``/job:w/replica:0/task:1``.

    Example:
        >>> task_of("/job:ps/replica:0/task:2/device:CPU:0")
        '/job:ps/replica:0/task:2'
    """
    return device.split("/device:")[0]


class WorkerService:
    """Runs partitions for masters and keeps this task's resource containers.

    Args:
        job, task: This task's place in the cluster.
        config: The server's ConfigProto (devices, GPU options, virtual GPUs).
        peers: Sends a tensor to another task (set by the Server; None for a lone task).
        master_alive: ``(address, incarnation)``: raises when the master at an address no longer answers, or answers
            with another incarnation than the step's (it restarted); set by the Server.
        files: Where this task's kernels may touch files (the server's file roots).
        client_silence: Seconds since the task last heard from a connection (``ServiceSocket.silent_for``): a
            partition a client sent directly is given up once that client went silent (see :mod:`.client_watch`).

    Example:
        >>> worker = WorkerService("worker", 1, ConfigProto(), peers=None)
        >>> worker.task_name, worker.handle("CleanupContainers", {"containers": None}, [])
        ('/job:worker/replica:0/task:1', ({'cleared': []}, []))
    """

    def __init__(
        self,
        job: str,
        task: int,
        config: ConfigProto,
        peers: PeerSender | None,
        master_alive: Any = None,
        files: FileAccess | None = None,
        client_silence: Silence | None = None,
    ) -> None:
        self.job, self.task = job, task
        self._client_silence = client_silence
        self.task_name = f"/job:{job}/replica:0/task:{task}"
        self.state = ExecutionState(resources=ResourceMgr(job), files=files or FileAccess())
        self.backend = LocalBackend(config, state=self.state, job=job, task=task)
        self.rendezvous = RendezvousTable()
        self._peers = peers
        # Raises when a master (by address) no longer answers, so its blocked steps give up.
        self._master_alive = master_alive
        self._graphs: dict[str, tuple[Any, LocalBackend, str]] = {}  # handle -> (graph, backend, session)
        # Master session -> its backend (kernels, random generators, unnamed queues; its variables too when
        # the session isolates its state), the handles of its graphs, and whether its master closed it.
        self._sessions: dict[str, _SessionState] = {}
        self._timings: dict[str, float] = {}  # graph handle -> recent run time, for partitions that never wait
        # (graph handle, fetch, target and feed names) -> their tensors and operations: a step looks its names up
        # once per signature, not once per run.
        self._resolved: dict[tuple[Any, ...], tuple[list[Any], list[Any], list[Any]]] = {}
        # Graph handle -> whether its runs go on the event loop (see start_run_graph): True once a run on a thread
        # showed its plan can stop at a receive; False when its runs keep the loop busy too long.
        self._on_loop: dict[str, bool] = {}
        self._loop_strikes: dict[str, int] = {}  # graph handle -> its runs in a row that kept the loop busy too long
        self._loop_runs: dict[int, _LoopRun] = {}  # step id -> this task's partition of it, served on the loop
        self._running: dict[str, set[int]] = {}  # graph handle -> the steps running it here (closing cancels them)
        self._held: dict[str, tuple[Any, float]] = {}  # token -> (fetched value, time), see _hold_large
        self.address = ""  # set by the Server once bound
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.incarnation = 0  # set by the Server

    @property
    def devices(self) -> list[Any]:
        return self.backend.devices

    # ---- dispatch ---------------------------------------------------------------------------
    def handle(self, method: str, header: dict[str, Any], tensors: list[Any]) -> tuple[dict[str, Any], list[Any]]:
        """Serves one request (see the module docstring)."""
        fn = _METHODS.get(method)
        if fn is None:
            raise errors.UnimplementedError(None, None, f"Unknown worker method {method!r}")
        return fn(self, header, tensors)

    def get_status(self, header: dict[str, Any], tensors: list[Any]) -> tuple[dict[str, Any], list[Any]]:
        return {
            "job": self.job,
            "task": self.task,
            "incarnation": self.incarnation,
            "devices": [d.describe() for d in self.devices],
        }, []

    def can_inline(self, method: str, header: dict[str, Any]) -> bool:
        """True for requests short enough to run on the server's I/O thread (see ServiceSocket's ``inline``).

        Bookkeeping requests always are; a ``RunGraph`` is when its partition has no kernel that can wait on
        the step (``needs_step``: no ``_Recv``/``_Send``, no queue or accumulator wait) and its recent runs
        took under a millisecond.
        """
        if method in _INSTANT:
            return True
        if method != "RunGraph":
            return False
        stats = self._timings.get(header.get("graph_handle"))
        return stats is not None and stats < 1e-3

    def _session_backend(self, session: str, isolate: bool) -> LocalBackend:
        """The backend of master session ``session`` (made on its first graph); call with ``_lock`` held."""
        state = self._sessions.get(session)
        if state is None:
            shared = self.state
            resources = ResourceMgr(self.job) if isolate else shared.resources
            backend = LocalBackend(
                self.backend.config,
                devices=self.backend.devices,
                state=ExecutionState(resources=resources, files=shared.files, session=session),
                job=self.job,
                task=self.task,
            )
            state = self._sessions[session] = _SessionState(backend)
        return state.backend

    def register_graph(self, header: dict[str, Any], tensors: list[Any]) -> tuple[dict[str, Any], list[Any]]:
        graph_def = wire.decode_graph_def(_field(header, "graph", dict), tensors)
        graph = import_graph_def(graph_def)
        session = header.get("session")
        session = session if isinstance(session, str) else ""
        # Unguessable, so that no peer runs or drops a partition another one registered by guessing its handle.
        handle = f"{self.task_name}/graph/{next(self._ids)}-{secrets.token_hex(8)}"
        with self._lock:
            backend = self._session_backend(session, bool(header.get("isolate"))) if session else self.backend
            self._graphs[handle] = (graph, backend, session)
            if session:
                self._sessions[session].graphs.add(handle)
            # Kernels that take the step context may wait on it (peers, queues): never on the I/O thread.
            if not any(op.op_def.needs_step for op in graph.get_operations()):
                self._timings[handle] = 1.0  # measured below; too slow until proven fast
        return {"graph_handle": handle}, []

    def deregister_graph(self, header: dict[str, Any], tensors: list[Any]) -> tuple[dict[str, Any], list[Any]]:
        handle = _field(header, "graph_handle", str)
        with self._lock:
            entry = self._graphs.pop(handle, None)
            running = self._running.pop(handle, set())  # steps still running it end on their own, or now:
            if not header.get("cancel"):
                running = set()
            self._timings.pop(handle, None)
            for signature in [k for k in self._resolved if k[0] == handle]:
                del self._resolved[signature]
            self._on_loop.pop(handle, None)
            self._loop_strikes.pop(handle, None)
            if entry is not None and entry[2] in self._sessions:
                state = self._sessions[entry[2]]
                state.graphs.discard(handle)
                if state.closed and not state.graphs:
                    del self._sessions[entry[2]]  # its private state goes with it
        if entry is not None:
            entry[1].forget(entry[0])
            # Its session was closed: as TF1's close does, the steps running it end now (a client's direct steps,
            # which its master never saw, included).
            cancelled = errors.CancelledError(None, None, f"Session {entry[2]} was closed while this step ran")
            for step_id in running:
                self.rendezvous.abort(step_id, cancelled)
        return {}, []

    def _started(self, handle: str, step_id: int) -> None:
        """Counts a step as running ``handle``; raises when the partition was deregistered since it was looked up."""
        with self._lock:
            if handle not in self._graphs:
                raise errors.AbortedError(None, None, unregistered_message(handle, self.task_name))
            self._running.setdefault(handle, set()).add(step_id)

    def _ended(self, handle: str, step_id: int) -> None:
        with self._lock:
            steps = self._running.get(handle)
            if steps is not None:
                steps.discard(step_id)
                if not steps:
                    del self._running[handle]

    def forget_session(self, header: dict[str, Any], tensors: list[Any]) -> tuple[dict[str, Any], list[Any]]:
        """The master closed a session: its private state goes once its last graph is deregistered."""
        session = _field(header, "session", str)
        with self._lock:
            state = self._sessions.get(session)
            if state is not None:
                state.closed = True
                if not state.graphs:
                    del self._sessions[session]
        return {}, []

    def _prepare(self, header: dict[str, Any], tensors: list[Any]) -> _Prepared:
        """Checks a ``RunGraph`` request and looks up its graph, fetches, targets and feeds."""
        handle = _field(header, "graph_handle", str)
        step_id = _field(header, "step_id", int)
        feed_names = _field(header, "feeds", list)
        fetch_names = _field(header, "fetches", list)
        target_names = _field(header, "targets", list)
        sent_keys, sent_dead = header.get("sent_keys", []), header.get("sent_dead_keys", [])
        if not all(isinstance(k, list) and all(isinstance(x, str) for x in k) for k in (sent_keys, sent_dead)):
            raise errors.InvalidArgumentError(None, None, "RunGraph's sent_keys and sent_dead_keys must list keys")
        if len(feed_names) + len(sent_keys) != len(tensors):
            raise errors.InvalidArgumentError(
                None,
                None,
                f"RunGraph got {len(tensors)} tensors for {len(feed_names)} feeds and {len(sent_keys)} sent tensors",
            )
        sent = list(zip(sent_keys, tensors[len(feed_names) :])) + [(key, DEAD) for key in sent_dead]
        tensors = tensors[: len(feed_names)]
        entry = self._graphs.get(handle)
        if entry is None:
            raise errors.AbortedError(None, None, unregistered_message(handle, self.task_name))
        graph, backend, _ = entry
        try:
            signature = (handle, tuple(fetch_names), tuple(target_names), tuple(feed_names))
            resolved = self._resolved.get(signature)
        except TypeError:  # a name that is not a string (unhashable): the lookups below say so
            signature = resolved = None
        if resolved is None:
            try:
                fetches = [graph.get_tensor_by_name(n) for n in fetch_names]
                targets = [graph.get_operation_by_name(n) for n in target_names]
                fed = [graph.get_tensor_by_name(n) for n in feed_names]
            except (KeyError, ValueError, TypeError) as e:
                raise errors.InvalidArgumentError(None, None, f"RunGraph on {self.task_name}: {e}") from None
            resolved = (fetches, targets, fed)
            if signature is not None:
                with self._lock:
                    # Not deregistered meanwhile (the entry would outlive it), and bounded: names that differ only
                    # in spelling ("a:0", "a:00") resolve alike, and a peer must not grow this without end.
                    if handle in self._graphs and len(self._resolved) < _RESOLVED_MAX:
                        self._resolved[signature] = resolved
        fetches, targets, fed = resolved
        feeds = list(zip(fed, tensors))
        # Sent by the client itself, or run by its master in the thread serving the client's step.
        watch = client_watch(header, current_peer.get(), self._client_silence) or inherited.get()
        if watch is not None:
            watch = _Throttled(watch, every=1.0)
        return _Prepared(handle, step_id, graph, backend, fetches, targets, feeds, sent, watch)

    def _deliver_sent(self, run: _Prepared) -> None:
        """Puts the tensors a ``RunGraph`` request carried for this step's rendezvous (see the module docstring)."""
        for key, value in run.sent:
            if isinstance(value, np.ndarray) and value.dtype != object:
                value = values.from_numpy(value, torch.device("cpu"))
            self.deliver(run.step_id, key, value)

    def _step_context(self, header: dict[str, Any], step_id: int, rendezvous: Any, outbox: Outbox, tracing: bool):
        """The step context of a partition run: its deadline, rendezvous, and the sends it holds back in ``outbox``
        (with ``tracing``, also the bytes of each tensor pushed to another task)."""
        timeout = header.get("timeout")
        sent_bytes: list[tuple[str, int]] = []  # (rendezvous key, bytes) of each tensor pushed, when tracing

        def send(key: str, recv_device: str, value: Any) -> None:
            if tracing:
                sent_bytes.append((key, values.nbytes(value)))
            outbox.add(task_of(recv_device), key, value)
            if rendezvous.waiting:
                outbox.flush()  # a receive here is blocked, and what it waits for may need this tensor first

        rendezvous.on_wait = outbox.flush
        deadline = None if timeout is None else time.monotonic() + float(timeout)
        step = StepContext(step_id, deadline, {"rendezvous": rendezvous, "send": send, "flush": outbox.flush})
        return step, sent_bytes

    def _outbox(self, step_id: int) -> Outbox:
        peers = self._peers
        return Outbox(lambda task, keys, held: peers(task, step_id, keys, held) if peers else None)

    def run_graph(self, header: dict[str, Any], tensors: list[Any]) -> tuple[dict[str, Any], list[Any]]:
        run = self._prepare(header, tensors)
        self._started(run.handle, run.step_id)  # from here on, closing its session cancels it
        try:
            return self._run_started(run, header)
        finally:
            self._ended(run.handle, run.step_id)

    def _run_started(self, run: _Prepared, header: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
        handle, step_id, graph, backend = run.handle, run.step_id, run.graph, run.backend
        rendezvous = self.rendezvous.acquire(step_id)
        self._deliver_sent(run)
        master, master_incarnation = header.get("master"), header.get("master_incarnation")
        if isinstance(master, str) and self._master_alive is not None:
            rendezvous.watchdog = _Throttled(lambda: self._master_alive(master, master_incarnation), every=2.0)
        if run.watch is not None:
            rendezvous.watchdog = _both(run.watch, rendezvous.watchdog)
        tracing = bool(header.get("trace"))
        outbox = self._outbox(step_id)
        step, sent_bytes = self._step_context(header, step_id, rendezvous, outbox, tracing)
        started = time.perf_counter()
        metadata = RunMetadata() if tracing else None
        options = RunOptions(trace_level=RunOptions.FULL_TRACE) if tracing else None
        try:
            results = backend.run(graph, run.fetches, run.targets, run.feeds, options, metadata, step=step)
            outbox.flush()
            if handle in self._timings:
                # A decaying estimate, so a partition that turns slow leaves the I/O thread quickly.
                self._timings[handle] = 0.5 * self._timings[handle] + 0.5 * (time.perf_counter() - started)
            if not tracing and handle not in self._on_loop:
                # Its next runs go on the event loop when its plan can stop at a receive instead of waiting, once a
                # run here was short: a long one (a big save, a heavy step) would hold up the loop, which answers
                # every peer's pings, so it stays on threads.
                plan = backend.plan(graph, run.fetches, run.targets, [t for t, _ in run.feeds])
                if not plan.resumable:
                    self._on_loop[handle] = False
                elif time.perf_counter() - started <= _LOOP_MAX_SECS:
                    self._on_loop[handle] = True
        except errors.OpError as e:
            outbox.discard()
            rendezvous.abort(e)
            raise
        finally:
            self.rendezvous.release(step_id)
            # Tensors pushed for steps that never ran here (their master failed first) must not pile up.
            self.rendezvous.expire(older_than=_STALE_STEP_SECS)
        reply: dict[str, Any] = {}
        if header.get("direct_fetch") and self.address:
            reply, results = self._hold_large(step_id, results)
        if metadata is not None:
            reply["trace"] = _trace_reply(graph, metadata, sent_bytes)
        return reply, results

    def start_run_graph(self, header: dict[str, Any], tensors: list[Any], reply: Any, loop: Any) -> bool:
        """Serves a ``RunGraph`` on the event loop ``loop`` (a ServiceSocket), answering through ``reply``
        (``ok(header, tensors)`` / ``fail(error)``); False leaves it to a thread (see ``run_graph``).

        A partition runs here once a run on a thread took at most 20 ms and showed that its plan can stop at a
        receive whose tensor has not come yet (serial, no control flow or queues): it stops there, and the loop
        runs it on when the tensor (or an abort) arrives, so the loop never waits and the step crosses no thread
        of this task. The loop checks its deadline, and every 2 s of waiting that its master is alive. A partition
        whose runs keep the loop busy for more than 20 ms five times in a row goes back to threads. A partition
        a client sent directly is given up once that client went silent (see :mod:`.client_watch`).
        """
        handle = header.get("graph_handle")
        if not self._on_loop.get(handle) or header.get("trace"):
            return False
        try:
            run = self._prepare(header, tensors)
            self._started(run.handle, run.step_id)
        except errors.OpError:
            return False  # a thread reports it, as for any request
        rendezvous = self.rendezvous.acquire(run.step_id)
        try:
            self._deliver_sent(run)
            outbox = self._outbox(run.step_id)
            step, _ = self._step_context(header, run.step_id, rendezvous, outbox, False)
            backend_run = run.backend.start(run.graph, run.fetches, run.targets, run.feeds, step)
        except BaseException:
            self._ended(run.handle, run.step_id)
            self.rendezvous.release(run.step_id)
            raise
        master = header.get("master")
        loop_run = _LoopRun(self, run, backend_run, rendezvous, outbox, reply, loop, master, header)
        rendezvous.on_ready = lambda: loop.call_soon(loop_run.resume)
        self._loop_runs[run.step_id] = loop_run
        loop_run.resume()
        return True

    def tick(self, now: float) -> None:
        """The event loop's periodic check of the partitions it serves: one past its deadline is aborted, and one
        waiting for 2 s on a tensor pings its master (gone: the step is given up), and one whose client went silent
        is given up."""
        for loop_run in list(self._loop_runs.values()):
            loop_run.check(now)

    def _hold_large(self, step_id: int, results: list[Any]) -> tuple[dict[str, Any], list[Any]]:
        """Keeps large fetched values here for the client to take directly (``TakeHeld``): they then cross
        the network once, not twice through the master."""
        now = time.monotonic()
        with self._lock:
            for token, (_, born) in list(self._held.items()):
                if now - born > _HELD_SECS:
                    del self._held[token]
            held = []
            for i, value in enumerate(results):
                if isinstance(value, np.ndarray) and value.dtype != object and value.nbytes >= _DIRECT_FETCH_BYTES:
                    token = f"{step_id}/{i}/{secrets.token_urlsafe(16)}"  # only its client may take it
                    self._held[token] = (value, now)
                    held.append([i, token])
                    results[i] = _PLACEHOLDER
        return {"held": held, "held_at": self.address}, results

    def take_held(self, header: dict[str, Any], tensors: list[Any]) -> tuple[dict[str, Any], list[Any]]:
        token = _field(header, "token", str)
        with self._lock:
            entry = self._held.pop(token, None)
        if entry is None:
            raise errors.NotFoundError(None, None, f"No fetched tensor {token!r} is held on {self.task_name}")
        return {}, [entry[0]]

    def send_tensor(self, header: dict[str, Any], tensors: list[Any]) -> tuple[dict[str, Any], list[Any]]:
        step_id, keys = header.get("step_id"), header.get("keys")
        if (  # the usual message (every step has several) in one test; the checks below say what is wrong
            type(step_id) is int
            and type(keys) is list
            and keys  # (an empty one touches no rendezvous)
            and len(keys) == len(tensors)
            and _STR.issuperset(map(type, keys))
            and "dead_keys" not in header
        ):
            rendezvous = self.rendezvous.get(step_id)
            for key, value in zip(keys, tensors):
                if type(value) is np.ndarray and value.dtype.kind != "O":
                    value = values.from_numpy(value, torch.device("cpu"))
                rendezvous.put(key, value)
            return {}, []
        step_id = _field(header, "step_id", int)
        keys = _sent_keys(header)
        if len(tensors) != len(keys) or not all(isinstance(k, str) for k in keys):
            raise errors.InvalidArgumentError(
                None, None, f"SendTensor carries one tensor per key: {len(keys)} keys, {len(tensors)} tensors"
            )
        dead = header.get("dead_keys", [])
        if not isinstance(dead, list) or not all(isinstance(k, str) for k in dead):
            raise errors.InvalidArgumentError(None, None, f"SendTensor dead_keys must list keys, got {dead!r:.80}")
        for key, value in zip(keys, tensors):
            if isinstance(value, np.ndarray) and value.dtype != object:
                value = values.from_numpy(value, torch.device("cpu"))
            self.deliver(step_id, key, value)
        for key in dead:
            self.deliver(step_id, key, DEAD)
        return {}, []

    def deliver(self, step_id: int, key: str, value: Any) -> None:
        """Puts a tensor sent by a peer into this task's rendezvous for the step."""
        self.rendezvous.get(step_id).put(key, value)

    def oneway_failed(self, method: str, header: dict[str, Any], error: errors.OpError) -> None:
        """A request that gets no reply failed here: a ``SendTensor`` aborts the step it was for, so that the
        partition waiting for the tensor fails at once instead of waiting for it.

        Example:
            >>> worker = WorkerService("ps", 0, ConfigProto(), peers=None)
            >>> worker.oneway_failed("SendTensor", {"step_id": 7, "key": "w:0"}, errors.InvalidArgumentError(
            ...     None, None, "Tensor of 8 bytes exceeds the limit"))
            >>> worker.rendezvous.get(7).aborted.message
            'The tensor w:0 sent to /job:ps/replica:0/task:0 was lost: Tensor of 8 bytes exceeds the limit'
        """
        step_id = header.get("step_id")
        if method != "SendTensor" or type(step_id) is not int:
            return  # nothing waits on it here
        sent = header.get("keys")
        keys = ", ".join(map(str, sent if isinstance(sent, list) else [header.get("key")]))
        message = f"The tensor {keys} sent to {self.task_name} was lost: {error.message}"
        self.rendezvous.abort(step_id, type(error)(None, None, message))

    def abort_step(self, header: dict[str, Any], tensors: list[Any]) -> tuple[dict[str, Any], list[Any]]:
        error = wire.decode_error(_field(header, "error", dict))
        self.rendezvous.abort(_field(header, "step_id", int), error)
        return {}, []

    def cleanup_containers(self, header: dict[str, Any], tensors: list[Any]) -> tuple[dict[str, Any], list[Any]]:
        # None: the default container, named after this task's job (as in TF1, where "" names none).
        containers = header.get("containers")
        if containers is None:
            containers = [self.state.resources.default_container]
        cleared = []
        for container in containers:
            cleared += [f"{container}/{name}" for name in self.state.resources.cleanup(container)]
        return {"cleared": cleared}, []

    def list_variables(self, header: dict[str, Any], tensors: list[Any]) -> tuple[dict[str, Any], list[Any]]:
        wanted = header.get("containers")
        rows = []
        for container, name, resource in self.state.resources.items():
            if wanted is not None and container not in wanted:
                continue
            if isinstance(resource, VariableResource):
                rows.append(describe_variable(container, name, resource))
        return {"variables": rows, "task": self.task_name}, []

    def variable_histogram(self, header: dict[str, Any], tensors: list[Any]) -> tuple[dict[str, Any], list[Any]]:
        container = header.get("container") or ""
        name = _field(header, "name", str)
        bins = header.get("bins", 30)
        if not isinstance(container, str) or not isinstance(bins, int) or not 1 <= bins <= _MAX_BINS:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"VariableHistogram needs a container name and 1..{_MAX_BINS} bins, got {container!r}, {bins!r}",
            )
        resource = self.state.resources.lookup(container, name)
        if not isinstance(resource, VariableResource):
            raise errors.InvalidArgumentError(None, None, f"Resource {name!r} on {self.task_name} is not a variable")
        value = resource.read()
        if not isinstance(value, torch.Tensor) or not (
            value.dtype.is_floating_point or value.dtype in (torch.int32, torch.int64)
        ):
            raise errors.InvalidArgumentError(
                None, None, f"Variable {name!r} on {self.task_name} holds no numbers to make a histogram of"
            )
        return {"name": name, "task": self.task_name, **value_histogram(value, bins)}, []


class _Prepared:
    """A checked ``RunGraph`` request: its graph, backend and what to feed, fetch and run."""

    __slots__ = ("handle", "step_id", "graph", "backend", "fetches", "targets", "feeds", "sent", "watch")

    def __init__(self, handle, step_id, graph, backend, fetches, targets, feeds, sent, watch) -> None:
        self.handle, self.step_id, self.graph, self.backend = handle, step_id, graph, backend
        self.fetches, self.targets, self.feeds, self.sent = fetches, targets, feeds, sent
        self.watch = watch  # raises once the client that sent it went silent (None: not watched); throttled


class _LoopRun:
    """A partition run served on a task's event loop (see ``WorkerService.start_run_graph``)."""

    def __init__(self, worker, run, backend_run, rendezvous, outbox, reply, loop, master, header) -> None:
        self.worker, self.run, self.backend_run = worker, run, backend_run
        self.rendezvous, self.outbox, self.reply, self.loop = rendezvous, outbox, reply, loop
        self.master = master if isinstance(master, str) and master != worker.address else None
        self.master_incarnation = header.get("master_incarnation")
        self.direct_fetch = bool(header.get("direct_fetch"))
        self.busy = 0.0  # seconds it kept the loop busy
        self.checked = time.monotonic()  # when its master was last known alive
        self.pinging = False

    def resume(self) -> None:
        worker, step_id = self.worker, self.run.step_id
        started = time.perf_counter()
        try:
            results = self.backend_run.resume()
            if results is None:
                return  # stopped at a receive; the rendezvous calls back once its tensor (or an abort) is there
            self.outbox.flush()
        except BaseException as e:
            self.outbox.discard()
            error = e if isinstance(e, errors.OpError) else errors.InternalError(None, None, f"RunGraph failed: {e!r}")
            self.rendezvous.abort(error)
            self._end()
            self.reply.fail(error)
            if not isinstance(e, Exception):
                raise
            return
        finally:
            self.busy += time.perf_counter() - started
        self._end()
        reply: dict[str, Any] = {}
        if self.direct_fetch and worker.address:
            reply, results = worker._hold_large(step_id, results)
        self.reply.ok(reply, results)

    def _end(self) -> None:
        worker, handle = self.worker, self.run.handle
        worker._loop_runs.pop(self.run.step_id, None)
        worker._ended(handle, self.run.step_id)
        self.rendezvous.on_ready = None
        worker.rendezvous.release(self.run.step_id)
        worker.rendezvous.expire(older_than=_STALE_STEP_SECS)
        # Wall time (a CPU clock costs a system call, slow in a VM under load): a run preempted now and then is not
        # heavy, so only runs too long several times in a row send the partition back to threads.
        strikes = worker._loop_strikes
        if self.busy <= _LOOP_MAX_SECS:
            if handle in strikes:
                del strikes[handle]
        else:
            strikes[handle] = strikes.get(handle, 0) + 1
            if strikes[handle] >= _LOOP_STRIKES and handle in worker._on_loop:
                worker._on_loop[handle] = False  # it keeps the loop from serving others: back to threads

    def check(self, now: float) -> None:
        step = self.backend_run.run.step
        if step.deadline is not None and now > step.deadline:
            self.rendezvous.abort(errors.DeadlineExceededError(None, None, "Timed out: the step ran past its deadline"))
            return
        if self.run.watch is not None:
            try:
                self.run.watch()
            except errors.OpError as e:
                self.rendezvous.abort(e)
                return
        if self.master is not None and not self.pinging and now - self.checked >= 2.0:
            self.pinging = True
            self.loop.request(self.master, "Ping", {}, [], self._pinged)

    def _pinged(self, header: Any, tensors: Any, error: Any) -> None:
        self.pinging = False
        self.checked = time.monotonic()
        seen = header.get("incarnation") if isinstance(header, dict) else None
        if error is None and None not in (seen, self.master_incarnation) and seen != self.master_incarnation:
            # Its address answers, but a restarted master knows nothing of this step: nobody will take its result.
            error = errors.UnavailableError(None, None, "it restarted since")
        if error is not None:
            self.rendezvous.abort(
                errors.UnavailableError(
                    None, None, f"The master of this step ({self.master}) is gone; giving up the step ({error.message})"
                )
            )


def _both(first: Callable[[], None], then: Callable[[], None] | None) -> Callable[[], None]:
    """A watchdog running ``first``, then ``then`` (when there is one)."""
    if then is None:
        return first

    def both() -> None:
        first()
        then()

    return both


class _Throttled:
    """Calls ``fn`` at most every ``every`` seconds."""

    def __init__(self, fn: Callable[[], None], every: float) -> None:
        self._fn, self._every, self._last = fn, every, time.monotonic()

    def __call__(self) -> None:
        now = time.monotonic()
        if now - self._last >= self._every:
            self._last = now
            self._fn()


def describe_variable(container: str, name: str, resource: VariableResource) -> dict[str, Any]:
    """Plain-data summary of a variable, computed where it lives (no copy of the values leaves the task).

    Example:
        >>> resource = VariableResource("w", None, None)
        >>> resource.value = torch.tensor([3.0, 4.0])
        >>> row = describe_variable("", "w", resource)
        >>> row["shape"], row["initialized"], row["mean"], row["norm"]
        ([2], True, 3.5, 5.0)
    """
    row: dict[str, Any] = {
        "name": name,
        "container": container,
        "dtype": resource.dtype.name if resource.dtype is not None else None,
        "shape": None if resource.shape is None else list(resource.shape.as_tuple() or []),
        "device": resource.device,
        "initialized": resource.is_initialized,
    }
    value = resource.value
    if isinstance(value, torch.Tensor):
        row["shape"] = list(value.shape)
        if value.numel() and (value.dtype.is_floating_point or value.dtype in (torch.int32, torch.int64)):
            row.update(value_stats(value))
    return row


_STATS_BLOCK = 1 << 20


def value_stats(value: torch.Tensor) -> dict[str, float]:
    """min, max, mean and L2 norm of a tensor, accumulated in float64 one block at a time, so a huge
    variable is summarized without a full-size copy.

    Example:
        >>> value_stats(torch.tensor([3.0, -4.0]))
        {'min': -4.0, 'max': 3.0, 'mean': -0.5, 'norm': 5.0}
    """
    flat = value.detach().reshape(-1)
    lo, hi, total, squares = float("inf"), float("-inf"), 0.0, 0.0
    for start in range(0, flat.numel(), _STATS_BLOCK):
        block = flat[start : start + _STATS_BLOCK].double()
        lo, hi = min(lo, float(block.min())), max(hi, float(block.max()))
        total += float(block.sum())
        squares += float(block.square().sum())
    return {"min": lo, "max": hi, "mean": total / flat.numel(), "norm": squares**0.5}


def value_histogram(value: torch.Tensor, bins: int) -> dict[str, Any]:
    """Counts of a tensor's values in ``bins`` equal bins over [min, max], one block at a time (no full copy).

    Example:
        >>> value_histogram(torch.tensor([0.0, 1.0, 1.0, 4.0]), bins=2)
        {'edges': [0.0, 2.0, 4.0], 'counts': [3, 1]}
    """
    flat = value.detach().reshape(-1)
    if not flat.numel():
        return {"edges": [], "counts": []}
    stats = value_stats(flat)
    lo, hi = stats["min"], stats["max"]
    if hi <= lo:
        hi = lo + 1.0  # all values equal: one bin holds them all
    counts = torch.zeros(bins, dtype=torch.float64)
    for start in range(0, flat.numel(), _STATS_BLOCK):
        counts += torch.histc(flat[start : start + _STATS_BLOCK].double(), bins=bins, min=lo, max=hi)
    width = (hi - lo) / bins
    return {"edges": [lo + i * width for i in range(bins)] + [hi], "counts": [int(c) for c in counts.tolist()]}


def _trace_reply(graph: Any, metadata: RunMetadata, sent: list[tuple[str, int]]) -> dict[str, Any]:
    """Plain data of a traced partition run: ``nodes`` [name, op, device, start µs, duration µs] and ``sent``
    [_Send node, send device, recv device, tensor name, bytes] for each tensor pushed to another task."""
    nodes = [
        [s.node_name, s.op, s.device, s.all_start_micros, s.all_end_rel_micros]
        for stats in metadata.step_stats.dev_stats.values()
        for s in stats
    ]
    send_names = {rendezvous_prefix(op.attrs): op.name for op in graph.get_operations() if op.type == "_Send"}
    rows = []
    for key, nbytes in sent:
        prefix = key.rpartition(";")[0]  # a send inside a loop sends once per iteration, each with its own key
        send_device, _, recv_device, tensor_name = prefix.split(";")
        rows.append([send_names.get(prefix, ""), send_device, recv_device, tensor_name, nbytes])
    return {"nodes": nodes, "sent": rows}


def _sent_keys(header: dict[str, Any]) -> list[Any]:
    """The rendezvous keys of a ``SendTensor``: ``keys`` (one per tensor), or a single ``key``."""
    keys = header.get("keys")
    if isinstance(keys, list):
        return keys
    return [_field(header, "key", str)]


def _field(header: dict[str, Any], name: str, kind: type) -> Any:
    value = header.get(name)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
        raise errors.InvalidArgumentError(
            None, None, f"Request field {name!r} must be a {kind.__name__}, got {value!r}"
        )
    return value


_STALE_STEP_SECS = 600.0
_LOOP_MAX_SECS = 0.02  # a partition whose runs keep the event loop busy longer than this runs on threads,
_LOOP_STRIKES = 5  # once this many of its runs in a row did
_DIRECT_FETCH_BYTES = 1 << 20  # fetched values this large go to the client directly
_HELD_SECS = 120.0  # a held value nobody takes is dropped after this long
_PLACEHOLDER = np.empty(0, np.uint8)
_MAX_BINS = 1000


class _SessionState:
    """What a task keeps for one master session: its backend and its registered graphs."""

    __slots__ = ("backend", "graphs", "closed")

    def __init__(self, backend: LocalBackend) -> None:
        self.backend, self.graphs, self.closed = backend, set(), False


_STR = frozenset((str,))
_RESOLVED_MAX = 4096  # RunGraph signatures whose names stay resolved (see _prepare)
_INSTANT = frozenset({"GetStatus", "SendTensor", "AbortStep", "DeregisterGraph", "TakeHeld", "ForgetSession"})

_METHODS: dict[str, Callable[..., tuple[dict[str, Any], list[Any]]]] = {
    "GetStatus": WorkerService.get_status,
    "RegisterGraph": WorkerService.register_graph,
    "DeregisterGraph": WorkerService.deregister_graph,
    "ForgetSession": WorkerService.forget_session,
    "RunGraph": WorkerService.run_graph,
    "SendTensor": WorkerService.send_tensor,
    "AbortStep": WorkerService.abort_step,
    "CleanupContainers": WorkerService.cleanup_containers,
    "ListVariables": WorkerService.list_variables,
    "VariableHistogram": WorkerService.variable_histogram,
    "TakeHeld": WorkerService.take_held,
}
