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
- **Blocking kernels** (``may_block``) never hold the step hostage: when other work is ready they run on
  threads of their own; when nothing else can run they run on the calling thread. A thread that finishes
  a step keeps running what became ready, so no value waits behind a blocked kernel.
- **Errors.** The first kernel error stops the step: nothing more starts, the step context is aborted
  (kernels blocked in it give up), and the error is returned with the failing step's index.

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from dtf_notebook import errors

#: Step kinds: an ordinary kernel, and the five control-flow primitives the executor runs itself.
NORMAL, SWITCH, MERGE, ENTER, EXIT, NEXT = range(6)

#: Op types of each control-flow kind (``Ref*`` forward a variable itself).
KIND_OF_TYPE = {
    "Switch": SWITCH,
    "RefSwitch": SWITCH,
    "Merge": MERGE,
    "RefMerge": MERGE,
    "Enter": ENTER,
    "RefEnter": ENTER,
    "Exit": EXIT,
    "RefExit": EXIT,
    "NextIteration": NEXT,
    "RefNextIteration": NEXT,
}

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


@dataclass
class FlowGraph:
    """A plan's steps as a graph with control-flow structure (built once per plan).

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


def build_flow_graph(
    steps: Sequence[Callable[[list], None]],
    kinds: Sequence[int],
    ins: Sequence[Sequence[int]],
    outs: Sequence[Sequence[int]],
    control_preds: Sequence[Sequence[int]],
    blocking: Sequence[bool],
    enter_attrs: dict[int, tuple[str, bool, int]],
) -> FlowGraph:
    """Derives successors, predecessor counts and frames from the steps' slots and control edges.

    ``enter_attrs`` maps each ``Enter`` step to (frame name, is_constant, parallel_iterations). A
    ``Merge`` input written by a ``NextIteration`` step is a back edge: it does not count towards the
    frame computation, only towards the ``Merge``'s arrivals.

    Example:
        >>> flow = build_flow_graph([None, None], [NORMAL, NORMAL], [(), (1,)], [(1,), (2,)], [(), ()],
        ...                         [False, False], {})
        >>> flow.data_succs, flow.npreds, flow.frame_of
        ([(1,), ()], [0, 1], ['', ''])
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
    return FlowGraph(
        steps,
        list(kinds),
        [tuple(s) for s in ins],
        [tuple(s) for s in outs],
        [tuple(s) for s in data_succs],
        [tuple(s) for s in ctl_succs],
        npreds,
        list(blocking),
        frames,
        enter_frame,
        enter_constant,
        parallel,
        enters_of,
        {k: tuple(v) for k, v in exits.items()},
        merge_fwd,
    )


class _Iteration:
    """One iteration of one frame: its value slots and what is left to run in it."""

    __slots__ = ("frame", "index", "vals", "pending", "dead_ctl", "merges", "outstanding", "children")

    def __init__(self, frame: _Frame, index: int, vals: list, pending: list[int]) -> None:
        self.frame = frame
        self.index = index
        self.vals = vals
        self.pending = pending
        self.dead_ctl: set[int] = set()  # steps a dead op waits on by a control edge
        self.merges: dict[int, list] = {}  # Merge step -> [fired, dead arrivals]
        self.outstanding = 0  # steps scheduled and not finished
        self.children: dict[str, _Frame] = {}  # live child frames started in this iteration


class _Frame:
    """One execution of a loop: its live iterations, constants and the ``Enter``\\ s still to come."""

    __slots__ = ("name", "parent", "iterations", "newest", "constants", "pending_enters", "deferred", "live_exits")

    def __init__(self, name: str, parent: _Iteration | None, pending_enters: int) -> None:
        self.name = name
        self.parent = parent
        self.iterations: dict[int, _Iteration] = {}
        self.newest = -1
        self.constants: list[tuple[int, Any]] = []  # (Enter step, value) reaching every iteration
        self.pending_enters = pending_enters
        self.deferred: deque[tuple[int, Any, int]] = deque()  # (NextIteration step, value, target index)
        self.live_exits: set[int] = set()


class FlowRun:
    """The state of one run of a :class:`FlowGraph` (one ``sess.run`` step, or one partition of it).

    Example:
        >>> flow = build_flow_graph([lambda v: v.__setitem__(2, v[1] * 2)], [NORMAL], [(1,)], [(2,)], [()],
        ...                         [False], {})
        >>> vals = [None, 21, None]
        >>> FlowRun(flow, vals, None, None, threads=1, step_ops=[None]).run(), vals[2]
        (None, 42)
    """

    def __init__(
        self,
        flow: FlowGraph,
        vals: list,
        step: Any,
        trace: list | None,
        threads: int,
        step_ops: Sequence[Any],
    ) -> None:
        self.flow = flow
        self.step = step
        self.trace = trace
        self.ops = step_ops
        self.deadline = None if step is None else step.deadline
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        self.ready: deque[tuple[int, _Iteration]] = deque()
        self.ready_blocking: deque[tuple[int, _Iteration]] = deque()
        self.in_flight = 0
        self.helpers = 0
        self.max_helpers = max(0, threads - 1)
        self.intra_threads = torch.get_num_threads()
        self.failure: tuple[int, BaseException] | None = None
        self.root = _Frame("", None, 0)
        self.root_iteration = _Iteration(self.root, 0, vals, list(flow.npreds))
        self.root.iterations[0] = self.root_iteration
        self.root.newest = 0

    # ---- running -------------------------------------------------------------------------------
    def run(self) -> tuple[int, BaseException] | None:
        """Runs every step that becomes runnable; returns None, or (failing step index, error)."""
        it = self.root_iteration
        with self.lock:
            for i, n in enumerate(self.flow.npreds):
                if n == 0 and self.flow.frame_of[i] == "":
                    self._enqueue(i, it)
        self._drain(main=True)
        return self.failure

    def _drain(self, main: bool) -> None:
        """Runs ready steps; the calling thread waits for in-flight ones, a helper returns when idle."""
        cond = self.cond
        while True:
            with cond:
                while True:
                    if self.failure is not None and not (main and self.in_flight):
                        return
                    if self.failure is None and self.ready:
                        i, it = self.ready.popleft()
                        inline = True
                        break
                    if self.failure is None and self.ready_blocking:
                        i, it = self.ready_blocking.popleft()
                        # Nothing else is runnable: a blocking kernel may wait on this thread, unless other
                        # blocking kernels are ready too (each then gets a thread, the last one this one).
                        inline = not self.ready_blocking
                        break
                    if not main:
                        return
                    if not self.in_flight:
                        return
                    cond.wait(_WAIT_SECS)
                self.in_flight += 1
                if not inline:
                    _POOL.submit(lambda i=i, it=it: self._execute_then_help(i, it))
                    continue
                if self.max_helpers and len(self.ready) > 1 and self.helpers < self.max_helpers:
                    self.helpers += 1
                    _POOL.submit(self._help)
            self._execute(i, it)

    def _help(self) -> None:
        if torch.get_num_threads() != self.intra_threads:
            torch.set_num_threads(self.intra_threads)  # OpenMP's thread count is per thread
        try:
            self._drain(main=False)
        finally:
            with self.cond:
                self.helpers -= 1
                self.cond.notify_all()

    def _execute_then_help(self, i: int, it: _Iteration) -> None:
        self._execute(i, it)
        self._drain(main=False)

    def _execute(self, i: int, it: _Iteration) -> None:
        """Runs step ``i`` of iteration ``it`` (counted in flight by the caller), then propagates its outputs."""
        flow = self.flow
        kind = flow.kinds[i]
        vals = it.vals
        error: BaseException | None = None
        dead = False
        if kind == NORMAL:
            dead = i in it.dead_ctl or any(vals[s] is DEAD for s in flow.ins[i])
            if dead:
                for s in flow.outs[i]:
                    vals[s] = DEAD
            else:
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
                    error = exc
        elif kind == SWITCH:
            try:
                dead = self._switch(i, it)
            except Exception as exc:  # noqa: BLE001
                error = exc
        elif kind == MERGE:
            dead = vals[flow.outs[i][0]] is DEAD
        with self.cond:
            self.in_flight -= 1
            if error is not None:
                self._fail(i, error)
                return
            if self.failure is not None:
                self.cond.notify_all()
                return
            if kind == NORMAL or kind == SWITCH or kind == MERGE:
                self._propagate(i, it, dead)
            elif kind == ENTER:
                self._enter(i, it)
            elif kind == EXIT:
                self._exit(i, it)
            else:
                self._next_iteration(i, it)
            it.outstanding -= 1
            if it.outstanding == 0:
                self._maybe_done(it)
            if not self.in_flight:
                self.cond.notify_all()

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

    # ---- scheduling (lock held) ----------------------------------------------------------------
    def _enqueue(self, i: int, it: _Iteration) -> None:
        it.outstanding += 1
        if self.flow.blocking[i]:
            self.ready_blocking.append((i, it))
        else:
            self.ready.append((i, it))
        self.cond.notify()

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
                if len(out) > 1:
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
        vals = [None] * len(self.root_iteration.vals)
        vals[0] = self.root_iteration.vals[0]  # the step context
        it = _Iteration(frame, index, vals, list(self.flow.npreds))
        frame.iterations[index] = it
        frame.newest = index
        for step, value in frame.constants:
            self._deliver(step, value, it)
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
        value = it.vals[flow.ins[i][0]]
        if i in it.dead_ctl:
            value = DEAD
        frame = self._child(it, flow.enter_frame[i])
        if flow.enter_constant[i]:
            frame.constants.append((i, value))
            for target in list(frame.iterations.values()):
                self._deliver(i, value, target)
        else:
            first = frame.iterations.get(0)
            if first is not None:
                self._deliver(i, value, first)
        frame.pending_enters -= 1
        if frame.pending_enters == 0:
            first = frame.iterations.get(0)
            if first is not None and first.outstanding == 0:
                self._maybe_done(first)

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
