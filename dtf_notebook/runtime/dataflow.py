"""Runs a compiled plan as a dataflow with TF1's control-flow semantics: frames, iterations, dead tensors.

:class:`~dtf_notebook.runtime.executor.Plan` compiles ops to steps (closures over numbered value slots)
and hands them here with their edges when the plan holds control-flow ops (``Switch``, ``Merge``,
``Enter``, ``Exit``, ``NextIteration``) or kernels that may block (queues, accumulators, ``_Recv``).
A step runs once all the steps it waits for (producers of its inputs, its control inputs) finished in
the same *frame iteration*; each frame iteration has its own value slots, so a loop body's values of
iteration 3 never meet those of iteration 4.

TF1's rules, as in its executor:

- **Dead tensors.** ``Switch`` forwards its data to the output its predicate picks and sends a *dead*
  value to the other. An op with a dead input, or a control input from a dead op, does not run: its
  outputs are dead. ``Merge`` forwards the first live input (and its index), and is dead only when every
  input is dead. Fetching a dead tensor is an ``InvalidArgumentError``.
- **Frames.** ``Enter`` moves a value into a child frame (one per loop, per iteration of the enclosing
  frame); with ``is_constant`` the value reaches every iteration. ``NextIteration`` moves a value to the
  next iteration of its frame (a dead one ends the loop); ``Exit`` moves it back to the parent frame.
  A frame is done when all of its ``Enter``\\ s arrived and every iteration finished; its ``Exit``\\ s that
  never saw a live value then send dead values out (a loop inside an untaken ``cond`` branch).
  At most ``parallel_iterations`` iterations of a frame are alive at once.
- **Blocking kernels** (``may_block``) never hold the step hostage: they start once nothing else is ready
  and the sends the step holds back went out; each then runs on a thread of its own, the last one on the
  calling thread. A thread that finishes a step keeps running what became ready, so no value waits behind a
  blocked kernel.
- **Errors.** The first kernel error stops the step: nothing more starts, the step context is aborted
  (kernels blocked in it give up), and the error is returned with the failing step's index.
- **Values are released** after their last reader in their iteration (each iteration counts its slots'
  readers down), so a long chain holds a few values at a time, whatever the executor.
- **Plain loops run serially.** A frame that is a plain ``while_loop`` (see :mod:`.serial_loops`) runs as one
  task of its parent iteration once all its ``Enter``\\ s arrived live: compiled condition and body sub-plans
  in a Python loop, with no scheduling per step. Any other frame (a ``cond`` or a loop inside, a kernel that
  may block, a send or receive) runs step by step as above.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     i = tf.while_loop(lambda i: i < 10, lambda i: i + 3, [tf.constant(0)])
    ...     with tf.Session() as sess:
    ...         print(sess.run(i))
    12
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from dtf_notebook import errors
from dtf_notebook.lazy_modules import torch
from dtf_notebook.runtime.float_env import flush_denormals_in_this_thread
from dtf_notebook.runtime.serial_loops import LoopStoppedError, SerialLoop, plan_serial_loops, run_serial_loop
from dtf_notebook.runtime.step_kinds import ENTER, EXIT, KIND_OF_TYPE, LOOP, MERGE, NEXT, NORMAL, SWITCH

__all__ = [
    "DEAD",
    "ENTER",
    "EXIT",
    "KIND_OF_TYPE",
    "LOOP",
    "MERGE",
    "NEXT",
    "NORMAL",
    "SWITCH",
    "TRANSFER_TYPES",
    "ElasticPool",
    "FlowGraph",
    "FlowRun",
    "FrameStep",
    "build_flow_graph",
    "default_inter_op_threads",
]

#: Op types that run even when dead, as TF's transfer nodes do, so that deadness crosses tasks: a ``_Send`` of a
#: dead value sends it as dead, and a ``_Recv`` always receives (a dead value, when the sender's was).
TRANSFER_TYPES = frozenset({"_Send", "_Recv"})

#: Seconds an idle pool thread waits for work before it exits.
_IDLE_SECS = 30.0
#: How often a waiting thread re-checks the run (a lost wake-up costs at most this).
_WAIT_SECS = 0.5


class _Dead:
    """The value of a dead tensor (an output of a branch not taken)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "DEAD"


#: The dead value, put in a slot in place of a tensor.
DEAD: Any = _Dead()


def default_inter_op_threads() -> int:
    """The inter-op thread count that ``inter_op_parallelism_threads=0`` means: the CPU count, at least 2.

    Example:
        >>> default_inter_op_threads() >= 2
        True
    """
    return max(2, os.cpu_count() or 2)


class ElasticPool:
    """Threads that run submitted callables at once: an idle thread takes one, else a new thread starts.

    Never queues work behind a busy thread, so a callable that blocks never delays another one. Idle
    threads exit after ``idle_secs``.

    Example:
        >>> done = threading.Event()
        >>> ElasticPool().submit(done.set)
        >>> done.wait(5)
        True
    """

    def __init__(self, idle_secs: float = _IDLE_SECS) -> None:
        self._idle_secs = idle_secs
        self._lock = threading.Lock()
        self._idle = 0
        self._work: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()

    def submit(self, fn: Callable[[], None]) -> None:
        with self._lock:
            if self._idle:
                self._idle -= 1
                self._work.put(fn)
                return
        threading.Thread(target=self._serve, args=(fn,), name="dtf-executor", daemon=True).start()

    def _serve(self, fn: Callable[[], None]) -> None:
        while True:
            fn()
            with self._lock:
                self._idle += 1
            while True:
                try:
                    fn = self._work.get(timeout=self._idle_secs)
                    break
                except queue.Empty:
                    with self._lock:
                        # A submit that counted on this thread put its work under the lock: take it.
                        if self._work.empty():
                            self._idle -= 1
                            return


_POOL = ElasticPool()


class FrameStep:
    """The step context as a kernel in one frame iteration sees it: the step's own, plus where it runs.

    ``frame_path`` names the frame as TF's executor does (``parent path;parent iteration;frame name``, the same
    on every task running a part of the loop) and ``iteration`` is the iteration's index, so ``_Send``/``_Recv``
    of one loop iteration agree on their rendezvous key. Everything else is the step context's.

    Example:
        >>> step = FrameStep(threading.Event(), ";0;while/while_context", 3)
        >>> step.iteration, step.is_set()
        (3, False)
    """

    __slots__ = ("_step", "frame_path", "iteration")

    def __init__(self, step: Any, frame_path: str, iteration: int) -> None:
        self._step = step
        self.frame_path = frame_path
        self.iteration = iteration

    def __getattr__(self, name: str) -> Any:
        return getattr(self._step, name)


@dataclass
class FlowGraph:
    """A plan's steps as a graph with control-flow structure (built once per plan).

    Per-step sequences cover the plan's steps, then one :data:`LOOP` step per plain loop frame.

    Attributes:
        steps: ``step(vals)`` closures (used for :data:`NORMAL` steps).
        kinds: Each step's kind.
        ins: Each step's input slots.
        outs: Each step's output slots.
        data_succs: For each step, the distinct steps reading one of its outputs.
        ctl_succs: For each step, the steps that wait on it by a control edge only.
        npreds: How many distinct steps each step waits for.
        blocking: Whether each step's kernel may block.
        frame_of: The frame each step runs in ("" for the root).
        enter_frame: For an ``Enter`` step, the frame it enters; "" otherwise.
        enter_constant: For an ``Enter`` step, whether its value reaches every iteration.
        parallel_iterations: Per frame, how many iterations may be alive at once.
        enters_of: Per frame, how many ``Enter`` steps feed it.
        exits_of: Per frame, its ``Exit`` steps.
        merge_fwd: For a ``Merge`` step, how many of its producers are not ``NextIteration`` steps, and how many
            are (a loop's back edges): the dead arrivals that make it dead in the first and later iterations.
        readers: For each slot, how many distinct steps read it (counted down per iteration).
        reads: For each step, the slots it reads that are dropped after their last reader (not the kept ones).
        unread: For each step, the slots it writes that nothing reads and nobody keeps (dropped at once).
        roots: The root frame's steps without predecessors.
        may_be_dead: Whether any value can be dead (the plan has a ``Switch``).
        loops: Plain loop frames (run serially, see :mod:`.serial_loops`) by name.
        loop_step: The :data:`LOOP` step of each plain loop frame.
        loop_frame: The frame of each :data:`LOOP` step.
        branched: Whether two steps can ever be ready at once (a plain chain gains nothing from threads).
        transfers: The steps that run even when dead (kernels of :data:`TRANSFER_TYPES`).
    """

    steps: Sequence[Callable[[list], None]]
    kinds: Sequence[int]
    ins: Sequence[tuple[int, ...]]
    outs: Sequence[tuple[int, ...]]
    data_succs: Sequence[tuple[int, ...]]
    ctl_succs: Sequence[tuple[int, ...]]
    npreds: list[int]
    blocking: Sequence[bool]
    frame_of: Sequence[str]
    enter_frame: Sequence[str]
    enter_constant: Sequence[bool]
    parallel_iterations: dict[str, int]
    enters_of: dict[str, int]
    exits_of: dict[str, tuple[int, ...]]
    merge_fwd: dict[int, tuple[int, int]]
    readers: list[int] = field(default_factory=list)
    reads: Sequence[tuple[int, ...]] = ()
    unread: Sequence[tuple[int, ...]] = ()
    roots: tuple[int, ...] = ()
    may_be_dead: bool = True
    loops: dict[str, SerialLoop] = field(default_factory=dict)
    loop_step: dict[str, int] = field(default_factory=dict)
    loop_frame: dict[int, str] = field(default_factory=dict)
    branched: bool = True
    transfers: frozenset[int] = frozenset()


def build_flow_graph(
    steps: Sequence[Callable[[list], None]],
    kinds: Sequence[int],
    ins: Sequence[Sequence[int]],
    outs: Sequence[Sequence[int]],
    control_preds: Sequence[Sequence[int]],
    blocking: Sequence[bool],
    enter_attrs: dict[int, tuple[str, bool, int]],
    keep: Collection[int] = (0,),
    types: Sequence[str] | None = None,
    transfers: Collection[int] = (),
) -> FlowGraph:
    """Derives successors, predecessor counts, frames and reader counts from the steps' slots and control edges.

    ``enter_attrs`` maps each ``Enter`` step to (frame name, is_constant, parallel_iterations). A
    ``Merge`` input written by a ``NextIteration`` step is a back edge: it does not count towards the
    frame computation, only towards the ``Merge``'s arrivals. Slots in ``keep`` (the step context, the
    fetches) are never dropped. ``types`` (each step's op type) lets plain loops run serially.

    Example:
        >>> flow = build_flow_graph([None, None], [NORMAL, NORMAL], [(), (1,)], [(1,), (2,)], [(), ()],
        ...                         [False, False], {})
        >>> flow.data_succs, flow.npreds, flow.frame_of, flow.reads, flow.unread
        ([(1,), ()], [0, 1], ['', ''], [(), (1,)], [(), (2,)])
    """
    n = len(steps)
    producer: dict[int, int] = {}
    for i, slots in enumerate(outs):
        for s in slots:
            producer[s] = i
    data_preds: list[list[int]] = []
    for i in range(n):
        preds: list[int] = []
        for s in ins[i]:
            p = producer.get(s)
            if p is not None and p not in preds:
                preds.append(p)
        data_preds.append(preds)
    data_succs: list[list[int]] = [[] for _ in range(n)]
    ctl_succs: list[list[int]] = [[] for _ in range(n)]
    npreds = [0] * n
    for i in range(n):
        for p in data_preds[i]:
            data_succs[p].append(i)
        for p in control_preds[i]:
            if p not in data_preds[i] and i not in ctl_succs[p]:
                ctl_succs[p].append(i)
        npreds[i] = len(data_preds[i]) + sum(1 for p in set(control_preds[i]) if p not in data_preds[i])
    merge_fwd = {}
    for i in range(n):
        if kinds[i] == MERGE:
            back = sum(1 for p in data_preds[i] if kinds[p] == NEXT)
            merge_fwd[i] = (len(data_preds[i]) - back, back)

    # Frames, by a breadth-first walk from the steps with no predecessors (TF's BuildControlFlowInfo).
    enter_frame = [""] * n
    enter_constant = [False] * n
    parallel: dict[str, int] = {}
    parent_of: dict[str, str] = {}
    for i, (name, constant, iterations) in enter_attrs.items():
        enter_frame[i], enter_constant[i] = name, constant
        parallel.setdefault(name, max(1, int(iterations or 10)))
    frame_of: list[str | None] = [None] * n
    pending = deque(i for i in range(n) if npreds[i] == 0)
    for i in pending:
        frame_of[i] = ""
    while pending:
        i = pending.popleft()
        frame = frame_of[i]
        if kinds[i] == ENTER:
            out_frame = enter_frame[i]
            parent_of.setdefault(out_frame, frame)
        elif kinds[i] == EXIT:
            out_frame = parent_of.get(frame, "")
        else:
            out_frame = frame
        for j in (*data_succs[i], *ctl_succs[i]):
            if frame_of[j] is None:
                frame_of[j] = out_frame
                pending.append(j)
    frames = [f or "" for f in frame_of]
    enters_of: dict[str, int] = {}
    exits: dict[str, list[int]] = {}
    for i in range(n):
        if kinds[i] == ENTER:
            enters_of[enter_frame[i]] = enters_of.get(enter_frame[i], 0) + 1
        elif kinds[i] == EXIT:
            exits.setdefault(frames[i], []).append(i)

    # Readers of each slot: each iteration counts them down and drops the value at zero.
    num_slots = 1 + max((s for slots in (*ins, *outs) for s in slots), default=0)
    readers = [0] * num_slots
    distinct_ins = [tuple(sorted(set(slots))) for slots in ins]
    for slots in distinct_ins:
        for s in slots:
            readers[s] += 1
    kept = set(keep)
    reads = [tuple(s for s in slots if s not in kept) for slots in distinct_ins]
    unread = [tuple(s for s in slots if not readers[s] and s not in kept) for slots in outs]
    for s in kept:
        if s < num_slots:
            readers[s] += 1  # the caller reads a kept slot (a fetch): it is wanted, and never counted down

    loops: dict[str, SerialLoop] = {}
    if types is not None and enter_attrs:
        loops = plan_serial_loops(
            kinds, ins, outs, data_preds, control_preds, blocking, frames, enter_frame, enter_constant, readers, types
        )
    all_kinds = list(kinds)
    loop_step: dict[str, int] = {}
    for name in loops:
        loop_step[name] = len(all_kinds)
        all_kinds.append(LOOP)
    extra = len(loops)
    roots = tuple(i for i in range(n) if npreds[i] == 0 and frames[i] == "")
    branched = len(roots) > 1 or any(len(data_succs[i]) + len(ctl_succs[i]) > 1 for i in range(n))
    return FlowGraph(
        steps,
        all_kinds,
        [tuple(s) for s in ins],
        [tuple(s) for s in outs],
        [tuple(s) for s in data_succs],
        [tuple(s) for s in ctl_succs],
        npreds,
        [*blocking, *([False] * extra)],
        frames,
        enter_frame,
        enter_constant,
        parallel,
        enters_of,
        {k: tuple(v) for k, v in exits.items()},
        merge_fwd,
        readers,
        [*reads, *([()] * extra)],
        [*unread, *([()] * extra)],
        roots,
        SWITCH in kinds or bool(transfers),  # a _Recv may receive a dead value
        loops,
        loop_step,
        {step: name for name, step in loop_step.items()},
        branched,
        frozenset(transfers),
    )


def _kernel_thread(intra_threads: int) -> None:
    """Sets up a pool thread to run kernels: OpenMP's thread count is per thread, and so are TF's float flags."""
    if torch.get_num_threads() != intra_threads:
        torch.set_num_threads(intra_threads)
    flush_denormals_in_this_thread()


class _Iteration:
    """One iteration of one frame: its value slots and what is left to run in it."""

    __slots__ = ("frame", "index", "vals", "pending", "left", "dead_ctl", "merges", "outstanding", "children")

    def __init__(self, frame: _Frame, index: int, vals: list, pending: list[int], left: list[int]) -> None:
        self.frame = frame
        self.index = index
        self.vals = vals
        self.pending = pending
        self.left = left  # readers of each slot still to run
        self.dead_ctl: set[int] = set()  # steps a dead op waits on by a control edge
        self.merges: dict[int, list] = {}  # Merge step -> [fired, dead arrivals]
        self.outstanding = 0  # steps scheduled and not finished
        self.children: dict[str, _Frame] = {}  # live child frames started in this iteration


class _Frame:
    """One execution of a loop: its live iterations, constants and the ``Enter``\\ s still to come.

    A plain loop frame first only collects its ``Enter``\\ s' values (``collected``); once all arrived live it runs
    serially, else (a dead value: the loop is in a branch not taken) it becomes a general frame.
    """

    __slots__ = (
        "name",
        "parent",
        "iterations",
        "newest",
        "constants",
        "pending_enters",
        "deferred",
        "live_exits",
        "collected",
        "path",
    )

    def __init__(self, name: str, parent: _Iteration | None, pending_enters: int) -> None:
        self.name = name
        self.parent = parent
        # TF's child frame name: the same on every task that runs a part of this loop (see FrameStep).
        self.path = "" if parent is None else f"{parent.frame.path};{parent.index};{name}"
        self.iterations: dict[int, _Iteration] = {}
        self.newest = -1
        self.constants: list[tuple[int, Any]] = []  # (Enter step, value) reaching every iteration
        self.pending_enters = pending_enters
        self.deferred: deque[tuple[int, Any, int]] = deque()  # (NextIteration step, value, target index)
        self.live_exits: set[int] = set()
        self.collected: dict[int, Any] | None = None  # a plain loop's Enter values, until it runs


class FlowRun:
    """The state of one run of a :class:`FlowGraph` (one ``sess.run`` step, or one partition of it).

    Example:
        >>> flow = build_flow_graph([lambda v: v.__setitem__(2, v[1] * 2)], [NORMAL], [(1,)], [(2,)], [()],
        ...                         [False], {}, keep=(0, 2))
        >>> vals = [None, 21, None]
        >>> FlowRun(flow, vals, None, None, threads=1, step_ops=[None]).run(), vals
        (None, [None, None, 42])
    """

    def __init__(
        self,
        flow: FlowGraph,
        vals: list,
        step: Any,
        trace: list | None,
        threads: int,
        step_ops: Sequence[Any],
        intra_threads: int = 0,
    ) -> None:
        self.flow = flow
        self.step = step
        self.trace = trace
        self.ops = step_ops
        self.deadline = None if step is None else step.deadline
        extras = getattr(step, "extras", None)
        self._rendezvous = extras.get("rendezvous") if isinstance(extras, dict) else None
        self.cancelled: BaseException | None = None  # the step was aborted from outside (its session closed)
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        self.waiting = 0  # threads waiting on ``cond`` (only then is a notify worth its cost)
        self.ready: deque[tuple[int, _Iteration]] = deque()
        self.ready_blocking: deque[tuple[int, _Iteration]] = deque()
        self.in_flight = 0
        self.helpers = 0
        self.max_helpers = max(0, threads - 1)
        self.intra_threads = intra_threads or torch.get_num_threads()
        self.executed = 0  # steps run (loop iterations' steps included), for the plan's time-per-step estimate
        self.cpu_secs = 0.0  # CPU time of the threads that ran this run's steps, for the same estimate
        self.failure: tuple[int, BaseException] | None = None
        self.root = _Frame("", None, 0)
        self.root_iteration = _Iteration(self.root, 0, vals, list(flow.npreds), list(flow.readers))
        self.root.iterations[0] = self.root_iteration
        self.root.newest = 0

    # ---- running -------------------------------------------------------------------------------
    def run(self) -> tuple[int, BaseException] | None:
        """Runs every step that becomes runnable; returns None, or (failing step index, error)."""
        it = self.root_iteration
        with self.lock:
            for i in self.flow.roots:
                self._enqueue(i, it)
        on_abort = getattr(self.step, "on_abort", None)
        remove = None if on_abort is None else on_abort(self._cancel)
        try:
            self._drain(main=True)
        finally:
            if remove is not None:
                remove()
        return self.failure

    def _cancel(self, error: BaseException) -> None:
        """The step was aborted (maybe on a thread holding this run's lock): noted, acted on by the runner threads."""
        if self.cancelled is None:
            self.cancelled = error

    def _drain(self, main: bool, done: tuple | None = None) -> None:
        """Runs ready steps; the calling thread waits for in-flight ones, a helper returns when idle.

        Finishing a step and taking the next one is one trip through the lock.
        """
        lock = self.lock
        flushed = False
        lock.acquire()
        try:
            while True:
                if done is not None:
                    self._finish(*done)
                    done = None
                if self.failure is None and self.ready:
                    i, it = self.ready.popleft()
                    if self.cancelled is not None:
                        self._fail(i, self.cancelled)  # named after the step it stopped before
                        continue
                    if self.ready and self.helpers < self.max_helpers:
                        self.helpers += 1
                        _POOL.submit(self._help)
                elif not flushed and self.step is not None:
                    # Out of steps that cannot block: let out the sends the step holds back first (outside the
                    # lock), before any kernel waits, since what it waits for may depend on one of them (two workers
                    # sharing a ps stalled for seconds without this; sent only after the receives were handed to
                    # threads, they reached the peer a millisecond late).
                    flushed = True
                    lock.release()
                    try:
                        self.step.before_wait()
                    finally:
                        lock.acquire()
                    continue
                elif self.failure is None and self.ready_blocking:
                    i, it = self.ready_blocking.popleft()
                    if self.ready_blocking:
                        # Other blocking kernels are ready too: each gets a thread, the last one this one.
                        self.in_flight += 1
                        _POOL.submit(lambda i=i, it=it: self._run_then_help(i, it))
                        continue
                    # Nothing else is runnable: the blocking kernel may wait on this thread.
                elif main and self.in_flight:
                    self.waiting += 1
                    self.cond.wait(_WAIT_SECS)
                    self.waiting -= 1
                    continue
                else:
                    return
                flushed = False
                self.in_flight += 1
                lock.release()
                try:
                    done = self._run_step(i, it)
                finally:
                    lock.acquire()
        finally:
            lock.release()

    def _help(self) -> None:
        _kernel_thread(self.intra_threads)
        try:
            self._drain(main=False)
        finally:
            with self.lock:
                self.helpers -= 1
                if self.waiting:
                    self.cond.notify()

    def _run_then_help(self, i: int, it: _Iteration) -> None:
        _kernel_thread(self.intra_threads)
        self._drain(main=False, done=self._run_step(i, it))

    def _run_step(self, i: int, it: _Iteration) -> tuple:
        """Runs step ``i`` of ``it`` without the lock; returns what :meth:`_finish` needs.

        Its thread's CPU time goes into :attr:`cpu_secs` before :meth:`_finish` can let the run end (added without
        the lock: an estimate may lose a rare race, as ``executed`` may)."""
        start = time.thread_time()
        try:
            return self._run_kernel(i, it)
        finally:
            self.cpu_secs += time.thread_time() - start

    def _run_kernel(self, i: int, it: _Iteration) -> tuple:
        flow = self.flow
        kind = flow.kinds[i]
        vals = it.vals
        if kind == NORMAL:
            if flow.may_be_dead:
                dead = i in it.dead_ctl
                if not dead:
                    for s in flow.ins[i]:
                        if vals[s] is DEAD:
                            dead = True
                            break
                if dead and i not in flow.transfers:
                    for s in flow.outs[i]:
                        vals[s] = DEAD
                    return i, it, True, None, None
            try:
                if self.deadline is not None and time.monotonic() > self.deadline:
                    raise errors.DeadlineExceededError(None, None, "Timed out: the step ran past its deadline")
                if self.trace is None:
                    flow.steps[i](vals)
                else:
                    start = time.perf_counter()
                    flow.steps[i](vals)
                    self.trace.append((self.ops[i], start, time.perf_counter()))
            except Exception as exc:  # noqa: BLE001 - handed to the caller, which wraps it naming the node
                return i, it, False, exc, None
            return i, it, False, None, None
        if kind == SWITCH:
            try:
                return i, it, self._switch(i, it), None, None
            except Exception as exc:  # noqa: BLE001
                return i, it, False, exc, None
        if kind == MERGE:
            return i, it, vals[flow.outs[i][0]] is DEAD, None, None
        if kind == LOOP:
            return self._run_loop(i, it)
        return i, it, False, None, None

    def _finish(self, i: int, it: _Iteration, dead: bool, error: BaseException | None, extra: Any) -> None:
        """Step ``i`` of ``it`` ran (lock held): passes its outputs on, drops the values it read last."""
        self.in_flight -= 1
        if error is not None:
            self._fail(i, error)
            return
        if self.failure is not None:
            if self.waiting:
                self.cond.notify()
            return
        flow = self.flow
        kind = flow.kinds[i]
        self.executed += 1
        if kind <= MERGE:
            self._propagate(i, it, dead)
        elif kind == ENTER:
            self._enter(i, it)
        elif kind == EXIT:
            self._exit(i, it)
        elif kind == NEXT:
            self._next_iteration(i, it)
        else:
            self._loop_done(i, it, extra)
        reads = flow.reads[i]
        if reads:
            left, vals = it.left, it.vals
            for s in reads:
                left[s] -= 1
                if not left[s]:
                    vals[s] = None
        if kind <= MERGE:
            for s in flow.unread[i]:
                it.vals[s] = None
        it.outstanding -= 1
        if not it.outstanding:
            self._maybe_done(it)
        if self.waiting and (self.ready or self.ready_blocking or not self.in_flight):
            self.cond.notify()

    def _fail(self, i: int, error: BaseException) -> None:
        if self.failure is None:
            self.failure = (i, error)
            self.ready.clear()
            self.ready_blocking.clear()
            if self.step is not None and hasattr(self.step, "abort"):
                self.step.abort(
                    error
                    if isinstance(error, errors.OpError)
                    else errors.CancelledError(None, None, f"Step aborted: another op failed: {error}")
                )
        self.cond.notify_all()

    # ---- plain loops ---------------------------------------------------------------------------
    def _run_loop(self, i: int, it: _Iteration) -> tuple:
        """Runs a plain loop frame of ``it`` serially (its ``Enter``\\ s all arrived live)."""
        flow = self.flow
        loop = flow.loops[flow.loop_frame[i]]
        collected = it.children[loop.frame].collected or {}
        exits, failure, executed = run_serial_loop(
            loop,
            flow.steps,
            [collected[e] for e in loop.enters],
            len(it.vals),
            self.root_iteration.vals[0],
            self.deadline,
            self._check,
            self.trace,
            self.ops,
        )
        self.executed += executed  # racy by a few counts at most: only an estimate reads it
        if failure is not None:
            return failure[0], it, False, failure[1], None
        return i, it, False, None, exits

    def _check(self) -> None:
        """Between a plain loop's iterations: stops it when the step failed elsewhere or was aborted."""
        if self.failure is not None:
            raise LoopStoppedError
        error = self.cancelled
        if error is None and self._rendezvous is not None:
            error = self._rendezvous.aborted  # a peer failed, or the master aborted the step
        if error is not None:
            raise error

    def _loop_done(self, i: int, it: _Iteration, exits: Sequence[Any]) -> None:
        flow = self.flow
        loop = flow.loops[flow.loop_frame[i]]
        del it.children[loop.frame]
        vals = it.vals
        for (e, _), value in zip(loop.exits, exits):
            slot = flow.outs[e][0]
            if slot not in flow.unread[e]:
                vals[slot] = value
            self._propagate(e, it, False)

    # ---- scheduling (lock held) ----------------------------------------------------------------
    def _enqueue(self, i: int, it: _Iteration) -> None:
        it.outstanding += 1
        if self.flow.blocking[i]:
            self.ready_blocking.append((i, it))
        else:
            self.ready.append((i, it))

    def _propagate(self, i: int, it: _Iteration, dead: bool) -> None:
        """Step ``i`` finished in ``it`` (``dead``: without running): counts down the steps waiting on it."""
        flow = self.flow
        pending = it.pending
        kinds = flow.kinds
        for j in flow.data_succs[i]:
            if kinds[j] == MERGE:
                self._merge_arrival(j, it)
                continue
            pending[j] -= 1
            if not pending[j]:
                self._enqueue(j, it)
        for j in flow.ctl_succs[i]:
            if dead:
                it.dead_ctl.add(j)
            if kinds[j] == MERGE:
                continue
            pending[j] -= 1
            if not pending[j]:
                self._enqueue(j, it)

    def _merge_arrival(self, j: int, it: _Iteration) -> None:
        """One producer of ``Merge`` step ``j`` finished: fire on the first live input, or when all are dead."""
        state = it.merges.get(j)
        if state is None:
            state = it.merges[j] = [False, 0]
        if state[0]:
            return
        flow = self.flow
        vals = it.vals
        out = flow.outs[j]
        for index, s in enumerate(flow.ins[j]):
            value = vals[s]
            if value is not None and value is not DEAD:
                state[0] = True
                vals[out[0]] = value
                if len(out) > 1 and flow.readers[out[1]]:  # value_index, built only when something reads it
                    vals[out[1]] = torch.tensor(index, dtype=torch.int32)
                self._enqueue(j, it)
                return
        state[1] += 1
        fwd, back = flow.merge_fwd[j]
        expected = fwd if it.index == 0 or not back else back
        if state[1] >= max(1, expected):
            state[0] = True
            for s in out:
                vals[s] = DEAD
            self._enqueue(j, it)

    def _switch(self, i: int, it: _Iteration) -> bool:
        flow = self.flow
        vals = it.vals
        data_slot, pred_slot = flow.ins[i]
        false_slot, true_slot = flow.outs[i]
        data, pred = vals[data_slot], vals[pred_slot]
        if i in it.dead_ctl or data is DEAD or pred is DEAD:
            vals[false_slot] = vals[true_slot] = DEAD
            return True
        taken = bool(pred.item() if isinstance(pred, torch.Tensor) else pred)
        vals[true_slot if taken else false_slot] = data
        vals[false_slot if taken else true_slot] = DEAD
        return False

    def _child(self, it: _Iteration, name: str) -> _Frame:
        frame = it.children.get(name)
        if frame is None:
            frame = it.children[name] = _Frame(name, it, self.flow.enters_of.get(name, 1))
            self._new_iteration(frame, 0)
        return frame

    def _new_iteration(self, frame: _Frame, index: int) -> _Iteration:
        flow = self.flow
        vals = [None] * len(self.root_iteration.vals)
        context = self.root_iteration.vals[0]  # the step context, seen by kernels with where they run
        vals[0] = context if context is None else FrameStep(context, frame.path, index)
        it = _Iteration(frame, index, vals, list(flow.npreds), list(flow.readers))
        frame.iterations[index] = it
        frame.newest = index
        # Held while the constants arrive, so the iteration is not finished before the caller's value does.
        it.outstanding += 1
        for step, value in frame.constants:
            self._deliver(step, value, it)
        it.outstanding -= 1
        return it

    def _deliver(self, i: int, value: Any, target: _Iteration) -> None:
        """Puts the output of a frame-crossing step ``i`` into ``target`` and counts down its readers there."""
        target.vals[self.flow.outs[i][0]] = value
        target.outstanding += 1  # held while propagating, so the target is not finished under our feet
        self._propagate(i, target, value is DEAD)
        target.outstanding -= 1
        if target.outstanding == 0:
            self._maybe_done(target)

    def _enter(self, i: int, it: _Iteration) -> None:
        flow = self.flow
        value = DEAD if i in it.dead_ctl else it.vals[flow.ins[i][0]]
        name = flow.enter_frame[i]
        if name in flow.loops:
            frame = it.children.get(name)
            if frame is None:
                frame = it.children[name] = _Frame(name, it, flow.enters_of[name])
                frame.collected = {}
            if frame.collected is not None:
                frame.collected[i] = value
                frame.pending_enters -= 1
                if frame.pending_enters == 0:
                    if any(v is DEAD for v in frame.collected.values()):
                        self._expand(frame)  # a loop in a branch not taken: its exits go out dead
                    else:
                        self._enqueue(flow.loop_step[name], it)
                return
        frame = self._child(it, name)
        self._enter_value(i, value, frame)
        frame.pending_enters -= 1
        if frame.pending_enters == 0:
            first = frame.iterations.get(0)
            if first is not None and first.outstanding == 0:
                self._maybe_done(first)

    def _expand(self, frame: _Frame) -> None:
        """Runs a plain loop frame step by step after all: gives it its first iteration and its ``Enter`` values."""
        collected, frame.collected = frame.collected or {}, None
        first = self._new_iteration(frame, 0)
        first.outstanding += 1
        for i, value in collected.items():
            self._enter_value(i, value, frame)
        first.outstanding -= 1
        if first.outstanding == 0:
            self._maybe_done(first)

    def _enter_value(self, i: int, value: Any, frame: _Frame) -> None:
        if self.flow.enter_constant[i]:
            frame.constants.append((i, value))
            for target in list(frame.iterations.values()):
                self._deliver(i, value, target)
        else:
            first = frame.iterations.get(0)
            if first is not None:
                self._deliver(i, value, first)

    def _exit(self, i: int, it: _Iteration) -> None:
        value = it.vals[self.flow.ins[i][0]]
        if value is DEAD or i in it.dead_ctl:
            return  # a dead exit: sent out dead when the frame ends, unless a later iteration exits live
        frame = it.frame
        frame.live_exits.add(i)
        parent = frame.parent or it  # an Exit outside any loop passes its value on
        parent.vals[self.flow.outs[i][0]] = value
        self._propagate(i, parent, False)

    def _next_iteration(self, i: int, it: _Iteration) -> None:
        value = it.vals[self.flow.ins[i][0]]
        if value is DEAD or i in it.dead_ctl:
            return  # the loop ended in this iteration
        frame = it.frame
        index = it.index + 1
        target = frame.iterations.get(index)
        if target is None:
            if frame.deferred or len(frame.iterations) >= self.flow.parallel_iterations.get(frame.name, 10):
                frame.deferred.append((i, value, index))
                return
            target = self._new_iteration(frame, index)
        self._deliver(i, value, target)

    def _maybe_done(self, it: _Iteration) -> None:
        """Frees ``it`` when nothing more can happen in it, then the iterations and frames that waited on it."""
        frame = it.frame
        if frame is self.root:
            return
        limit = self.flow.parallel_iterations.get(frame.name, 10)
        while it is not None:
            if it.outstanding or it.children or frame.pending_enters or (it.index - 1) in frame.iterations:
                return
            del frame.iterations[it.index]
            if frame.deferred and len(frame.iterations) < limit:
                self._start_deferred(frame)  # a NextIteration waited for room
            it = frame.iterations.get(it.index + 1)
        if not frame.iterations and not frame.deferred:
            self._frame_done(frame)

    def _start_deferred(self, frame: _Frame) -> None:
        index = frame.deferred[0][2]
        target = self._new_iteration(frame, index)
        target.outstanding += 1
        while frame.deferred and frame.deferred[0][2] == index:
            step, value, _ = frame.deferred.popleft()
            self._deliver(step, value, target)
        target.outstanding -= 1

    def _frame_done(self, frame: _Frame) -> None:
        parent = frame.parent
        if parent is None or parent.children.get(frame.name) is not frame:
            return
        del parent.children[frame.name]
        parent.outstanding += 1
        for e in self.flow.exits_of.get(frame.name, ()):
            if e not in frame.live_exits:
                parent.vals[self.flow.outs[e][0]] = DEAD
                self._propagate(e, parent, True)
        parent.outstanding -= 1
        if parent.outstanding == 0:
            self._maybe_done(parent)
