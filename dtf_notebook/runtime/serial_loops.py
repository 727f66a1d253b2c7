"""Plain while loops run as two compiled serial sub-plans (condition, body) in a Python ``while`` loop.

TF1's ``while_loop`` builds a frame of ``Enter -> Merge -> (condition) -> LoopCond -> Switch -> Identity ->
(body) -> NextIteration`` with ``Exit``\\ s on the switches' false outputs. Run as a general dataflow (see
:mod:`.dataflow`), every step of every iteration costs a trip through the scheduler: counting predecessors,
queueing, locking. When a frame is *plain* (no nested frame, no ``cond`` inside, no kernel that may block, no
``_Send``/``_Recv``, one predicate for all its switches) the schedule of an iteration never changes, so it is
compiled once into:

- **head**: the steps that run in every iteration, the last included (the ``Merge``\\ s, the condition,
  anything that depends only on loop invariants), in plan order;
- the predicate's slot, and for each ``Switch`` the slot of its data and of its true output;
- **body**: the steps that run when the predicate holds (everything downstream of a switch's true output),
  ending at the ``NextIteration``\\ s, whose inputs become the next iteration's ``Merge`` values;
- the ``Exit``\\ s, which take their switch's data when the predicate fails.

``Const`` steps without inputs are hoisted out of the loop. One list of value slots serves every iteration:
a slot read in an iteration is always written earlier in the same iteration, so a value of iteration 3 is never
read in iteration 4 (only what ``NextIteration`` carries crosses). Running iterations one after another is one
of the schedules TF1's executor may pick (``parallel_iterations`` bounds how many run at once; it never
promises more than one).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     r = tf.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2.0), [0, tf.constant(1.0)])
    ...     with tf.Session() as sess:
    ...         print([float(v) for v in sess.run(r)])
    [3.0, 8.0]
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dtf_notebook import errors
from dtf_notebook.lazy_modules import torch
from dtf_notebook.runtime.step_kinds import ENTER, EXIT, MERGE, NEXT, NORMAL, SWITCH

#: Op types whose kernels send or receive between tasks: a frame holding one runs as a general dataflow, where
#: each iteration has a rendezvous key of its own.
_COMMUNICATING = frozenset({"_Send", "_Recv", "_HostSend", "_HostRecv"})
#: Op types whose kernel returns its input as it is.
_IDENTITIES = frozenset({"Identity", "LoopCond"})


class LoopStoppedError(Exception):
    """Raised by a run's ``check`` between a loop's iterations when another op of the step failed: the loop stops
    without an error of its own (the step reports the first one).

    Example:
        >>> isinstance(LoopStoppedError(), Exception)
        True
    """


@dataclass(frozen=True)
class SerialLoop:
    """A plain while-loop frame compiled to serial sub-plans (see the module docstring).

    Attributes:
        frame: The frame's name.
        enters: The frame's ``Enter`` steps (they run in the parent frame).
        enter_slots: The slot each ``Enter`` writes in the loop's values.
        hoisted: ``Const`` steps run once before the first iteration.
        merge_outs: Each ``Merge``'s value slot.
        merge_index: Each ``Merge``'s ``value_index`` slot when something reads it, else None.
        entry: The slot holding each ``Merge``'s first value (its ``Enter``'s output).
        back: The slot holding each ``Merge``'s next value (the input of its ``NextIteration``).
        head: Steps run in every iteration, in plan order.
        first: The step named when the loop fails between steps (its deadline passed): its first ``Merge``.
        pred: The slot of the predicate all switches read (or the input of the ``LoopCond`` writing it).
        moves: (source, target) slots copied when the predicate holds: each ``Switch``'s data to its true output,
            and to the output of an ``Identity`` reading that alone (the body's first step, as a move).
        body: Steps run when the predicate holds, in plan order.
        exits: (``Exit`` step, the slot of its switch's data) for each ``Exit``.
    """

    frame: str
    enters: tuple[int, ...]
    enter_slots: tuple[int, ...]
    hoisted: tuple[int, ...]
    merge_outs: tuple[int, ...]
    merge_index: tuple[int | None, ...]
    entry: tuple[int, ...]
    back: tuple[int, ...]
    head: tuple[int, ...]
    first: int
    pred: int
    moves: tuple[tuple[int, int], ...]
    body: tuple[int, ...]
    exits: tuple[tuple[int, int], ...]


def plan_serial_loops(
    kinds: Sequence[int],
    ins: Sequence[Sequence[int]],
    outs: Sequence[Sequence[int]],
    data_preds: Sequence[Sequence[int]],
    control_preds: Sequence[Sequence[int]],
    blocking: Sequence[bool],
    frame_of: Sequence[str],
    enter_frame: Sequence[str],
    enter_constant: Sequence[bool],
    readers: Sequence[int],
    types: Sequence[str],
) -> dict[str, SerialLoop]:
    """The plain loop frames of a plan, compiled (frames that are not plain are left out).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     i = tf.while_loop(lambda i: i < 10, lambda i: i + 3, [tf.constant(0)])
        ...     with tf.Session() as sess:
        ...         _ = sess.run(i)
        ...         plan = next(iter(sess._backend._plans.values()))[1]
        >>> list(plan._flow.loops)
        ['while/while_context']
    """
    members: dict[str, list[int]] = {}
    for i, frame in enumerate(frame_of):
        if frame:
            members.setdefault(frame, []).append(i)
    enters: dict[str, list[int]] = {}
    for i, kind in enumerate(kinds):
        if kind == ENTER:
            enters.setdefault(enter_frame[i], []).append(i)
    graph = _Steps(kinds, ins, outs, data_preds, control_preds, enter_constant, readers)
    loops = {}
    for frame, steps in members.items():
        plain = all(kinds[i] != ENTER and not blocking[i] and types[i] not in _COMMUNICATING for i in steps)
        loop = _plan_loop(frame, steps, enters.get(frame, []), graph, types) if plain else None
        if loop is not None:
            loops[frame] = loop
    return loops


@dataclass(frozen=True)
class _Steps:
    kinds: Sequence[int]
    ins: Sequence[Sequence[int]]
    outs: Sequence[Sequence[int]]
    data_preds: Sequence[Sequence[int]]
    control_preds: Sequence[Sequence[int]]
    enter_constant: Sequence[bool]
    readers: Sequence[int]


def _plan_loop(frame: str, steps: list[int], enters: list[int], g: _Steps, types: Sequence[str]) -> SerialLoop | None:
    """Compiles one frame, or returns None when it is not a plain loop."""
    kinds, ins, outs = g.kinds, g.ins, g.outs
    switches = [i for i in steps if kinds[i] == SWITCH]
    merges = [i for i in steps if kinds[i] == MERGE]
    nexts = [i for i in steps if kinds[i] == NEXT]
    if not enters or not switches or len(merges) != len(nexts):
        return None
    in_frame = set(steps)
    producer = {slot: i for i in (*steps, *enters) for slot in outs[i]}
    pred = ins[switches[0]][1]
    switch_side: dict[int, int] = {}  # a switch output slot -> 1 (true: body) or 2 (false: exit side)
    for s in switches:
        if ins[s][1] != pred:
            return None  # a cond inside the loop: a predicate of its own
        switch_side[outs[s][0]], switch_side[outs[s][1]] = 2, 1
    loop_var_enters = {e for e in enters if not g.enter_constant[e]}
    for m in merges:
        first, back = (producer.get(slot, -1) for slot in ins[m])
        if g.control_preds[m] or first not in loop_var_enters or back not in in_frame or kinds[back] != NEXT:
            return None
    if any(g.readers[outs[e][0]] != 1 for e in loop_var_enters) or len(loop_var_enters) != len(merges):
        return None  # a loop variable's first value reaches iteration 0 only: the Merge alone may read it
    # Phases: 0 = head (every iteration), 1 = body (after a true output), 2 = exit side (after a false output).
    phase: dict[int, int] = {m: 0 for m in merges}
    for i in steps:  # plan order is a topological order, back edges aside
        if kinds[i] == MERGE:
            continue
        p = 0
        for slot in ins[i]:
            p |= switch_side.get(slot, 0)
        for q in (*g.data_preds[i], *g.control_preds[i]):
            if q in in_frame:
                if kinds[q] == SWITCH:
                    if not any(slot in switch_side for slot in ins[i] if slot in outs[q]):
                        return None  # waits on a switch by a control edge only
                elif q in phase:
                    p |= phase[q]
                else:
                    return None  # a NextIteration, or a step not in plan order
            elif q not in enters or q in loop_var_enters:
                return None
        kind = kinds[i]
        if p == 3 or (kind == SWITCH and p != 0) or (kind == NEXT and p != 1):
            return None
        if (kind == EXIT) != (p == 2) or (kind == EXIT and ins[i][0] not in switch_side):
            return None  # only an Exit may follow a false output, and it reads it directly
        if kind not in (NORMAL, SWITCH, NEXT, EXIT):
            return None
        phase[i] = p
    if producer.get(pred) not in phase or phase[producer[pred]] != 0 or kinds[producer[pred]] != NORMAL:
        return None
    data_of_false = {outs[s][0]: ins[s][0] for s in switches}
    moves = [(ins[s][0], outs[s][1]) for s in switches]
    dropped = {i for i in steps if types[i] == "Const" and not ins[i] and kinds[i] == NORMAL}
    hoisted = tuple(sorted(dropped))
    # Identities cost a kernel call each: the loop's predicate is read before its LoopCond, and an Identity
    # reading a true output alone becomes a move.
    loop_cond = producer[pred]
    if types[loop_cond] in _IDENTITIES and not g.control_preds[loop_cond] and len(ins[loop_cond]) == 1:
        if g.readers[pred] == len(switches) and producer.get(ins[loop_cond][0]) in phase:
            pred = ins[loop_cond][0]
            dropped.add(loop_cond)
    data_of_true = {outs[s][1]: ins[s][0] for s in switches}
    for i in steps:
        if phase.get(i) == 1 and types[i] in _IDENTITIES and not g.control_preds[i] and len(ins[i]) == 1:
            source = data_of_true.get(ins[i][0])
            if source is not None and len(outs[i]) == 1:
                moves.append((source, outs[i][0]))
                dropped.add(i)
    kept = [i for i in steps if kinds[i] == NORMAL and i not in dropped]
    return SerialLoop(
        frame=frame,
        enters=tuple(enters),
        enter_slots=tuple(outs[e][0] for e in enters),
        hoisted=hoisted,
        merge_outs=tuple(outs[m][0] for m in merges),
        merge_index=tuple(outs[m][1] if len(outs[m]) > 1 and g.readers[outs[m][1]] else None for m in merges),
        entry=tuple(ins[m][0] for m in merges),
        back=tuple(ins[producer[ins[m][1]]][0] for m in merges),
        head=tuple(i for i in kept if phase[i] == 0),
        first=merges[0],
        pred=pred,
        moves=tuple(moves),
        body=tuple(i for i in kept if phase[i] == 1),
        exits=tuple((i, data_of_false[ins[i][0]]) for i in steps if kinds[i] == EXIT),
    )


def run_serial_loop(
    loop: SerialLoop,
    steps: Sequence[Callable[[list], None]],
    enter_values: Sequence[Any],
    num_slots: int,
    context: Any,
    deadline: float | None,
    check: Callable[[], None] | None,
    trace: list | None,
    ops: Sequence[Any],
) -> tuple[list[Any], tuple[int, BaseException] | None, int]:
    """Runs one execution of ``loop``: returns its exit values (in ``loop.exits`` order), the failure (failing step,
    error) if any, and how many steps ran.

    ``check`` runs between iterations: it raises the step's abort error (a closed session), or
    :class:`LoopStoppedError` when another op of the step failed. ``deadline`` (``time.monotonic()``) is checked there
    too. ``context`` fills slot 0.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     out = tf.while_loop(lambda x: x < 100.0, lambda x: x * 3.0, [tf.constant(1.0)])
        ...     with tf.Session() as sess:
        ...         print(sess.run(out))
        243.0
    """
    vals: list[Any] = [None] * num_slots
    vals[0] = context
    for slot, value in zip(loop.enter_slots, enter_values):
        vals[slot] = value
    head = [steps[i] for i in loop.head]
    body = [steps[i] for i in loop.body]
    if trace is not None:
        head = [_timed(steps[i], ops[i], trace) for i in loop.head]
        body = [_timed(steps[i], ops[i], trace) for i in loop.body]
    merge_outs, back, moves, pred = loop.merge_outs, loop.back, loop.moves, loop.pred
    indexed = [(slot, k) for k, slot in enumerate(loop.merge_index) if slot is not None]
    phase: Sequence[int] = loop.hoisted
    k = -1
    try:
        for k, i in enumerate(loop.hoisted):  # noqa: B007 - k names the failing step below
            steps[i](vals)
        carried = [vals[s] for s in loop.entry]
        iteration = 0
        while True:
            for slot, value in zip(merge_outs, carried):
                vals[slot] = value
            for slot, _ in indexed:
                vals[slot] = torch.tensor(1 if iteration else 0, dtype=torch.int32)
            phase = loop.head
            for k, fn in enumerate(head):  # noqa: B007
                fn(vals)
            if not vals[pred]:
                break
            for source, target in moves:
                vals[target] = vals[source]
            phase = loop.body
            for k, fn in enumerate(body):  # noqa: B007
                fn(vals)
            carried = [vals[s] for s in back]
            iteration += 1
            phase, k = (loop.first,), 0
            if deadline is not None and time.monotonic() > deadline:
                raise errors.DeadlineExceededError(None, None, "Timed out: the step ran past its deadline")
            if check is not None:
                check()
    except LoopStoppedError:
        return [], None, 0
    except Exception as exc:  # noqa: BLE001 - handed to the caller, which wraps it naming the node
        return [], (phase[k] if 0 <= k < len(phase) else loop.first, exc), 0
    return [vals[data] for _, data in loop.exits], None, iteration * (len(head) + len(body)) + len(head)


def _timed(fn: Callable[[list], None], op: Any, trace: list) -> Callable[[list], None]:
    def run(vals: list) -> None:
        start = time.perf_counter()
        fn(vals)
        trace.append((op, start, time.perf_counter()))

    return run
