"""Compiles a pruned, placed subgraph into a flat plan of kernel calls, and runs it.

A :class:`Plan` is built once per (fetches, feeds, targets) signature: it
prunes the graph to what the fetches need (stopping at fed tensors), orders
the nodes topologically, asks each op's registry entry for a kernel bound to
its device, and wires inputs to numbered value slots. Reading a variable by
value and moving a tensor between torch devices are explicit steps inserted
just before the consumer. Running a step is then a loop over small closures.
Each value is dropped right after its last consumer ran (or at once, when
nothing reads it), so a step's peak memory does not grow with its length.

Plans with control flow or kernels that may block run as a dataflow (see
:mod:`.dataflow`). So do plans whose independent branches are heavy enough
to gain from ``inter_op_parallelism_threads`` > 1: a decaying estimate of the
time per step (``_PARALLEL_MIN_SECS``) keeps small plans on the serial loop,
where handing steps to threads would cost more than it saves.

Slot 0 holds the per-step context (deadline, step id, rendezvous), for
kernels registered with ``needs_step``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     y = tf.constant(2.0) * 3.0
    ...     with tf.Session() as sess:
    ...         print(sess.run(y))
    6.0
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.lazy_modules import torch
from dtf_notebook.runtime.dataflow import (
    DEAD,
    ENTER,
    KIND_OF_TYPE,
    NORMAL,
    TRANSFER_TYPES,
    FlowGraph,
    FlowRun,
    build_flow_graph,
    default_inter_op_threads,
)
from dtf_notebook.runtime.devices import LocalDevice
from dtf_notebook.runtime.file_access import FileAccess
from dtf_notebook.runtime.float_env import flush_denormals
from dtf_notebook.runtime.queue_waits import QUEUE_WAITS, serial_queue_waits
from dtf_notebook.runtime.rendezvous import WouldBlock
from dtf_notebook.runtime.resources import ResourceMgr


@dataclass
class ExecutionState:
    """What kernels of one session (local) or one task (distributed) share across steps.

    Attributes:
        resources: The resource containers (variables, queues).
        generators: Random generators by node name, so each random op continues its sequence across runs.
        files: Where kernels may read and write files (a task's file roots; anywhere by default).
        session: The master session these kernels run for, on a task that serves several ("" in a local
            session, which has its state to itself): a queue or accumulator without a ``shared_name`` is
            private to it, as in TF1.

    Example:
        >>> state = ExecutionState()
        >>> type(state.resources).__name__, state.generators, state.files.confined, state.session
        ('ResourceMgr', {}, False, '')
    """

    resources: ResourceMgr = field(default_factory=ResourceMgr)
    generators: dict[str, torch.Generator] = field(default_factory=dict)
    files: FileAccess = field(default_factory=FileAccess)
    session: str = ""


@dataclass
class StepContext:
    """Per-run information handed to ``needs_step`` kernels.

    Attributes:
        step_id: Unique id of the run.
        deadline: ``time.monotonic()`` value after which blocking kernels give up (None = never).
        extras: Backend-specific values (e.g. the rendezvous of a distributed step).

    Example:
        >>> StepContext(step_id=7).remaining() is None                  # no deadline
        True
        >>> StepContext(deadline=time.monotonic() + 30).remaining() > 20
        True
    """

    step_id: int = 0
    deadline: float | None = None
    extras: dict[str, Any] = field(default_factory=dict)
    _abort: errors.OpError | None = field(default=None, repr=False)
    _listeners: list[Callable[[errors.OpError], None]] = field(default_factory=list, repr=False)

    def remaining(self) -> float | None:
        """Seconds left before the deadline (None when there is none)."""
        return None if self.deadline is None else self.deadline - time.monotonic()

    def aborted(self) -> errors.OpError | None:
        """The error the step was aborted with (an op of it failed, a peer failed, the master sent
        ``AbortStep``, the session closed), else None.

        :meth:`abort` records a local abort; a distributed step's rendezvous (``extras["rendezvous"]``) records
        its peers'.
        """
        if self._abort is not None:
            return self._abort
        rendezvous = self.extras.get("rendezvous")
        return None if rendezvous is None else rendezvous.aborted

    def abort(self, error: errors.OpError) -> None:
        """Aborts the step (the first error stays): kernels waiting on it give up with ``error``.

        Example:
            >>> step = StepContext()
            >>> step.abort(errors.CancelledError(None, None, "an op failed"))
            >>> step.check_waiting("queue 'q' to have an element")
            Traceback (most recent call last):
            ...
            dtf_notebook.errors.CancelledError: an op failed
        """
        if self._abort is None:
            self._abort = error
        rendezvous = self.extras.get("rendezvous")
        if rendezvous is not None:
            rendezvous.abort(error)  # wakes a ``_Recv`` waiting on it
        for listener in list(self._listeners):
            listener(self._abort)

    def on_abort(self, listener: Callable[[errors.OpError], None]) -> Callable[[], None]:
        """Calls ``listener(error)`` when the step is aborted (on the aborting thread, which may hold locks of its
        own: the listener must only record it); returns a function that removes it.

        Example:
            >>> step, seen = StepContext(), []
            >>> remove = step.on_abort(seen.append)
            >>> step.abort(errors.CancelledError(None, None, "session closed"))
            >>> remove(); [e.message for e in seen]
            ['session closed']
        """
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def before_wait(self) -> None:
        """Called by a kernel about to block: sends the step has held back go out first (see ``extras["flush"]``),
        so that no task waits on a tensor still sitting in this one's outbox.

        Example:
            >>> sent = []
            >>> StepContext(extras={"flush": lambda: sent.append("flushed")}).before_wait()
            >>> sent
            ['flushed']
        """
        flush = self.extras.get("flush")
        if flush is not None:
            flush()

    def check_waiting(self, what: str) -> None:
        """Raises when a kernel blocked on ``what`` must give up; kernels that wait call it between short waits.

        Raises:
            OpError: the step was aborted (the abort's error), or its master is gone (``UnavailableError``).
            DeadlineExceededError: the step's deadline passed.

        Example:
            >>> StepContext(deadline=time.monotonic() - 1).check_waiting("queue 'q' to have an element")
            Traceback (most recent call last):
            ...
            dtf_notebook.errors.DeadlineExceededError: Timed out waiting for queue 'q' to have an element
        """
        error = self.aborted()
        if error is not None:
            raise error
        rendezvous = self.extras.get("rendezvous")
        if rendezvous is not None and rendezvous.watchdog is not None:
            rendezvous.watchdog()  # throttled; raises when the step's master no longer answers
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise errors.DeadlineExceededError(None, None, f"Timed out waiting for {what}")


class KernelContext:
    """What a kernel factory may use: the node's device and the shared execution state.

    Example:
        >>> ctx = KernelContext(None, LocalDevice("/cpu", "CPU", 0, torch.device("cpu")), ExecutionState())
        >>> ctx.device
        device(type='cpu')
    """

    __slots__ = ("op", "local_device", "state")

    def __init__(self, op: Operation | None, local_device: LocalDevice, state: ExecutionState) -> None:
        self.op = op
        self.local_device = local_device
        self.state = state

    @property
    def device(self) -> torch.device:
        return self.local_device.torch_device

    @property
    def device_name(self) -> str:
        return self.local_device.name

    @property
    def resources(self) -> ResourceMgr:
        return self.state.resources

    def generator(self, seed: int, seed2: int) -> torch.Generator:
        """The node's random generator, created on first use from its (graph, op) seeds.

        Seeds (0, 0) mean "not seeded": the generator then starts from fresh entropy.
        """
        key = self.op.name if self.op is not None else ""
        gen = self.state.generators.get(key)
        if gen is None:
            gen = torch.Generator(device=self.device)
            if seed or seed2:
                gen.manual_seed((int(seed) * 1_000_003 + int(seed2)) % (2**63))
            else:
                gen.seed()
            self.state.generators[key] = gen
        return gen


#: Below this mean time per step (seconds, a decaying estimate over runs) a plan's steps run on one thread:
#: handing a step to another thread costs tens of microseconds, and torch releases the GIL for long only inside
#: big kernels. Above it, independent steps run at once on up to ``inter_op_parallelism_threads`` threads.
_PARALLEL_MIN_SECS = 1e-4


def _deref(resource: Any) -> Any:
    return resource.read()


def _make_step(fn: Callable[..., Any], ins: Sequence[int], outs: Sequence[int]) -> Callable[[list], None]:
    """A closure ``step(vals)`` calling ``fn`` on slots ``ins`` and storing into ``outs``."""
    n_in, n_out = len(ins), len(outs)
    if n_out == 1:
        (o,) = outs
        if n_in == 0:

            def step(vals: list) -> None:
                vals[o] = fn()
        elif n_in == 1:
            (a,) = ins

            def step(vals: list) -> None:
                vals[o] = fn(vals[a])
        elif n_in == 2:
            a, b = ins

            def step(vals: list) -> None:
                vals[o] = fn(vals[a], vals[b])
        elif n_in == 3:
            a, b, c = ins

            def step(vals: list) -> None:
                vals[o] = fn(vals[a], vals[b], vals[c])
        else:

            def step(vals: list) -> None:
                vals[o] = fn(*[vals[i] for i in ins])
    elif n_out == 0:

        def step(vals: list) -> None:
            fn(*[vals[i] for i in ins])
    else:

        def step(vals: list) -> None:
            result = fn(*[vals[i] for i in ins])
            for o, r in zip(outs, result):
                vals[o] = r

    return step


def _with_release(step: Callable[[list], None], slots: Sequence[int]) -> Callable[[list], None]:
    """``step``, then dropping the values in ``slots`` (no later step reads them)."""
    if len(slots) == 1:
        (a,) = slots

        def run(vals: list) -> None:
            step(vals)
            vals[a] = None
    else:

        def run(vals: list) -> None:
            step(vals)
            for slot in slots:
                vals[slot] = None

    return run


def release_points(
    step_ins: Sequence[Sequence[int]], step_outs: Sequence[Sequence[int]], keep: set[int]
) -> list[list[int]]:
    """For each step, the slots whose values no later step reads: dropped right after it (``keep``: never).

    A slot nobody reads is dropped right after the step that wrote it.

    Example:
        >>> release_points([[1], [2], [1, 3]], [[2], [3], [4]], keep={4})
        [[], [2], [1, 3]]
    """
    last: dict[int, int] = {}
    for i, outs in enumerate(step_outs):
        for slot in outs:
            last.setdefault(slot, i)
    for i, ins in enumerate(step_ins):
        for slot in ins:
            last[slot] = i
    points: list[list[int]] = [[] for _ in step_ins]
    for slot, i in last.items():
        if slot not in keep:
            points[i].append(slot)
    return [sorted(p) for p in points]


_MERGES = frozenset({"Merge", "RefMerge"})
_NEXT_ITERATIONS = frozenset({"NextIteration", "RefNextIteration"})


def is_back_edge(op: Operation, t: Tensor) -> bool:
    """Whether input ``t`` of ``op`` closes a loop: a ``NextIteration`` feeding a ``Merge``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.while_loop(lambda x: x < 3.0, lambda x: x + 1.0, [tf.constant(0.0)])
        >>> merge = [op for op in x.graph.get_operations() if op.type == "Merge"][0]
        >>> [is_back_edge(merge, t) for t in merge.inputs]
        [False, True]
    """
    return op._type in _MERGES and t._op._type in _NEXT_ITERATIONS


def needed_ops(fetch_ops: Sequence[Operation], fed: set[Tensor]) -> list[Operation]:
    """The ops the fetches depend on, in a topological order, stopping at fed tensors.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     a = tf.constant(1.0, name="a"); b = tf.identity(a, name="b")
        ...     [op.name for op in needed_ops([b.op], set())]
        ['a', 'b']
    """
    order: list[Operation] = []
    state: dict[Operation, int] = {}  # 1 = on the stack, 2 = done
    roots = list(fetch_ops)
    back_edges: list[Operation] = []  # NextIteration ops feeding a loop's Merge: visited after it
    while roots or back_edges:
        root = roots.pop(0) if roots else back_edges.pop(0)
        if state.get(root) == 2:
            continue
        stack: list[tuple[Operation, bool]] = [(root, False)]
        while stack:
            op, expanded = stack.pop()
            if expanded:
                if state.get(op) != 2:
                    state[op] = 2
                    order.append(op)
                continue
            mark = state.get(op)
            if mark == 2:
                continue
            if mark == 1:
                raise errors.InvalidArgumentError(None, op, f"Graph has a cycle through node '{op.name}'")
            state[op] = 1
            stack.append((op, True))
            for c in reversed(op._control_inputs):
                # An op whose every output is fed has nothing left to do (TF replaces it by the feed).
                if state.get(c) != 2 and not (c._outputs and all(t in fed for t in c._outputs)):
                    stack.append((c, False))
            for t in reversed(op._inputs):
                if t not in fed and state.get(t._op) != 2:
                    if is_back_edge(op, t):
                        back_edges.append(t._op)
                    else:
                        stack.append((t._op, False))
    # Prefer creation order when it is a valid schedule: graph partitions are created in one global order
    # that keeps cross-task sends and receives from waiting on each other (no distributed deadlock).
    by_creation = sorted(order, key=lambda op: op._id)
    if all(t._op._id < op._id or t in fed or is_back_edge(op, t) for op in by_creation for t in op._inputs) and all(
        c._id < op._id for op in by_creation for c in op._control_inputs if c in state
    ):
        return by_creation
    return order


def node_error(op: Operation, device: str, exc: BaseException) -> errors.OpError:
    """Wraps an exception raised while running ``op`` into an OpError naming the node and device.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     op = tf.constant(1.0, name="c").op
        >>> error = node_error(op, "/cpu:0", ValueError("bad value"))
        >>> type(error).__name__, error.message.splitlines()[0]
        ('InvalidArgumentError', 'Const failed: bad value')
    """
    where = ""
    if op.traceback:
        frame = op.traceback[-1]
        where = f" (defined at {frame.filename}:{frame.lineno})"
    suffix = f"\n\t [[node {op.name}{where} on device {device}]]"
    if isinstance(exc, errors.OpError):
        return errors.error_from_code(exc.error_code, exc.message + suffix, exc.node_def, op)
    if isinstance(exc, MemoryError) or "out of memory" in str(exc).lower():
        return errors.ResourceExhaustedError(op.node_def, op, f"OOM when running {op.type}: {exc}{suffix}")
    return errors.InvalidArgumentError(op.node_def, op, f"{op.type} failed: {exc}{suffix}")


class Plan:
    """A compiled step: run it with the fed values to get the fetched runtime values.

    Args:
        fetches: Tensors to return (Operations return None).
        targets: Operations to run for their effect.
        feeds: Tensors whose values are given at run time, in the order of ``run``'s argument.
        placement: Node name → LocalDevice.
        state: Shared execution state.
        placement_errors: Node name → message, for nodes that could not be placed.
        inter_op_threads: How many independent steps may run at once in the dataflow executor
            (``ConfigProto.inter_op_parallelism_threads``; 0 = the CPU count).
        intra_op_threads: torch's thread count inside one kernel, on the executor's helper threads
            (``ConfigProto.intra_op_parallelism_threads``; 0 = the calling thread's).

    Example:
        >>> import dtf_notebook as tf
        >>> cpu = LocalDevice("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 0, torch.device("cpu"))
        >>> with tf.Graph().as_default() as g:
        ...     x = tf.placeholder(tf.float32, [], name="x"); y = tf.multiply(x, 3.0, name="y")
        >>> plan = Plan([y], [], [x], {op.name: cpu for op in g.get_operations()}, ExecutionState())
        >>> plan.run([torch.tensor(2.0)])
        [tensor(6.)]
    """

    def __init__(
        self,
        fetches: Sequence[Tensor | Operation],
        targets: Sequence[Operation],
        feeds: Sequence[Tensor],
        placement: dict[str, LocalDevice],
        state: ExecutionState,
        placement_errors: dict[str, str] | None = None,
        inter_op_threads: int = 0,
        intra_op_threads: int = 0,
    ) -> None:
        fed = set(feeds)
        self._fed = fed
        self._torch_devices: dict[str, torch.device] = {}
        roots = [f.op if isinstance(f, Tensor) else f for f in fetches if not (isinstance(f, Tensor) and f in fed)]
        roots += list(targets)
        self.ops, self._waits_serially = serial_queue_waits(needed_ops(roots, fed))
        self._slots: dict[Tensor, int] = {}
        self._next_slot = 1  # slot 0: step context
        for t in feeds:
            self._slot(t)
        self.feed_slots = [self._slots[t] for t in feeds]
        self.steps: list[Callable[[list], None]] = []
        self.step_ops: list[Operation] = []
        self._step_ins: list[list[int]] = []
        self._step_outs: list[list[int]] = []
        self._step_kinds: list[int] = []
        self._step_after: list[list[int]] = []  # control predecessors of each step
        self._blocking: list[bool] = []
        self._enter_attrs: dict[int, tuple[str, bool, int]] = {}
        self._transfers: list[int] = []  # steps of _Send/_Recv kernels: they run even when dead
        self._dead_receives = False  # a _Recv of a graph with control flow may receive a dead value
        self._op_step: dict[Operation, int] = {}  # op -> its kernel's step
        self.devices: dict[str, str] = {}
        placement_errors = placement_errors or {}
        for op in self.ops:
            if op.name in placement_errors:
                raise errors.InvalidArgumentError(op.node_def, op, placement_errors[op.name])
            self._add_node(op, placement[op.name], state)
        self.fetch_slots: list[int | None] = []
        self._fetches = list(fetches)
        for f in fetches:
            if isinstance(f, Operation):
                self.fetch_slots.append(None)
                continue
            slot = self._slots[f]
            if f.is_ref and f not in fed:
                slot = self._deref_step(slot, f.op)
            self.fetch_slots.append(slot)
        self.num_slots = self._next_slot
        self._template: list[Any] | None = None  # see _hoist_constants
        self._hoisted: list[Operation] = []
        self.threads = inter_op_threads if inter_op_threads > 0 else default_inter_op_threads()
        self.intra_threads = intra_op_threads
        # Slot 0 (the step context) and the fetched values stay; every other value goes after its last reader.
        keep = {0, *(slot for slot in self.fetch_slots if slot is not None)}
        self._step_secs = 0.0  # a decaying estimate of the time per step, to keep small plans on one thread
        self._warm = False  # the first run pays one-time costs (lazy imports, first kernel calls): not estimated
        # Control flow and kernels that may block need the dataflow executor; anything else runs as a loop, or as
        # a dataflow on several threads once its steps prove heavy enough.
        self._flow: FlowGraph | None = None
        self._parallel: FlowGraph | None = None
        flow = None
        if any(self._step_kinds) or any(self._blocking) or self.threads > 1:
            flow = build_flow_graph(
                list(self.steps),
                self._step_kinds,
                self._step_ins,
                self._step_outs,
                self._step_after,
                self._blocking,
                self._enter_attrs,
                keep=keep,
                types=self._kernel_types(),
                transfers=self._transfers,
            )
        # A partition whose only kernels that may block are receives runs serially in plan order, as the partitioner
        # keeps cross-task receives from waiting on each other in that order (tests/placement/test_partition.py)
        # and a receive lets out the step's held-back sends before it waits. As a dataflow the receives were handed
        # to threads waiting for the GIL, and a training step over ps tasks took 30% longer.
        transfers = set(self._transfers)
        # So does a plan whose other waits are on queues that nothing in it fills, drains or closes (see
        # queue_waits): a training step reading a queue-runner pipeline spent a third of its time scheduling as a
        # dataflow.
        types = self._kernel_types()
        waits = any(
            blocking and i not in transfers and not (self._waits_serially and types[i] in QUEUE_WAITS)
            for i, blocking in enumerate(self._blocking)
        )
        # A receive that may get a dead value (a partition of a graph with control flow, say a cond's branch on
        # this task) needs the dataflow executor, which skips the ops a dead value reaches.
        if any(self._step_kinds) or waits or self._dead_receives:
            self._flow = flow
        else:
            if flow is not None and flow.branched and not any(self._blocking):
                self._parallel = flow  # (a receive's wait would count as work in the estimate)
            else:
                self._hoist_constants()
            for i, slots in enumerate(release_points(self._step_ins, self._step_outs, keep)):
                if slots:
                    self.steps[i] = _with_release(self.steps[i], slots)
        del self._step_ins, self._step_outs, self._step_kinds, self._step_after, self._blocking, self._op_step
        del self._transfers, self._dead_receives

    def _hoist_constants(self) -> None:
        """Takes the steps of constants out of a plan that runs one step after another: their values are in every
        run's slots from the start (:attr:`_template`), instead of a step each per run (a gradient graph holds many:
        an embedding lookup's step on a worker had 38 of its 93). A ``Const`` kernel returns the same value each
        run, so nothing a step sees changes; one with control inputs keeps its step (it must run after them)."""
        template: list[Any] = [None] * self.num_slots
        kept, hoisted = [], []
        for i, op in enumerate(self.step_ops):
            if op._type == "Const" and not op._control_inputs and self._op_step.get(op) == i:
                self.steps[i](template)  # (the kernel's closure: writes the value into its slot)
                hoisted.append(op)
                continue
            kept.append(i)
        if len(kept) == len(self.steps):
            return
        self.steps = [self.steps[i] for i in kept]
        self.step_ops = [self.step_ops[i] for i in kept]
        self._step_ins = [self._step_ins[i] for i in kept]
        self._step_outs = [self._step_outs[i] for i in kept]
        self._template = template
        self._hoisted = hoisted  # a traced run still lists them, as TF's step stats do

    def _fresh_slots(self) -> list[Any]:
        """The slots a run starts with: the hoisted constants' values, None elsewhere."""
        template = self._template
        return [None] * self.num_slots if template is None else template.copy()

    def _kernel_types(self) -> list[str]:
        """Each step's op type; "" for the reads and copies inserted before a consumer (they are not its kernel)."""
        types = [""] * len(self.steps)
        for op, i in self._op_step.items():
            types[i] = op._type
        return types

    def _slot(self, t: Tensor) -> int:
        slot = self._slots.get(t)
        if slot is None:
            slot = self._slots[t] = self._next_slot
            self._next_slot += 1
        return slot

    def _new_slot(self) -> int:
        slot = self._next_slot
        self._next_slot += 1
        return slot

    def _deref_step(self, src: int, consumer: Operation, after: list[int] | None = None) -> int:
        dst = self._new_slot()
        self._add_step(_deref, [src], [dst], consumer, after)
        return dst

    def _add_node(self, op: Operation, device: LocalDevice, state: ExecutionState) -> None:
        op_def = op.op_def
        if op_def.kernel is None:
            raise errors.UnimplementedError(op.node_def, op, f"Op type '{op.type}' has no kernel; it cannot run.")
        self.devices[op.name] = device.name
        kind = KIND_OF_TYPE.get(op._type, NORMAL)
        # An op runs after its control inputs; so do the reads and copies of its inputs (a value read after an
        # assign it depends on sees the assigned value).
        after = [self._op_step[c] for c in op._control_inputs if c in self._op_step]
        ins: list[int] = [0] if op_def.needs_step and kind == NORMAL else []
        for i, t in enumerate(op._inputs):
            if is_back_edge(op, t):
                ins.append(self._slot(t))  # written later in the plan, by the loop's NextIteration
                continue
            slot = self._slots.get(t)
            if slot is None:
                raise errors.InternalError(op.node_def, op, f"Input {t.name} of {op.name} was not computed")
            if t.is_ref and i not in op_def.ref_inputs and t not in self._fed:
                slot = self._deref_step(slot, op, after)
            src_device = torch.device("cpu") if t in self._fed else self._torch_devices.get(t.op.name)
            if src_device is not None and src_device != device.torch_device:
                slot = self._copy_step(slot, device.torch_device, op, after)
            ins.append(slot)
        try:
            fn = op_def.kernel(op, KernelContext(op, device, state))
        except errors.OpError as e:
            raise node_error(op, device.name, e) from None
        except (TypeError, ValueError, RuntimeError) as e:
            raise node_error(op, device.name, e) from None
        # A fed output keeps its fed value: the op's own result for it goes to a scratch slot.
        outs = [self._new_slot() if t in self._fed else self._slot(t) for t in op._outputs]
        self._torch_devices[op.name] = device.torch_device
        self._op_step[op] = len(self.steps)
        if kind == ENTER:
            attrs = op._attrs
            frame = (str(attrs.get("frame_name", "")), bool(attrs.get("is_constant", False)))
            self._enter_attrs[len(self.steps)] = (*frame, int(attrs.get("parallel_iterations", 10)))
        elif op._type in TRANSFER_TYPES:
            self._transfers.append(len(self.steps))
            self._dead_receives = self._dead_receives or bool(op._attrs.get("_may_be_dead"))
        self._add_step(fn, ins, outs, op, after, op_def.may_block, kind)

    def _copy_step(self, src: int, target: torch.device, consumer: Operation, after: list[int] | None = None) -> int:
        dst = self._new_slot()

        def copy(value: Any) -> Any:
            return value.to(target, non_blocking=True) if isinstance(value, torch.Tensor) else value

        self._add_step(copy, [src], [dst], consumer, after)
        return dst

    def _add_step(
        self,
        fn: Callable[..., Any],
        ins: list[int],
        outs: list[int],
        op: Operation,
        after: list[int] | None = None,
        blocking: bool = False,
        kind: int = NORMAL,
    ) -> None:
        """Appends a step reading slots ``ins`` and writing ``outs``, after the steps in ``after``."""
        self.steps.append(_make_step(fn, ins, outs))
        self.step_ops.append(op)
        self._step_ins.append(ins)
        self._step_outs.append(outs)
        self._step_after.append(list(after or ()))
        self._blocking.append(blocking)
        self._step_kinds.append(kind)

    def run(self, feed_values: Sequence[Any], step: StepContext | None = None, trace: list | None = None) -> list[Any]:
        """Runs the plan; returns runtime values (torch tensors / numpy strings / None) of the fetches.

        Raises:
            OpError: a kernel failed; the error names the node, its device and where it was created.
        """
        vals = self._fresh_slots()
        vals[0] = step
        for slot, value in zip(self.feed_slots, feed_values):
            vals[slot] = value
        with flush_denormals():  # as TF's kernels run (see float_env)
            if self._flow is not None:
                return self._run_flow(self._flow, vals, step, trace)
            if self._parallel is not None:
                if self._step_secs >= _PARALLEL_MIN_SECS:
                    return self._run_flow(self._parallel, vals, step, trace)
                start = time.thread_time()
                results = self._run_serial(vals, step, trace)
                self._estimate(time.thread_time() - start, len(self.steps))
                return results
            return self._run_serial(vals, step, trace)

    @property
    def resumable(self) -> bool:
        """Whether :meth:`start` can run this plan: its steps run one after another in plan order (no control
        flow, no kernel that may wait other than a receive)."""
        return self._flow is None and self._parallel is None and not self._waits_serially

    def start(self, feed_values: Sequence[Any], step: StepContext) -> SerialRun:
        """A run of this (:attr:`resumable`) plan that stops, instead of waiting, at a receive whose value is not
        there yet (its step's rendezvous is suspending: see :class:`~.rendezvous.WouldBlock`); call
        :meth:`SerialRun.resume` to run it, and again once the value is there.

        A task's event loop runs steps this way: many steps share its one thread, none blocking it.

        Example:
            >>> import dtf_notebook as tf
            >>> cpu = LocalDevice("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 0, torch.device("cpu"))
            >>> with tf.Graph().as_default() as g:
            ...     x = tf.placeholder(tf.float32, [], name="x"); y = tf.multiply(x, 3.0, name="y")
            >>> plan = Plan([y], [], [x], {op.name: cpu for op in g.get_operations()}, ExecutionState())
            >>> plan.start([torch.tensor(2.0)], StepContext()).resume()
            [tensor(6.)]
        """
        vals = self._fresh_slots()
        vals[0] = step
        for slot, value in zip(self.feed_slots, feed_values):
            vals[slot] = value
        return SerialRun(self, vals, step)

    def _estimate(self, secs: float, steps: int) -> None:
        """Folds one run's time per step into the decaying estimate (half weight each run, from the second).

        ``secs`` is CPU time of the threads that ran the steps, not wall time: a kernel waiting for its queue, or a
        thread waiting for the GIL while a queue runner's thread parses records, is no work that more threads would
        share. (With wall time, a training step reading from a queue-runner pipeline looked heavy, went parallel, and
        its helper threads' hand-offs under the contended GIL cut it from 230 to 140 steps/s.) The price: branches that
        mostly wait outside Python (a ``py_func`` fetching over the network) no longer count as heavy, so they run one
        after another unless the step's other work is heavy; ``inter_op_parallelism_threads`` still caps, never forces.
        """
        if self._warm:
            self._step_secs = 0.5 * self._step_secs + 0.5 * secs / max(1, steps)
        self._warm = True

    def _run_serial(self, vals: list[Any], step: StepContext | None, trace: list | None) -> list[Any]:
        """Runs the steps one after another in the compiled order (a receive waits where it stands)."""
        steps = self.steps
        i = 0
        try:
            if trace is None and (step is None or step.deadline is None):
                for i, fn in enumerate(steps):  # noqa: B007 - i names the failing node below
                    fn(vals)
            elif trace is None:
                deadline = step.deadline
                for i, fn in enumerate(steps):  # noqa: B007
                    if time.monotonic() > deadline:
                        raise errors.DeadlineExceededError(None, None, "Timed out: the step ran past its deadline")
                    fn(vals)
            else:
                now = time.perf_counter()
                trace.extend((op, now, now) for op in self._hoisted)
                for i, fn in enumerate(steps):  # noqa: B007
                    start = time.perf_counter()
                    fn(vals)
                    trace.append((self.step_ops[i], start, time.perf_counter()))
        except Exception as exc:  # noqa: BLE001 - every kernel failure becomes an OpError naming its node
            op = self.step_ops[i]
            raise node_error(op, self.devices.get(op.name, ""), exc) from (
                None if isinstance(exc, errors.OpError) else exc
            )
        return [None if s is None else vals[s] for s in self.fetch_slots]

    def _resume(self, run: SerialRun) -> list[Any] | None:
        """Runs ``run`` on from its next step (see :meth:`start`): its fetches, or None where a receive would wait."""
        steps, vals, first = self.steps, run.vals, run.next
        deadline = run.step.deadline
        i = first
        try:
            with flush_denormals():
                for i in range(first, len(steps)):
                    if deadline is not None and time.monotonic() > deadline:
                        raise errors.DeadlineExceededError(None, None, "Timed out: the step ran past its deadline")
                    steps[i](vals)
        except WouldBlock:
            run.next = i  # that receive runs again once its value is there
            return None
        except Exception as exc:  # noqa: BLE001 - every kernel failure becomes an OpError naming its node
            run.next = len(steps)
            op = self.step_ops[i]
            raise node_error(op, self.devices.get(op.name, ""), exc) from (
                None if isinstance(exc, errors.OpError) else exc
            )
        run.next = len(steps)
        return [None if s is None else vals[s] for s in self.fetch_slots]

    def _run_flow(self, flow: FlowGraph, vals: list[Any], step: StepContext | None, trace: list | None) -> list[Any]:
        """Runs the steps as they become ready, with frames and dead tensors (see :mod:`.dataflow`)."""
        if step is None:
            step = vals[0] = StepContext()  # carries an abort to blocked kernels
        threads = self.threads if flow.branched and self._step_secs >= _PARALLEL_MIN_SECS else 1
        run = FlowRun(flow, vals, step, trace, threads, self.step_ops, self.intra_threads)
        failure = run.run()
        self._estimate(run.cpu_secs, run.executed)
        if failure is not None:
            i, exc = failure
            op = self.step_ops[i]
            raise node_error(op, self.devices.get(op.name, ""), exc) from (
                None if isinstance(exc, errors.OpError) else exc
            )
        results = []
        for f, s in zip(self._fetches, self.fetch_slots):
            value = None if s is None else vals[s]
            if s is not None and (value is None or value is DEAD):
                name = f.name
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Retval for {name} does not have value: it is the output of a branch not taken"
                    if value is DEAD
                    else f"Tensor {name} was never computed: the step stopped before it",
                )
            results.append(value)
        return results


class SerialRun:
    """One run of a plan that stops where a receive would wait (see :meth:`Plan.start`).

    Example:
        >>> import dtf_notebook as tf
        >>> cpu = LocalDevice("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 0, torch.device("cpu"))
        >>> with tf.Graph().as_default() as g:
        ...     c = tf.constant(2.0, name="c")
        >>> run = Plan([c], [], [], {"c": cpu}, ExecutionState()).start([], StepContext())
        >>> run.resume(), run.done
        ([tensor(2.)], True)
    """

    __slots__ = ("plan", "vals", "step", "next")

    def __init__(self, plan: Plan, vals: list[Any], step: StepContext) -> None:
        self.plan, self.vals, self.step, self.next = plan, vals, step, 0

    @property
    def done(self) -> bool:
        """Whether every step ran (or one failed)."""
        return self.next >= len(self.plan.steps)

    def resume(self) -> list[Any] | None:
        """Runs on: the fetched values once the plan is through, None while a receive waits for its value.

        Raises:
            OpError: a kernel failed (or the step was aborted, or ran past its deadline).
        """
        return self.plan._resume(self)
