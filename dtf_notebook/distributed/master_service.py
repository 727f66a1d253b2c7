"""The master service of a task: sessions whose steps run one graph across the cluster.

A client's ``Session("zmq://host:port")`` talks to the master of that task.
For each distinct (fetches, feeds, targets) signature the master prunes the
graph, places every node on a device of the cluster (unpinned nodes go to the
master task's default device), splits it into one partition per task with
``_Send``/``_Recv`` pairs on the edges between tasks, and registers each
partition with its task's worker. A step then runs every partition at once
and gathers the fetched tensors; the first failure aborts the step on every
task, so no partition waits forever on a tensor that will never come.

Requests: ``CreateSession`` (graph, config) → session_handle; ``ExtendSession``
(session_handle, graph); ``RunStep`` (session_handle, feeds, fetches, targets,
timeout, trace, want_route) + feed tensors → fetch tensors (with ``trace``, each partition's node
timings and the bytes sent between tasks; with ``want_route``, the ``route`` its client may use
to run the step's partitions on their tasks directly, see ``MasterSession._route``); ``CloseSession``; ``ListDevices``;
``Reset`` (containers). Read-only: ``GetPlacement`` (session_handle, feeds,
fetches, targets) → the node placement and the edges between tasks of that
step; ``GetClusterSpec`` → the cluster's job → task index → address.

Example:
    >>> # Used through a Server; see dtf_notebook.distributed.server.
"""

from __future__ import annotations

import contextlib
import itertools
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_EXCEPTION, Future, wait
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.distributed import wire
from dtf_notebook.distributed.client_watch import Silence, client_watch, inherited
from dtf_notebook.distributed.cluster_spec import ClusterSpec
from dtf_notebook.distributed.constant_copies import copy_small_constants
from dtf_notebook.distributed.control_edges import bypass_noops, hoist_target_noops
from dtf_notebook.distributed.peer_limits import PeerLedger, current_peer
from dtf_notebook.distributed.worker_service import task_of
from dtf_notebook.framework.device_spec import DeviceSpec
from dtf_notebook.framework.graph_import import import_graph_def
from dtf_notebook.placement.partition import partition
from dtf_notebook.placement.placer import place
from dtf_notebook.runtime.config import ConfigProto
from dtf_notebook.runtime.executor import needed_ops
from dtf_notebook.runtime.local_backend import placement_nodes

# Calls a task's worker: (task_name, method, header, tensors) -> Future of (reply_header, reply_tensors).
TaskCaller = Callable[[str, str, dict[str, Any], list[Any]], Future]
# Calls a task's worker from the event loop: (task_name, method, header, tensors, callback); the callback gets
# (reply_header, reply_tensors, error) on the loop.
LoopCaller = Callable[[str, str, dict[str, Any], list[Any], Callable[..., None]], None]

_FEED_PREFIX = "_dtf/feed/"
_EMPTY = np.empty(0, np.uint8)


class HeldTensor:
    """A large fetched value left on the task that computed it, for the client to take directly.

    Example:
        >>> held = HeldTensor("127.0.0.1:2223", "token-1")
        >>> held.address, held.token
        ('127.0.0.1:2223', 'token-1')
    """

    __slots__ = ("address", "token")

    def __init__(self, address: str, token: str) -> None:
        self.address, self.token = address, token


class _StepPlan:
    """What one signature needs at run time: a registered partition per task and how to route feeds/fetches.

    A plan's partitions stay registered while it is the signature's current plan or a step still runs it:
    ``users`` counts those steps, ``retired`` says a newer plan (or the session's close) replaced it.
    """

    def __init__(self) -> None:
        self.handles: dict[str, str] = {}  # task -> graph handle
        self.feeds: dict[str, list[tuple[int, str]]] = {}  # task -> [(feed index, placeholder tensor name)]
        self.fetches: dict[str, list[tuple[int, str]]] = {}  # task -> [(fetch index, tensor name)]
        self.targets: dict[str, list[str]] = {}  # task -> op names to run (sends and user targets)
        self.fed_fetches: list[tuple[int, int]] = []  # (fetch index, feed index) for fetched fed tensors
        self.fingerprint: tuple = ()  # the pruned nodes and their devices: equal fingerprints, equal partitions
        self.version = -1  # the graph version this plan was last checked against
        self.users = 0
        self.retired = False
        # What a client needs to run the plan's partitions directly (see MasterSession._route), or None.
        self.route: dict[str, Any] | None = None
        # Each task's partition as RunMetadata.partition_graphs shows it: its nodes' names, ops, devices, inputs.
        self.partition_graphs: list[dict[str, Any]] = []


class MasterSession:
    """One client session's graph, placement and compiled step plans.

    Example:
        >>> from dtf_notebook.distributed.server import Server
        >>> with Server.create_local_server() as server:
        ...     session = MasterSession(server.master, "doc-session", {"node": []}, ConfigProto())
        >>> session.tasks, [d["name"] for d in session.devices]
        (['/job:localhost/replica:0/task:0'], ['/job:localhost/replica:0/task:0/device:CPU:0'])
    """

    def __init__(self, master: MasterService, handle: str, graph_def: dict[str, Any], config: ConfigProto) -> None:
        self.master = master
        self.handle = handle
        self.config = config
        self.graph = import_graph_def(graph_def)
        self.tasks, self.devices, self.incarnations = master.discover(config)
        self._placed_version = -1
        self._placement: dict[str, str] = {}
        self._placement_errors: dict[str, str] = {}
        self._plans: dict[tuple, _StepPlan] = {}  # signature -> its current plan
        self._live: set[_StepPlan] = set()  # every plan whose partitions are registered
        self._closed = False
        self._running: dict[int, list[str]] = {}  # step id -> the tasks running its partitions
        self._tokens: dict[int, int] = {}  # a client's step token -> the id of the step running it (cancel_step)
        self._given_up: dict[int, float] = {}  # tokens a client gave up before their step started -> when
        self._lock = threading.Lock()  # compiling and extending
        self._refs = threading.Lock()  # the plan table, users and retirement
        self.last_used = time.monotonic()
        self.active = 0  # requests being served (an idle-session collector leaves these alone)
        self.peer: bytes | None = None  # the connection that opened it (None: this process), see PeerLedger

    def extend(self, graph_def: dict[str, Any]) -> None:
        with self._lock:
            self._check_open()
            import_graph_def(graph_def, graph=self.graph)

    def _check_open(self) -> None:
        if self._closed:
            raise errors.AbortedError(None, None, f"Session {self.handle} was closed")

    # ---- compiling a signature ------------------------------------------------------------------
    def _place(self) -> None:
        if self._placed_version == self.graph.version:
            return
        self._placement, self._placement_errors = place(
            placement_nodes(self.graph.get_operations()),
            [d["name"] for d in self.devices],
            default_job=self.master.job,
            default_task=self.master.task,
            allow_soft_placement=self.config.allow_soft_placement,
            state_task=self.master.state_task(self.tasks),
        )
        if self.config.log_device_placement:
            for op in self.graph.get_operations():
                if op.name in self._placement:
                    print(f"{op.name}: ({op.type}): {self._placement[op.name]}", flush=True)
        self._placed_version = self.graph.version

    def plan(self, feeds: list[str], fetches: list[str], targets: list[str]) -> _StepPlan:
        """The registered plan of this signature for the current graph, held for one step: call
        :meth:`release` once the step is done.

        A plan compiled for an older graph is kept when its pruned nodes and their devices did not change
        (the graph only grew elsewhere); otherwise a new plan is registered and the old one is deregistered
        as soon as no step runs it any more.
        """
        key = (tuple(feeds), tuple(fetches), tuple(targets))
        with self._refs:
            self._check_open()
            plan = self._plans.get(key)
            if plan is not None and plan.version == self.graph.version:
                plan.users += 1
                return plan
        with self._lock:
            self._check_open()
            with self._refs:
                old = self._plans.get(key)
            if old is not None and old.version == self.graph.version:
                new = old  # another step compiled it meanwhile
            else:
                new = self._compile(feeds, fetches, targets, old)
            replaced = old if old is not None and old is not new else None
            with self._refs:
                closed = self._closed
                if not closed:
                    new.users += 1
                    self._plans[key] = new
                    self._live.add(new)
                    if replaced is not None:
                        replaced.retired = True
                        if replaced.users:
                            replaced = None  # its last step deregisters it
        if closed:
            # The session closed while this plan was compiled (close() took care of the older ones).
            if new is not old:
                self._drop_handles(new.handles)
            self._check_open()
        if replaced is not None:
            self._deregister(replaced)
        return new

    def current_plan(self, feeds: list[str], fetches: list[str], targets: list[str]) -> _StepPlan | None:
        """The registered plan of this signature when it is current (held for one step, as :meth:`plan`), else
        None: compiling it would wait on other tasks, which the event loop must not."""
        with self._refs:
            plan = self._plans.get((tuple(feeds), tuple(fetches), tuple(targets)))
            if plan is None or self._closed or plan.version != self.graph.version:
                return None
            plan.users += 1
            return plan

    def release(self, plan: _StepPlan) -> None:
        """Ends one step's hold on ``plan``; a retired plan no step runs any more is deregistered."""
        with self._refs:
            plan.users -= 1
            done = plan.retired and plan.users == 0
        if done:
            self._deregister(plan)

    def _deregister(self, plan: _StepPlan) -> None:
        with self._refs:
            if plan not in self._live:
                return  # deregistered already
            self._live.discard(plan)
            closed = self._closed
        self._drop_handles(plan.handles, cancel=closed)

    def _drop_handles(self, handles: dict[str, str], cancel: bool = False) -> None:
        """Deregisters partitions; with ``cancel`` (the session closed) their tasks cancel the steps running them."""
        # Fire and forget: a task that is gone has nothing left to drop, and a restarted one never had it.
        for task, handle in handles.items():
            try:
                self.master.call(task, "DeregisterGraph", {"graph_handle": handle, "cancel": cancel}, [])
            except errors.OpError:
                pass

    def _lookup(self, feeds: list[str], fetches: list[str], targets: list[str]) -> tuple[list, list, list]:
        graph = self.graph
        try:
            feed_tensors = [graph.get_tensor_by_name(n) for n in feeds]
            fetch_tensors = [graph.get_tensor_by_name(n) for n in fetches]
            target_ops = [graph.get_operation_by_name(n) for n in targets]
        except (KeyError, ValueError) as e:
            raise errors.InvalidArgumentError(None, None, str(e)) from None
        return feed_tensors, fetch_tensors, target_ops

    def _compile(self, feeds: list[str], fetches: list[str], targets: list[str], old: _StepPlan | None) -> _StepPlan:
        """Compiles and registers a plan of this signature, or returns ``old`` (updated to the current graph
        version) when the pruned graph and its placement are unchanged."""
        feed_tensors, fetch_tensors, target_ops = self._lookup(feeds, fetches, targets)
        self._place()
        fed = set(feed_tensors)
        roots = [t.op for t in fetch_tensors if t not in fed] + target_ops
        ops = needed_ops(roots, fed)
        for op in ops:
            if op.name in self._placement_errors:
                raise errors.InvalidArgumentError(op.node_def, op, self._placement_errors[op.name])
        plan = _StepPlan()
        placement = self._fold_constants(ops)
        nodes, placement, output_types = self._node_data(ops, fed, feed_tensors, plan, placement)
        # A graph only grows (extending never changes a node), so the same nodes on the same devices make the
        # same partitions: then the old plan's registered partitions serve the new graph version too.
        plan.fingerprint = (tuple(op.name for op in ops), tuple(sorted(placement.items())))
        plan.version = self.graph.version
        if old is not None and old.fingerprint == plan.fingerprint:
            old.version = plan.version
            return old
        # Fewer messages per step (as TF's Grappler and partitioner spare them): NoOps that only order other ops
        # bypassed, a targeted NoOp grouping other tasks' ops replaced by them, small constants copied to readers.
        fetched = {t.op.name for t in fetch_tensors}
        target_names = [op.name for op in target_ops]
        nodes = bypass_noops(nodes, placement, fetched | set(target_names))
        nodes, target_names = hoist_target_noops(nodes, placement, target_names)
        nodes = copy_small_constants(nodes, placement, output_types, fetched | set(target_names))
        parts = partition(nodes, placement, output_types)
        for index, tensor in enumerate(fetch_tensors):
            if tensor in fed:
                plan.fed_fetches.append((index, feed_tensors.index(tensor)))
            else:
                task = task_of(placement[tensor.op.name])
                plan.fetches.setdefault(task, []).append((index, tensor.name))
        for name in target_names:
            plan.targets.setdefault(task_of(placement[name]), []).append(name)
        # partition() cuts every task's list from this one global order (sends right after their producer,
        # receives right before their first consumer), which is what rules out cross-task waits.
        for task, part in parts.items():
            plan.targets.setdefault(task, []).extend(n["name"] for n in part if n["op"] == "_Send")
        plan.partition_graphs = [
            {"node": [{k: n[k] for k in ("name", "op", "device", "input") if k in n} for n in part]}
            for _, part in sorted(parts.items())
        ]
        try:
            for task, part in parts.items():
                plain, tensors = wire.encode_graph_def({"node": part})
                reply, _ = self.master.call(
                    task,
                    "RegisterGraph",
                    {"graph": plain, "session": self.handle, "isolate": bool(self.config.isolate_session_state)},
                    tensors,
                ).result()
                plan.handles[task] = reply["graph_handle"]
        except BaseException:
            self._drop_handles(plan.handles)  # the partitions registered before the failure
            raise
        plan.route = self._route(plan)
        return plan

    def _route(self, plan: _StepPlan) -> dict[str, Any] | None:
        """How a client may run ``plan`` without this master (None when it may not): for a plan of one partition,
        its task's address (None: this master's own), graph handle and incarnation, and where feeds and fetches go;
        for several partitions, ``{"parts": [...]}`` with one such route per task, all run at once under one step id.

        The master stays in charge of the session: closing it deregisters the partitions with ``cancel``, so the
        tasks cancel the client's steps still running there. Every partition pings this master while it waits for
        a tensor, as in a step the master runs, and a client that fails or gives up aborts the step on every task as
        the master would. With ``session_gc_secs`` every step goes through the master, which must see the session in
        use to keep it.
        """
        if not plan.handles or plan.fed_fetches or self.master.session_gc_secs > 0:
            return None  # (a fed value fetched back is a copy through the master, never the caller's own object)
        parts = [
            {
                "task": task,
                "address": None if task == self.master.task_name else self.master.task_address(task),
                "graph_handle": handle,
                "incarnation": self.incarnations.get(task),
                "master": self.master.address,
                "master_incarnation": self.master.incarnation,
                "feeds": [list(f) for f in plan.feeds.get(task, [])],
                "fetches": [list(f) for f in plan.fetches.get(task, [])],
                "targets": list(plan.targets.get(task, [])),
            }
            for task, handle in plan.handles.items()
        ]
        return parts[0] if len(parts) == 1 else {"parts": parts}

    def route(self, feeds: list[str], fetches: list[str], targets: list[str]) -> dict[str, Any] | None:
        """The route of this signature's current plan (see :meth:`_route`), None when it has none or no plan."""
        with self._refs:
            plan = self._plans.get((tuple(feeds), tuple(fetches), tuple(targets)))
            return None if plan is None or self._closed else plan.route

    def _fold_constants(self, ops: list[Any]) -> dict[str, str]:
        """Placement of ``ops``, with unpinned small constants moved to the task that uses them.

        Shipping a constant costs a message per step; keeping a copy where it is consumed costs nothing
        (TF does the same).
        """
        placement = {op.name: self._placement[op.name] for op in ops}
        needed = set(ops)
        for op in ops:
            if op.type != "Const" or op.device or "_class" in op.attrs or op.get_attr("value").size > 1024:
                continue
            readers = [c for t in op.outputs for c in t.consumers()] + list(op._control_outputs)
            devices = {placement[c.name] for c in readers if c in needed}
            if len(devices) == 1:
                placement[op.name] = devices.pop()
        return placement

    def _node_data(self, ops, fed, feed_tensors, plan, placement):
        output_types = {op.name: [(t.dtype.name, t.shape.as_tuple()) for t in op.outputs] for op in ops}
        nodes = []
        feed_index = {t: i for i, t in enumerate(feed_tensors)}
        feed_nodes: dict[tuple[Any, str], str] = {}
        for op in ops:
            node = op.node_def
            task = task_of(placement[op.name])
            inputs = []
            for t, ref in zip(op.inputs, node["input"]):
                if t in fed:
                    key = (t, task)
                    name = feed_nodes.get(key)
                    if name is None:
                        name = f"{_FEED_PREFIX}{len(feed_nodes)}/{t.op.name}_{t.value_index}"
                        feed_nodes[key] = name
                        nodes.append(
                            {
                                "name": name,
                                "op": "Placeholder",
                                "input": [],
                                "device": "",
                                "attr": {"dtype": t.dtype, "shape": t.shape.as_tuple()},
                            }
                        )
                        placement[name] = placement[op.name]
                        output_types[name] = [(t.dtype.name, t.shape.as_tuple())]
                        plan.feeds.setdefault(task, []).append((feed_index[t], name + ":0"))
                    inputs.append(name + ":0")
                else:
                    inputs.append(ref)
            node["input"] = inputs + node["input"][len(op.inputs) :]
            nodes.append(node)
        return nodes, placement, output_types

    # ---- describing a step's placement (read-only: nothing is registered) ------------------------
    def placement(self, feeds: list[str], fetches: list[str], targets: list[str]) -> dict[str, Any]:
        """Where a step of this signature runs each node, and the tensors it moves between tasks.

        Returns ``{"nodes": [...], "transfers": [...]}``. A node row has ``name``, ``op``, ``requested`` (the
        device as written), ``device`` (assigned; small constants already moved to their consumer's task)
        or, when it cannot be placed, ``error``. A transfer row is one ``_Send``/``_Recv`` pair: ``src``,
        ``output`` (-1 for a control edge), ``dst`` (the consumers), ``tensor_name``, ``send_device``,
        ``recv_device``, ``dtype`` and ``shape``; there are none while some node cannot be placed. With no
        fetches and no targets, every node of the graph is described.
        """
        with self._lock:
            feed_tensors, fetch_tensors, target_ops = self._lookup(feeds, fetches, targets)
            self._place()
            fed = set(feed_tensors)
            roots = [t.op for t in fetch_tensors if t not in fed] + target_ops
            ops = needed_ops(roots, fed) if fetches or targets else self.graph.get_operations()
            failed = {op.name: self._placement_errors[op.name] for op in ops if op.name in self._placement_errors}
            transfers: list[dict[str, Any]] = []
            if failed:
                placement = self._placement
            else:
                placement = self._fold_constants(ops)
                nodes, placement, output_types = self._node_data(ops, fed, feed_tensors, _StepPlan(), placement)
                transfers = _transfers(partition(nodes, placement, output_types), {op.name for op in ops})
        rows = []
        for op in ops:
            row = {"name": op.name, "op": op.type, "requested": op.device, "device": placement.get(op.name, "")}
            if op.name in failed:
                row["error"] = failed[op.name]
            rows.append(row)
        return {"nodes": rows, "transfers": transfers}

    # ---- running a step -------------------------------------------------------------------------
    def run(
        self,
        feeds: list[str],
        fetches: list[str],
        targets: list[str],
        values: list[Any],
        timeout: float | None,
        direct_fetch: bool = False,
        traces: list[dict[str, Any]] | None = None,
        graphs: list[dict[str, Any]] | None = None,
        watch: Callable[[], None] | None = None,
        token: int | None = None,
    ) -> list[Any]:
        """Runs one step; with ``direct_fetch`` large fetched values stay on their task as :class:`HeldTensor`.

        With ``traces`` (a list) every partition is traced and its worker's trace (``nodes``, ``sent``) appended;
        with ``graphs`` (a list) each task's partition graph is appended (``RunOptions.output_partition_graphs``).
        ``watch`` (see :mod:`.client_watch`) is called every second while the partitions run; what it raises
        aborts the step. ``token``: the client's name for the step (see :meth:`cancel_step`).
        """
        plan = self.plan(feeds, fetches, targets)
        if graphs is not None:  # (copies: the caller's RunMetadata may be changed, the plan's must not)
            graphs.extend({"node": [dict(n) for n in g["node"]]} for g in plan.partition_graphs)
        try:
            return self._run_plan(plan, fetches, values, timeout, direct_fetch, traces, watch, token)
        finally:
            self.release(plan)

    def _run_plan(
        self,
        plan: _StepPlan,
        fetches: list[str],
        values: list[Any],
        timeout: float | None,
        direct_fetch: bool,
        traces: list[dict[str, Any]] | None,
        watch: Callable[[], None] | None = None,
        token: int | None = None,
    ) -> list[Any]:
        with self._running_step(plan, token) as step_id:
            deadline = None if timeout is None else time.monotonic() + timeout
            requests = {
                task: self._run_graph_request(plan, task, step_id, values, timeout, direct_fetch)
                for task in plan.handles
            }
            if traces is not None:
                for header, _ in requests.values():
                    header["trace"] = True
            results: list[Any] = [None] * len(fetches)
            if len(requests) == 1:
                # One partition: call it from this thread (no fan-out, nothing to abort elsewhere).
                ((task, (header, tensors)),) = requests.items()
                if watch is None or self.master.task_address(task) == self.master.address:
                    # This task's own partition runs in this very thread: it watches the client itself.
                    inheriting = inherited.set(watch)
                    try:
                        reply, out = self.master.call_sync(task, "RunGraph", header, tensors, timeout)
                    finally:
                        inherited.reset(inheriting)
                else:
                    reply, out = self._call_watched(step_id, task, header, tensors, timeout, watch)
                self._check_incarnation(task, reply)
                self._collect(plan, task, reply, out, results, traces)
            else:
                self._run_partitions(plan, step_id, requests, deadline, timeout, results, traces, watch)
            for index, feed_index in plan.fed_fetches:
                results[index] = values[feed_index]
            return results

    @contextlib.contextmanager
    def _running_step(self, plan: _StepPlan, token: int | None = None) -> Iterator[int]:
        """A new step id, known as running (on ``plan``'s tasks) until the block ends, so close() can cancel it,
        and so can its client by ``token`` (see :meth:`cancel_step`)."""
        step_id = secrets.randbits(62)
        with self._refs:
            if self._closed:
                raise errors.CancelledError(None, None, f"Session {self.handle} was closed")
            self._start_step(step_id, plan, token)
        try:
            yield step_id
        finally:
            with self._refs:
                self._running.pop(step_id, None)
                self._tokens.pop(token, None)

    def _start_step(self, step_id: int, plan: _StepPlan, token: int | None) -> None:
        """Counts step ``step_id`` as running (hold ``_refs``); raises when its client gave it up already."""
        if token is not None:
            if self._given_up.pop(token, None) is not None:
                raise errors.CancelledError(None, None, _GAVE_UP)
            self._tokens[token] = step_id
        self._running[step_id] = list(plan.handles)

    def cancel_step(self, token: int) -> None:
        """Aborts the step a client sent with ``step_token`` ``token`` on every task (the client gave it up: an
        interrupt, its own deadline), so nothing of it goes on waiting, for a queue's element say; a step not started
        yet fails as it starts (for a minute). Unknown tokens (a step already over) cost a minute's entry."""
        now = time.monotonic()
        with self._refs:
            step_id = self._tokens.get(token)
            tasks = self._running.get(step_id, []) if step_id is not None else []
            if step_id is None:
                recent = {t: when for t, when in self._given_up.items() if now - when < 60.0}
                self._given_up = dict(list(recent.items())[-999:])  # bounded, whatever a client sends
                self._given_up[token] = now
        if tasks:
            self._abort(step_id, errors.CancelledError(None, None, _GAVE_UP), tasks)

    def _run_graph_request(
        self, plan: _StepPlan, task: str, step_id: int, values: list[Any], timeout: float | None, direct_fetch: bool
    ) -> tuple[dict[str, Any], list[Any]]:
        task_feeds = plan.feeds.get(task, [])
        header = {
            "graph_handle": plan.handles[task],
            "step_id": step_id,
            "feeds": [name for _, name in task_feeds],
            "fetches": [name for _, name in plan.fetches.get(task, [])],
            "targets": plan.targets.get(task, []),
            "timeout": timeout,
            "master": self.master.address,
            "master_incarnation": self.master.incarnation,
            "direct_fetch": direct_fetch,
        }
        return header, [values[i] for i, _ in task_feeds]

    @staticmethod
    def _collect(
        plan: _StepPlan,
        task: str,
        reply: dict[str, Any],
        tensors: list[Any],
        results: list[Any],
        traces: list[dict[str, Any]] | None = None,
    ) -> None:
        if traces is not None and isinstance(reply.get("trace"), dict):
            traces.append(reply["trace"])
        fetches = plan.fetches.get(task, [])
        for (index, _), value in zip(fetches, tensors):
            results[index] = value
        for position, token in reply.get("held") or []:
            results[fetches[position][0]] = HeldTensor(reply["held_at"], token)

    def _run_partitions(
        self,
        plan: _StepPlan,
        step_id: int,
        requests: dict[str, tuple[dict[str, Any], list[Any]]],
        deadline: float | None,
        timeout: float | None,
        results: list[Any],
        traces: list[dict[str, Any]] | None = None,
        watch: Callable[[], None] | None = None,
    ) -> None:
        """Runs every partition at once; the first failure (or what ``watch``, called every second, raises) aborts
        the step on every task, then is raised."""
        calls = {task: self.master.call(task, "RunGraph", *request) for task, request in requests.items()}
        first_error: errors.OpError | None = None
        task_of_future = {future: task for task, future in calls.items()}
        pending = set(task_of_future)
        while pending:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            if watch is not None:
                remaining = 1.0 if remaining is None else min(remaining, 1.0)
            done, pending = wait(pending, timeout=remaining, return_when=FIRST_EXCEPTION)
            if not done and watch is not None and (deadline is None or time.monotonic() < deadline):
                try:
                    watch()
                except errors.OpError as e:
                    first_error = first_error or e
                    self._abort(step_id, first_error, calls)
                    break
                continue
            if not done:
                waiting = sorted(task_of_future[f] for f in pending)
                first_error = first_error or errors.DeadlineExceededError(
                    None, None, f"Step timed out after {timeout:.3g} s waiting for {waiting}"
                )
                self._abort(step_id, first_error, calls)
                break
            for future in done:
                task = task_of_future[future]
                try:
                    reply, tensors = future.result()
                    self._check_incarnation(task, reply)
                except errors.OpError as e:
                    if first_error is None:
                        first_error = e
                        self._abort(step_id, e, calls)
                    continue
                self._collect(plan, task, reply, tensors, results, traces)
        if first_error is not None:
            raise first_error

    def _call_watched(
        self,
        step_id: int,
        task: str,
        header: dict[str, Any],
        tensors: list[Any],
        timeout: float | None,
        watch: Callable[[], None],
    ) -> tuple[dict[str, Any], list[Any]]:
        """``call_sync`` of a step's one partition on another task that calls ``watch`` every second while it runs;
        what ``watch`` raises aborts the partition and is raised. As with ``call_sync``, the task's own deadline
        ends the step, given 5 s more to report it (its error names what it waited for)."""
        future = self.master.call(task, "RunGraph", header, tensors)
        give_up = None if timeout is None else time.monotonic() + timeout + 5.0
        while True:
            left = 1.0 if give_up is None else min(1.0, give_up - time.monotonic())
            try:
                return future.result(max(0.0, left))
            except TimeoutError:
                pass
            try:
                if give_up is not None and time.monotonic() >= give_up:
                    raise errors.DeadlineExceededError(
                        None, None, f"RunGraph to {task} timed out: no answer {timeout:g} s + 5 s after it was sent"
                    )
                watch()
            except errors.OpError as e:
                self._abort(step_id, e, [task])
                raise

    def _check_incarnation(self, task: str, reply: dict[str, Any]) -> None:
        seen = reply.get("incarnation")
        if seen is not None and self.incarnations.get(task) not in (None, seen):
            raise errors.AbortedError(
                None, None, f"Task {task} restarted since this session was created; its state was lost"
            )

    def _abort(self, step_id: int, error: errors.OpError, calls: Iterable[str]) -> None:
        """Aborts step ``step_id`` with ``error`` on the tasks ``calls`` names (its keys, for a dict of calls)."""
        message = {"step_id": step_id, "error": wire.encode_error(error)}
        for task in calls:
            self.master.call(task, "AbortStep", message, [])  # fire and forget: a gone task needs no telling

    def close(self) -> None:
        """Cancels the session's running steps (``CancelledError`` on every task, as TF1's close does) and
        deregisters every partition this session registered (those of running steps when they end)."""
        with self._refs:
            running = dict(self._running)
        cancelled = errors.CancelledError(None, None, f"Session {self.handle} was closed while this step ran")
        for step_id, tasks in running.items():
            self._abort(step_id, cancelled, tasks)
        with self._refs:
            self._closed = True
            self._plans.clear()
            idle = []
            for plan in self._live:
                plan.retired = True
                if not plan.users:
                    idle.append(plan)
        for plan in idle:
            self._deregister(plan)
        # The tasks drop the session's private state (isolated variables, unnamed queues) once its last
        # partition is deregistered; fire and forget: a gone task has nothing left to drop.
        for task in self.tasks:
            self.master.call(task, "ForgetSession", {"session": self.handle}, [])


class MasterService:
    """Creates and runs sessions for clients.

    Args:
        cluster: The cluster this master coordinates.
        job, task: The master's own task (default device of unpinned ops).
        call: How to reach a task's worker service.
        session_gc_secs: :meth:`collect_idle` closes sessions unused for this long (0: never, as in TF,
            whose gRPC servers never collect sessions either).
        ledger: Counts the sessions each peer has open, refusing those over its cap (shared with the server's
            socket, which counts requests in flight).

    Example:
        >>> cluster = ClusterSpec({"ps": ["127.0.0.1:2222"], "worker": ["127.0.0.1:2223"]})
        >>> master = MasterService(cluster, "worker", 0, call=None)  # reaches no task until a request needs one
        >>> master.state_task(["/job:worker/replica:0/task:0", "/job:ps/replica:0/task:0"])
        ('ps', 0)
    """

    def __init__(
        self,
        cluster: ClusterSpec,
        job: str,
        task: int,
        call: TaskCaller,
        call_sync: Any = None,
        session_gc_secs: float = 0.0,
        ledger: PeerLedger | None = None,
        client_silence: Silence | None = None,
    ) -> None:
        self.cluster = cluster
        # Seconds since a connection was last heard from: a step whose client went silent is given up.
        self.client_silence = client_silence
        self._addresses: tuple[ClusterSpec, dict[str, str]] = (cluster, {})  # see task_address
        self.ledger = ledger or PeerLedger()
        self.session_gc_secs = session_gc_secs
        self.job, self.task = job, task
        self.task_name = f"/job:{job}/replica:0/task:{task}"  # this master's own task
        self.call = call
        self.address = ""  # set by the Server once bound: workers check this master is alive during long steps
        self.incarnation: int | None = None  # the Server's, once bound: a restarted master is not a step's master
        # (task, method, header, tensors, timeout) -> reply, run in the calling thread.
        self.call_sync = call_sync or (lambda t, m, h, x, timeout: call(t, m, h, x).result(timeout))
        self._sessions: dict[str, MasterSession] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def task_address(self, task: str) -> str:
        """The address of ``task`` (``/job:J/replica:0/task:I``) in this master's cluster.

        Example:
            >>> MasterService(ClusterSpec({"ps": ["127.0.0.1:2222"]}), "ps", 0, call=None).task_address(
            ...     "/job:ps/replica:0/task:0")
            '127.0.0.1:2222'
        """
        cluster, known = self._addresses
        if cluster is not self.cluster:  # the Server rewrote its own address once bound
            cluster, known = self._addresses = (self.cluster, {})
        address = known.get(task)
        if address is None:  # parsed once per task: every message of a step asks
            parts = dict(p.split(":", 1) for p in task.strip("/").split("/"))
            address = known[task] = cluster.task_address(parts["job"], int(parts["task"]))
        return address

    def state_task(self, tasks: list[str]) -> tuple[str, int]:
        """Where unpinned variables live: ps task 0 if the session sees a ps job, else its first task.

        Every master computes the same answer, so clients connected to different tasks share state.
        """
        specs = [DeviceSpec.from_string(t) for t in tasks]
        ps = [s for s in specs if s.job == "ps"]
        first = min(ps or specs, key=lambda s: (s.job, s.task))
        return first.job, first.task

    def discover(self, config: ConfigProto) -> tuple[list[str], list[dict[str, Any]], dict[str, int]]:
        """Asks every task allowed by ``config.device_filters`` for its devices, waiting a bounded time.

        Raises:
            UnavailableError: some tasks did not answer within ``config.cluster_wait_secs``; names them.
        """
        tasks = [t for t in _all_tasks(self.cluster) if _allowed(t, config.device_filters)]
        own = self.task_name
        if own not in tasks:
            tasks.append(own)
        deadline = time.monotonic() + config.cluster_wait_secs
        answers: dict[str, dict[str, Any]] = {}
        while True:
            calls = {t: self.call(t, "GetStatus", {}, []) for t in tasks if t not in answers}
            for task, future in calls.items():
                try:
                    answers[task] = future.result(max(0.05, deadline - time.monotonic()))[0]
                except (errors.OpError, TimeoutError):
                    pass
            missing = [t for t in tasks if t not in answers]
            if not missing:
                break
            if time.monotonic() >= deadline:
                raise errors.UnavailableError(
                    None,
                    None,
                    f"Could not create a session: {len(missing)} task(s) did not answer within "
                    f"{config.cluster_wait_secs:g} s: {', '.join(missing)}",
                )
            time.sleep(0.1)
        devices = [d for t in tasks for d in answers[t]["devices"]]
        incarnations = {t: answers[t].get("incarnation") for t in tasks}
        return tasks, devices, incarnations

    def handle(self, method: str, header: dict[str, Any], tensors: list[Any]) -> tuple[dict[str, Any], list[Any]]:
        """Serves one master request."""
        if method == "CreateSession":
            config = ConfigProto.from_dict(header.get("config") or {})
            graph_def = wire.decode_graph_def(header.get("graph") or {"node": []}, tensors)
            # Unguessable, so that no peer runs or closes another's session by guessing its handle.
            handle = f"{self.task_name}/session/{next(self._ids)}-{secrets.token_hex(8)}"
            peer = current_peer.get()
            self.ledger.open_session(peer)
            try:
                session = MasterSession(self, handle, graph_def, config)
            except BaseException:
                self.ledger.close_session(peer)
                raise
            session.peer = peer
            with self._lock:
                self._sessions[handle] = session
            return {"session_handle": handle}, []
        if method == "ListDevices":
            config = ConfigProto.from_dict(header.get("config") or {})
            _, devices, _ = self.discover(config)
            return {"devices": devices}, []
        if method == "GetClusterSpec":
            cluster = self.cluster
            jobs = {
                job: {str(i): cluster.task_address(job, i) for i in cluster.task_indices(job)} for job in cluster.jobs
            }
            return {"cluster": jobs}, []
        if method == "Reset":
            # As in TF1: every session of this master is closed (their next run is an AbortedError), then the
            # containers are cleared on every task.
            self.close_all()
            containers = header.get("containers")
            cleared: list[str] = []
            for task in _all_tasks(self.cluster):
                reply, _ = self.call(task, "CleanupContainers", {"containers": containers}, []).result(30)
                cleared += [f"{task}:{name}" for name in reply.get("cleared", [])]
            return {"cleared": cleared}, []
        session = self._session(header)
        try:
            return self._handle_session(session, method, header, tensors)
        finally:
            self._idle(session)

    def start_run_step(
        self,
        header: dict[str, Any],
        tensors: list[Any],
        reply: Any,
        call: LoopCaller,
        loop: Any,
        hold_sends: Callable[[int], contextlib.AbstractContextManager[dict[str, Any]]],
    ) -> bool:
        """Serves a ``RunStep`` on the event loop ``loop`` (a ServiceSocket), answering through ``reply``; False
        leaves it to a thread (see :meth:`handle`).

        A step whose plan is compiled and current runs here: its ``RunGraph`` requests go out through ``call``
        (which answers on the loop), and their replies are gathered as they come, so the master never holds a
        thread while its partitions run. Compiling a plan waits on other tasks, and a traced step gathers more:
        those run on a thread. This task's own partition starts first, up to its first wait, inside
        ``hold_sends(step_id)`` (a context manager holding what this task's partitions push to other tasks, by task),
        and what it pushed travels in the other tasks' ``RunGraph`` requests.
        """
        if header.get("trace") or header.get("partition_graphs"):
            return False
        names = [header.get(k) or [] for k in ("feeds", "fetches", "targets")]
        if not all(isinstance(n, list) and all(isinstance(x, str) for x in n) for n in names):
            return False
        timeout = header.get("timeout")
        if timeout is not None and not isinstance(timeout, int | float):
            return False
        try:
            watch = client_watch(header, current_peer.get(), self.client_silence)
            token = _step_token(header)
        except errors.OpError:
            return False  # a thread reports it
        handle = header.get("session_handle")
        with self._lock:
            session = self._sessions.get(handle) if isinstance(handle, str) else None
            if session is not None:
                session.active += 1
        if session is None:
            return False
        plan = session.current_plan(*names)
        if plan is None:
            self._idle(session)
            return False
        step = _LoopStep(self, session, plan, names[1], tensors, timeout, bool(header.get("direct_fetch")), reply)
        step.want_route = bool(header.get("want_route"))
        step.watch, step.token = watch, token
        step.start(call, loop, hold_sends)
        return True

    def _idle(self, session: MasterSession) -> None:
        """A request on ``session`` ended (see :meth:`_session`)."""
        with self._lock:
            session.active -= 1
            session.last_used = time.monotonic()

    def _handle_session(
        self, session: MasterSession, method: str, header: dict[str, Any], tensors: list[Any]
    ) -> tuple[dict[str, Any], list[Any]]:
        if method == "ExtendSession":
            session.extend(wire.decode_graph_def(header.get("graph") or {"node": []}, tensors))
            return {}, []
        if method == "RunStep":
            timeout = header.get("timeout")
            watch = client_watch(header, current_peer.get(), self.client_silence)
            token = _step_token(header)
            traces: list[dict[str, Any]] | None = [] if header.get("trace") else None
            graphs: list[dict[str, Any]] | None = [] if header.get("partition_graphs") else None
            results = session.run(
                list(header.get("feeds") or []),
                list(header.get("fetches") or []),
                list(header.get("targets") or []),
                tensors,
                None if timeout is None else float(timeout),
                direct_fetch=bool(header.get("direct_fetch")),
                traces=traces,
                graphs=graphs,
                watch=watch,
                token=token,
            )
            reply, out = _step_reply(results)
            if graphs is not None:
                reply["partition_graphs"] = graphs
            if header.get("want_route"):
                route = session.route(*(list(header.get(k) or []) for k in ("feeds", "fetches", "targets")))
                if route is not None:
                    reply["route"] = route
            if traces is not None:
                reply["trace"] = {
                    "nodes": [row for t in traces for row in t.get("nodes", [])],
                    "sent": [row for t in traces for row in t.get("sent", [])],
                }
            return reply, out
        if method == "CancelStep":
            token = _step_token(header)
            if token is None:
                raise errors.InvalidArgumentError(None, None, "CancelStep needs the step_token of the step to cancel")
            session.cancel_step(token)
            return {}, []
        if method == "GetPlacement":
            names = [list(header.get(k) or []) for k in ("feeds", "fetches", "targets")]
            return session.placement(*names), []
        if method == "CloseSession":
            self._drop(session)
            return {}, []
        raise errors.UnimplementedError(None, None, f"Unknown master method {method!r}")

    def _session(self, header: dict[str, Any]) -> MasterSession:
        """The session a request names, counted as active until the request is served."""
        handle = header.get("session_handle")
        with self._lock:
            session = self._sessions.get(handle) if isinstance(handle, str) else None
            if session is not None:
                session.active += 1
        if session is None:
            raise errors.AbortedError(
                None,
                None,
                f"Session {handle!r} is not known to this master (it was closed, reset by Session.reset, "
                "collected after being idle, or the master restarted)",
            )
        return session

    def collect_idle(self, now: float | None = None) -> list[str]:
        """Closes the sessions no request used for ``session_gc_secs`` seconds (their client probably died
        without closing them) and returns their handles; does nothing when ``session_gc_secs`` is 0.

        A session serving a request (a long step included) is never idle.

        Example:
            >>> master = MasterService(ClusterSpec({"local": ["127.0.0.1:0"]}), "local", 0, call=None,
            ...                        session_gc_secs=60.0)
            >>> master.collect_idle()   # no sessions yet
            []
        """
        if self.session_gc_secs <= 0:
            return []
        now = time.monotonic() if now is None else now
        with self._lock:
            idle = [s for s in self._sessions.values() if not s.active and now - s.last_used > self.session_gc_secs]
        for session in idle:
            self._drop(session)
        return [s.handle for s in idle]

    def _drop(self, session: MasterSession) -> None:
        """Forgets and closes a session (once, whoever asks first), and stops counting it for its peer."""
        with self._lock:
            known = self._sessions.pop(session.handle, None) is session
        if known:
            self.ledger.close_session(session.peer)
        session.close()

    def close_all(self) -> None:
        """Closes every session (the server is stopping)."""
        with self._lock:
            sessions = list(self._sessions.values())
        for session in sessions:
            self._drop(session)


_GAVE_UP = "The client gave this step up (it was interrupted, or stopped waiting)"


def _step_token(header: dict[str, Any]) -> int | None:
    """A request's ``step_token`` (a client's name for its step, see ``MasterSession.cancel_step``), None if none."""
    token = header.get("step_token")
    if token is not None and (type(token) is not int or not 0 <= token < 1 << 63):
        raise errors.InvalidArgumentError(None, None, f"step_token must be an integer in [0, 2**63), got {token!r:.40}")
    return token


def _step_reply(results: list[Any]) -> tuple[dict[str, Any], list[Any]]:
    """The ``RunStep`` reply for a step's fetched values: large ones held on their task are named in ``held``."""
    held = [[i, r.address, r.token] for i, r in enumerate(results) if isinstance(r, HeldTensor)]
    return {"held": held}, [_EMPTY if isinstance(r, HeldTensor) else r for r in results]


class _LoopStep:
    """A step served on the master's event loop (see :meth:`MasterService.start_run_step`): its partitions' replies
    are gathered as they arrive; the first failure aborts the step on every task, and the step answers once all
    partitions have (or at once when its deadline passes)."""

    def __init__(self, master, session, plan, fetches, values, timeout, direct_fetch, reply) -> None:
        self.master, self.session, self.plan = master, session, plan
        self.values, self.timeout, self.direct_fetch, self.reply = values, timeout, direct_fetch, reply
        self.results: list[Any] = [None] * len(fetches)
        self.pending: set[str] = set()
        self.error: errors.OpError | None = None
        self.finished = False
        self.step_id = 0
        self.want_route = False  # the client asked how to run this signature directly (see MasterSession._route)
        self.watch: Callable[[], None] | None = None  # raises once the step's client went silent (.client_watch)
        self.token: int | None = None  # the client's name for the step (MasterSession.cancel_step)

    def start(
        self,
        call: LoopCaller,
        loop: Any,
        hold_sends: Callable[[int], contextlib.AbstractContextManager[dict[str, Any]]],
    ) -> None:
        session, plan = self.session, self.plan
        self.step_id = step_id = secrets.randbits(62)
        with session._refs:
            closed = session._closed
            if not closed:
                try:
                    session._start_step(step_id, plan, self.token)
                except errors.OpError as e:
                    self.error = e  # its client gave it up before it started
        if closed:
            self.error = errors.CancelledError(None, None, f"Session {session.handle} was closed")
        if self.error is not None:
            self._finish()
            return
        timeout = None if self.timeout is None else float(self.timeout)
        own = self.master.task_name
        others = [task for task in plan.handles if task != own]
        self.pending = set(plan.handles)
        if timeout is not None:
            loop.call_later(timeout, self._timed_out)
        if self.watch is not None:
            loop.call_later(1.0, lambda: self._watch_client(loop))
        held: dict[str, Any] = {}
        if own in plan.handles:
            # This task's partition first, up to its first wait (it runs on this loop, or is handed to a thread):
            # the tensors it pushes by then go in their receivers' RunGraph requests, one message instead of two.
            with hold_sends(step_id) as held:
                self._run_graph(call, own, timeout, None)
        for task in others:
            if self.finished or self.error is not None:
                self.pending.discard(task)  # the step failed before this task got its partition
                continue
            self._run_graph(call, task, timeout, held.get(task))
        if not self.pending and not self.finished:
            self._finish()

    def _run_graph(self, call: LoopCaller, task: str, timeout: float | None, sent: Any) -> None:
        header, tensors = self.session._run_graph_request(
            self.plan, task, self.step_id, self.values, timeout, self.direct_fetch
        )
        if sent:
            keys, dead_keys, values = sent
            header = {**header, "sent_keys": keys, "sent_dead_keys": dead_keys}
            tensors = [*tensors, *values]
        call(task, "RunGraph", header, tensors, lambda h, t, e: self._done(task, h, t, e))

    def _done(self, task: str, header: Any, tensors: list[Any], error: errors.OpError | None) -> None:
        if self.finished:
            return
        self.pending.discard(task)
        if error is None:
            try:
                self.session._check_incarnation(task, header)
            except errors.OpError as e:
                error = e
        if error is not None:
            if self.error is None:
                self.error = error
                self.session._abort(self.step_id, error, self.plan.handles)
        else:
            self.session._collect(self.plan, task, header, tensors, self.results)
        if not self.pending:
            self._finish()

    def _watch_client(self, loop: Any) -> None:
        if self.finished:
            return
        try:
            self.watch()
        except errors.OpError as e:
            self._give_up(e)
            return
        loop.call_later(1.0, lambda: self._watch_client(loop))

    def _timed_out(self) -> None:
        if self.finished:
            return
        waiting = sorted(self.pending)
        self._give_up(
            errors.DeadlineExceededError(None, None, f"Step timed out after {self.timeout:.3g} s waiting for {waiting}")
        )

    def _give_up(self, error: errors.OpError) -> None:
        """Ends the step at once with ``error``, aborting its partitions on every task."""
        if self.error is None:
            self.error = error
            self.session._abort(self.step_id, error, self.plan.handles)
        self._finish()

    def _finish(self) -> None:
        self.finished = True
        session = self.session
        with session._refs:
            session._running.pop(self.step_id, None)
            session._tokens.pop(self.token, None)
        try:
            session.release(self.plan)
        finally:
            self.master._idle(session)
        if self.error is not None:
            self.values = self.results = []  # a timer may hold the step a while longer (its deadline, its client watch)
            self.reply.fail(self.error)
            return
        for index, feed_index in self.plan.fed_fetches:
            self.results[index] = self.values[feed_index]
        header, tensors = _step_reply(self.results)
        if self.want_route and self.plan.route is not None and not self.plan.retired:
            header["route"] = self.plan.route
        self.values = self.results = []
        self.reply.ok(header, tensors)


def _transfers(parts: dict[str, list[dict[str, Any]]], names: set[str]) -> list[dict[str, Any]]:
    """The edges between tasks of a partitioned step, read from its ``_Recv`` nodes (see
    :meth:`MasterSession.placement`); ``names`` are the graph's own nodes, to tell control edges apart."""
    by_name = {n["name"]: n for part in parts.values() for n in part}
    rows = []
    for part in parts.values():
        consumers: dict[str, list[str]] = {}
        for node in part:
            for ref in node["input"]:
                consumers.setdefault(ref.lstrip("^").split(":")[0], []).append(node["name"])
        for node in part:
            if node["op"] != "_Recv":
                continue
            attr = node["attr"]
            sent, _, index = attr["tensor_name"].rpartition(":")
            src, output = sent, int(index)
            if sent not in names:  # a control edge sends a dummy Const that runs after its source
                src, output = by_name[sent]["input"][0].lstrip("^"), -1
            shape = attr.get("shape")
            dst: list[str] = []
            for c in consumers.get(node["name"], []):
                # An Identity the partitioner put after a control edge's receive stands for its consumers.
                added = c not in names and by_name[c]["op"] == "Identity"
                dst += consumers.get(c, []) if added else [c]
            rows.append(
                {
                    "src": src,
                    "output": output,
                    "dst": dst,
                    "tensor_name": attr["tensor_name"],
                    "send_device": attr["send_device"],
                    "recv_device": attr["recv_device"],
                    "dtype": str(attr["tensor_type"]),
                    "shape": None if shape is None else list(shape),
                }
            )
    return rows


def _all_tasks(cluster: ClusterSpec) -> list[str]:
    return [f"/job:{job}/replica:0/task:{i}" for job in cluster.jobs for i in cluster.task_indices(job)]


def _allowed(task: str, filters: list[str]) -> bool:
    if not filters:
        return True
    spec = DeviceSpec.from_string(task)
    for f in filters:
        want = DeviceSpec.from_string(f)
        if (want.job in (None, spec.job)) and (want.task in (None, spec.task)):
            return True
    return False
