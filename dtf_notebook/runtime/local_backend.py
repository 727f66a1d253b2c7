"""The in-process session backend: places the graph on this process's devices and runs plans.

A :class:`LocalBackend` owns its own resource containers, so, as in TF1, two
local sessions never share variable values, and closing a session frees them.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default() as g:
    ...     c = tf.constant([1, 2])
    >>> backend = LocalBackend(tf.ConfigProto())
    >>> backend.run(g, [c], [], [], None, None)
    [array([1, 2], dtype=int32)]
"""

from __future__ import annotations

import itertools
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework.graph import Graph
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.lazy_modules import torch
from dtf_notebook.placement.placer import PlacementNode, place
from dtf_notebook.runtime import values
from dtf_notebook.runtime.config import ConfigProto, NodeExecStats, RunOptions
from dtf_notebook.runtime.devices import LocalDevice, local_devices
from dtf_notebook.runtime.executor import ExecutionState, Plan, SerialRun, StepContext

_step_ids = itertools.count(1)


def placement_nodes(ops: Sequence[Operation]) -> list[PlacementNode]:
    """Plain placement data for ``ops`` (requested device, colocation, CPU-only, ref edges).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default() as g:
        ...     s = tf.constant(b"hi", name="s")
        >>> placement_nodes(g.get_operations())[0].cpu_only
        True
    """
    consumers: dict[str, list[str]] = {}
    for op in ops:
        for name in {t.op.name for t in op._inputs} | {c.name for c in op.control_inputs}:
            consumers.setdefault(name, []).append(op.name)
    nodes = []
    for op in ops:
        op_def = op.op_def
        cpu_only = (
            op_def.cpu_only or any(t.dtype.is_string for t in op._outputs) or any(t.dtype.is_string for t in op._inputs)
        )
        groups = op._attrs.get("_class") or ()
        nodes.append(
            PlacementNode(
                name=op.name,
                op_type=op.type,
                requested=op.device,
                colocation=tuple(g[5:] for g in groups if g.startswith("loc:@")),
                cpu_only=cpu_only,
                ref_sources=tuple(t.op.name for i, t in enumerate(op._inputs) if t.is_ref and i in op_def.ref_inputs),
                # A resource handle (a TensorArray, a stack) is per-step state: it is placed like any op, not with
                # the variables; a resource variable's handle (VarHandleOp) is a variable.
                holds_state=bool(op_def.ref_outputs)
                and not op_def.ref_inputs
                and (
                    op.type == "VarHandleOp"
                    or not any(op._outputs[i].dtype.name == "resource" for i in op_def.ref_outputs)
                ),
                generator=not op._inputs and len(op._outputs) == 1 and not op._outputs[0].is_ref,
                consumers=tuple(consumers.get(op.name, ())),
            )
        )
    return nodes


class LocalBackend:
    """Runs graphs in this process for ``Session("")``.

    Args:
        config: The session's ConfigProto.
        devices: Devices to use (default: this process's, from ``config``).
        state: Execution state to share (default: a new one, private to this backend).
        job, task: This process's place in a cluster (``localhost``/0 for a plain session).

    Example:
        >>> backend = LocalBackend(ConfigProto(virtual_gpus=1))
        >>> [d.name for d in backend.list_devices()]
        ['/job:localhost/replica:0/task:0/device:CPU:0', '/job:localhost/replica:0/task:0/device:GPU:0']
    """

    def __init__(
        self,
        config: ConfigProto,
        devices: list[LocalDevice] | None = None,
        state: ExecutionState | None = None,
        job: str = "localhost",
        task: int = 0,
    ) -> None:
        self.config = config
        self.devices = devices if devices is not None else local_devices(config, job=job, task=task)
        self.state = state if state is not None else ExecutionState()
        self.job, self.task = job, task
        self._by_name = {d.name: d for d in self.devices}
        self._lock = threading.Lock()
        self._placed_version: dict[int, int] = {}
        self._placement: dict[int, tuple[dict[str, str], dict[str, str]]] = {}
        self._plans: dict[tuple, tuple[int, Plan]] = {}
        self._running: dict[int, StepContext] = {}  # id -> step, for close() to cancel
        if config.intra_op_parallelism_threads > 0:
            torch.set_num_threads(config.intra_op_parallelism_threads)

    def list_devices(self) -> list[LocalDevice]:
        """The devices this backend places on."""
        return list(self.devices)

    def _placement_for(self, graph: Graph) -> tuple[dict[str, str], dict[str, str]]:
        key = id(graph)
        if self._placed_version.get(key) != graph.version:
            placed, errs = place(
                placement_nodes(graph.get_operations()),
                [d.name for d in self.devices],
                default_job=self.job,
                default_task=self.task,
                allow_soft_placement=self.config.allow_soft_placement,
            )
            if self.config.log_device_placement:
                for op in graph.get_operations():
                    if op.name in placed:
                        print(f"{op.name}: ({op.type}): {placed[op.name]}", file=sys.stderr)
            self._placement[key] = (placed, errs)
            self._placed_version[key] = graph.version
        return self._placement[key]

    def plan(
        self, graph: Graph, fetches: Sequence[Tensor | Operation], targets: Sequence[Operation], feeds: Sequence[Tensor]
    ) -> Plan:
        """The compiled plan for this signature, compiled on first use and whenever the graph changed."""
        key = (id(graph), tuple(fetches), tuple(targets), tuple(feeds))
        cached = self._plans.get(key)
        if cached is not None and cached[0] == graph.version:
            return cached[1]
        with self._lock:
            placed, errs = self._placement_for(graph)
            plan = Plan(
                fetches,
                targets,
                feeds,
                {n: self._by_name[d] for n, d in placed.items()},
                self.state,
                errs,
                inter_op_threads=self.config.inter_op_parallelism_threads,
                intra_op_threads=self.config.intra_op_parallelism_threads,
            )
            self._plans[key] = (graph.version, plan)
        return plan

    def run(
        self,
        graph: Graph,
        fetches: Sequence[Tensor | Operation],
        targets: Sequence[Operation],
        feeds: Sequence[tuple[Tensor, Any]],
        options: RunOptions | None,
        run_metadata: Any,
        step: StepContext | None = None,
    ) -> list[Any]:
        """Runs one step; returns numpy values of ``fetches`` (None for operations).

        ``step`` supplies the step id, deadline and rendezvous when the step is part of a distributed run.
        """
        feed_tensors = [t for t, _ in feeds]
        plan = self.plan(graph, fetches, targets, feed_tensors)
        cpu = self.devices[0].torch_device
        feed_values = [v if isinstance(v, torch.Tensor) else values.feed_value(v, t.dtype, cpu) for t, v in feeds]
        if step is None:
            timeout_ms = (options.timeout_in_ms if options is not None else 0) or self.config.operation_timeout_in_ms
            step = StepContext(next(_step_ids), time.monotonic() + timeout_ms / 1000.0 if timeout_ms > 0 else None)
        tracing = options is not None and options.trace_level > 0 and run_metadata is not None
        trace: list | None = [] if tracing else None
        self._running[id(step)] = step
        try:
            results = plan.run(feed_values, step, trace)
        finally:
            self._running.pop(id(step), None)
        if tracing:
            _record_trace(run_metadata, trace, plan)
        elif options is not None and options.output_partition_graphs and run_metadata is not None:
            _record_partition_graph(run_metadata, plan)
        return [None if r is None else values.to_numpy(r) for r in results]

    def start(
        self,
        graph: Graph,
        fetches: Sequence[Tensor | Operation],
        targets: Sequence[Operation],
        feeds: Sequence[tuple[Tensor, Any]],
        step: StepContext,
    ) -> BackendRun | None:
        """A step that stops where a receive would wait, for a task's event loop (see ``Plan.start``); None when
        its plan cannot run that way (control flow, queues: use :meth:`run` on a thread of its own).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default() as g:
            ...     c = tf.constant([1, 2])
            >>> LocalBackend(tf.ConfigProto()).start(g, [c], [], [], StepContext()).resume()
            [array([1, 2], dtype=int32)]
        """
        plan = self.plan(graph, fetches, targets, [t for t, _ in feeds])
        if not plan.resumable:
            return None
        cpu = self.devices[0].torch_device
        feed_values = [v if isinstance(v, torch.Tensor) else values.feed_value(v, t.dtype, cpu) for t, v in feeds]
        return BackendRun(self, plan.start(feed_values, step))

    def forget(self, graph: Graph) -> None:
        """Drops the plans and placement cached for ``graph`` (a task's worker calls this when a partition is
        deregistered; the cache would otherwise keep the graph alive).

        Example:
            >>> import dtf_notebook as tf
            >>> backend = LocalBackend(tf.ConfigProto())
            >>> with tf.Graph().as_default() as g:
            ...     two = tf.constant(2.0)
            >>> [float(x) for x in backend.run(g, [two], [], [], None, None)]
            [2.0]
            >>> backend.forget(g)
            >>> backend._plans, backend._placement
            ({}, {})
        """
        # Without the compile lock: a task's worker calls this on its I/O thread, which must not wait for
        # another graph's placement and compilation. list() copies the keys in one step under the GIL.
        key = id(graph)
        for signature in [k for k in list(self._plans) if k[0] == key]:
            self._plans.pop(signature, None)
        self._placement.pop(key, None)
        self._placed_version.pop(key, None)

    def close(self, wait: bool = True) -> None:
        """Cancels the steps still running (from other threads: ``CancelledError``, as TF1's close), then frees this
        backend's variables and plans (at once: ``wait`` matters only to remote backends)."""
        for step in list(self._running.values()):
            step.abort(errors.CancelledError(None, None, "The step was cancelled: its session was closed or reset"))
        self.state.resources.clear()
        self._plans.clear()
        self._placement.clear()


class BackendRun:
    """A step of a :class:`LocalBackend` that stops where a receive would wait (see :meth:`LocalBackend.start`);
    counted as running (``close()`` cancels it) from its first :meth:`resume` until it ends."""

    __slots__ = ("backend", "run")

    def __init__(self, backend: LocalBackend, run: SerialRun) -> None:
        self.backend, self.run = backend, run

    def resume(self) -> list[Any] | None:
        """Runs on: numpy values of the fetches once through, None while a receive waits.

        Raises:
            OpError: a kernel failed, or the step was aborted or ran past its deadline.
        """
        step = self.run.step
        running = self.backend._running
        running[id(step)] = step
        try:
            results = self.run.resume()
        except BaseException:
            running.pop(id(step), None)
            raise
        if results is None:
            return None
        running.pop(id(step), None)
        return [None if r is None else values.to_numpy(r) for r in results]


def _record_trace(run_metadata: Any, trace: list, plan: Plan) -> None:
    if not trace:
        return
    base = trace[0][1]
    for op, start, end in trace:
        device = plan.devices.get(op.name, "")
        stats = NodeExecStats(op.name, op.type, device, int((start - base) * 1e6), int((end - start) * 1e6))
        run_metadata.step_stats.dev_stats.setdefault(device, []).append(stats)
    _record_partition_graph(run_metadata, plan)


def _record_partition_graph(run_metadata: Any, plan: Plan) -> None:
    """The step's graph as it ran (``RunOptions.output_partition_graphs``, and every traced step): its ops and
    their devices."""
    run_metadata.partition_graphs.append(
        {"node": [{"name": op.name, "op": op.type, "device": plan.devices.get(op.name, "")} for op in plan.ops]}
    )
