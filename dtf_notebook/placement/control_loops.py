"""Control flow across tasks: the frames of a graph, and TF's *control loops* for loops that span tasks.

A ``while_loop`` runs in a frame: ``Enter`` moves values into it, ``NextIteration`` to its next iteration,
``Exit`` out of it. When the ops of one frame sit on several tasks, each task must run as many iterations
as the loop does, and a ``_Send``/``_Recv`` pair inside the frame must run once per iteration. As TF's
``graph_partition.cc`` (``AddControlFlow``, ``AddControlLoop``), every task holding ops of such a frame
gets a control loop of its own::

    start (Const, root frame) or the enclosing frame's control Merge
      -> Enter(frame) -> Merge -> Switch(pred = the loop's LoopCond) -:1-> NextIteration -> (back to the Merge)

The ``LoopCond`` value reaches every such task each iteration (an ordinary edge between tasks, so a
``_Send``/``_Recv`` pair in the frame), and every ``_Recv`` and ``_Send`` of the frame on a task waits on
that task's control ``Merge``, which fires once per iteration, the last one (where the condition is
false) included: both ends of every pair in a frame run in every iteration, and rendezvous keys carry
the frame and iteration (see :func:`~dtf_notebook.placement.partition.rendezvous_key`).

Everything here is pure: node dicts in, node dicts out.

Example:
    >>> nodes = [{"name": "x", "op": "Const", "input": []},
    ...          {"name": "e", "op": "Enter", "input": ["x"], "attr": {"frame_name": "loop"}},
    ...          {"name": "y", "op": "Neg", "input": ["e"]}, {"name": "out", "op": "Exit", "input": ["y"]}]
    >>> frames = find_frames(nodes)
    >>> [frames.frame_of[n] for n in ("x", "e", "y", "out")], frames.output_frame("out")
    (['', '', 'loop', 'loop'], '')
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes

NodeDict = dict[str, Any]

MERGES = frozenset({"Merge", "RefMerge"})
NEXT_ITERATIONS = frozenset({"NextIteration", "RefNextIteration"})
ENTERS = frozenset({"Enter", "RefEnter"})
EXITS = frozenset({"Exit", "RefExit"})
#: Op types whose presence means values may be dead (a branch not taken, a loop that ended).
CONTROL_FLOW_TYPES = frozenset({"Switch", "RefSwitch", "LoopCond", *MERGES, *NEXT_ITERATIONS, *ENTERS, *EXITS})
#: Names of the nodes of control loops start with this (TF's ``_cloop``); no user op's name can.
CONTROL_LOOP_PREFIX = "_cloop"


def source_of(ref: str) -> str:
    """The node an input names: ``"a:1"``, ``"^a"`` and ``"a"`` all name ``a``.

    Example:
        >>> source_of("^a/b"), source_of("a/b:2")
        ('a/b', 'a/b')
    """
    if ref.startswith("^"):
        return ref[1:]
    name, sep, index = ref.rpartition(":")
    return name if sep and index.isdigit() else ref


def is_back_edge(node: NodeDict, src: NodeDict) -> bool:
    """Whether ``src`` feeding ``node`` closes a loop: a ``NextIteration`` into a ``Merge``.

    Example:
        >>> is_back_edge({"op": "Merge"}, {"op": "NextIteration"}), is_back_edge({"op": "Merge"}, {"op": "Enter"})
        (True, False)
    """
    return node["op"] in MERGES and src["op"] in NEXT_ITERATIONS


@dataclass
class Frames:
    """Where each node of a graph runs, in TF's terms of frames (one per loop; "" is the root).

    Attributes:
        frame_of: Node name -> the frame its inputs live in and it runs in (an ``Enter`` runs in the enclosing
            frame and outputs into its own; an ``Exit`` runs in its loop's frame and outputs into the enclosing one).
        parent_of: Frame -> the frame it is entered from.
        loop_cond: Frame -> its ``LoopCond`` node.
        parallel_iterations: Frame -> the ``parallel_iterations`` of its ``Enter``\\ s.
        enter_frame: ``Enter`` node -> the frame it enters.
        exits: The ``Exit`` nodes.
    """

    frame_of: dict[str, str] = field(default_factory=dict)
    parent_of: dict[str, str] = field(default_factory=dict)
    loop_cond: dict[str, str] = field(default_factory=dict)
    parallel_iterations: dict[str, int] = field(default_factory=dict)
    enter_frame: dict[str, str] = field(default_factory=dict)
    exits: set[str] = field(default_factory=set)

    def output_frame(self, name: str) -> str:
        """The frame node ``name``'s outputs live in."""
        if name in self.enter_frame:
            return self.enter_frame[name]
        frame = self.frame_of.get(name, "")
        return self.parent_of.get(frame, "") if name in self.exits else frame

    def ancestry(self, frame: str) -> list[str]:
        """``frame`` and the frames around it, innermost first, the root ("") left out."""
        chain = []
        while frame:
            chain.append(frame)
            frame = self.parent_of.get(frame, "")
        return chain


def find_frames(nodes: Sequence[NodeDict]) -> Frames:
    """The frame of every node, by a breadth-first walk from the nodes without inputs (TF's
    ``BuildControlFlowInfo``; a node reached from two frames keeps the first, as the executor does).

    Example:
        >>> enter_attr = {"frame_name": "w", "parallel_iterations": 4}
        >>> nodes = [{"name": "i", "op": "Const", "input": []},
        ...          {"name": "e", "op": "Enter", "input": ["i"], "attr": enter_attr},
        ...          {"name": "m", "op": "Merge", "input": ["e", "n"]}, {"name": "c", "op": "LoopCond", "input": ["m"]},
        ...          {"name": "s", "op": "Switch", "input": ["m", "c"]}, {"name": "n", "op": "NextIteration",
        ...          "input": ["s:1"]}, {"name": "x", "op": "Exit", "input": ["s"]}]
        >>> frames = find_frames(nodes)
        >>> frames.frame_of["m"], frames.loop_cond, frames.parallel_iterations, frames.output_frame("x")
        ('w', {'w': 'c'}, {'w': 4}, '')
    """
    consumers: dict[str, list[str]] = {n["name"]: [] for n in nodes}
    info = Frames()
    by_name = {}
    for node in nodes:
        by_name[node["name"]] = node
        for ref in node.get("input", ()):
            consumers.setdefault(source_of(ref), []).append(node["name"])
        if node["op"] in ENTERS:
            attr = node.get("attr", {})
            frame = str(attr.get("frame_name", ""))
            info.enter_frame[node["name"]] = frame
            info.parallel_iterations.setdefault(frame, int(attr.get("parallel_iterations", 10) or 10))
        elif node["op"] in EXITS:
            info.exits.add(node["name"])
    pending = deque(n["name"] for n in nodes if not n.get("input"))
    for name in pending:
        info.frame_of[name] = ""
    while pending:
        name = pending.popleft()
        frame = info.frame_of[name]
        if name in info.enter_frame:
            info.parent_of.setdefault(info.enter_frame[name], frame)
        out = info.output_frame(name)
        for consumer in consumers.get(name, ()):
            if consumer in by_name and consumer not in info.frame_of:
                info.frame_of[consumer] = out
                pending.append(consumer)
    for node in nodes:
        if node["op"] == "LoopCond":
            info.loop_cond.setdefault(info.frame_of.get(node["name"], ""), node["name"])
    return info


@dataclass
class ControlLoops:
    """The control loops added for the frames that span tasks.

    Attributes:
        nodes: The added nodes (the loops' ``Enter``, ``Merge``, ``Switch``, ``NextIteration`` and start constants).
        placement: Their devices.
        merges: (frame, task) -> the name of that task's control ``Merge`` for the frame.
    """

    nodes: list[NodeDict] = field(default_factory=list)
    placement: dict[str, str] = field(default_factory=dict)
    merges: dict[tuple[str, str], str] = field(default_factory=dict)


def add_control_loops(
    order: Iterable[NodeDict],
    frames: Frames,
    placement: Mapping[str, str],
    task_of: Callable[[str], str],
    fresh: Callable[[str], str],
) -> ControlLoops:
    """A control loop on every task holding ops of a frame whose ops sit on more than one task.

    Args:
        order: The graph's nodes, producers first (a frame's tasks are taken in order of their first node).
        frames: The graph's frames (:func:`find_frames`).
        placement: Node name -> full device name.
        task_of: Device name -> its task.
        fresh: Makes a name unique in the graph (and takes it).

    Raises:
        ValueError: a frame spanning tasks has no ``LoopCond``.

    Example:
        >>> nodes = [{"name": "i", "op": "Const", "input": []},
        ...          {"name": "e", "op": "Enter", "input": ["i"], "attr": {"frame_name": "w"}},
        ...          {"name": "m", "op": "Merge", "input": ["e", "n"]}, {"name": "c", "op": "LoopCond", "input": ["m"]},
        ...          {"name": "s", "op": "Switch", "input": ["m", "c"]}, {"name": "t", "op": "Neg", "input": ["s:1"]},
        ...          {"name": "n", "op": "NextIteration", "input": ["t"]}]
        >>> wk, ps = "/job:w/replica:0/task:0/device:CPU:0", "/job:ps/replica:0/task:0/device:CPU:0"
        >>> placement = {n["name"]: wk for n in nodes} | {"t": ps}
        >>> loops = add_control_loops(nodes, find_frames(nodes), placement, lambda d: d.split("/device:")[0], str)
        >>> [(n["op"], n["input"]) for n in loops.nodes if loops.placement[n["name"]] == ps]
        ... # doctest: +NORMALIZE_WHITESPACE
        [('Const', []), ('Enter', ['_cloop/w/ps_0_0/start']), ('Merge', ['_cloop/w/ps_0_0/enter',
         '_cloop/w/ps_0_0/next']), ('Switch', ['_cloop/w/ps_0_0/merge', 'c']),
         ('NextIteration', ['_cloop/w/ps_0_0/switch:1'])]
    """
    members: dict[str, dict[str, str]] = {}  # frame -> task -> the device of its first node there
    for node in order:
        name = node["name"]
        device = placement[name]
        for frame in {*frames.ancestry(frames.frame_of.get(name, "")), *frames.ancestry(frames.output_frame(name))}:
            members.setdefault(frame, {}).setdefault(task_of(device), device)
    loops = ControlLoops()
    int32 = dtypes.int32
    # Outer frames first: an inner loop's Enter takes the enclosing control loop's Merge.
    for frame in sorted(members, key=lambda f: len(frames.ancestry(f))):
        tasks = members[frame]
        if len(tasks) < 2:
            continue
        cond = frames.loop_cond.get(frame)
        if cond is None:
            raise ValueError(
                f"Loop frame {frame!r} has ops on tasks {', '.join(tasks)} but no LoopCond to drive them; "
                "a loop spanning tasks must have one"
            )
        parent = frames.parent_of.get(frame, "")
        for task, device in tasks.items():
            stem = f"{CONTROL_LOOP_PREFIX}/{frame}/{_short(task)}"
            names = {part: fresh(f"{stem}/{part}") for part in ("enter", "merge", "switch", "next")}
            added = []
            if parent:
                start = loops.merges[(parent, task)]
            else:
                start = fresh(f"{stem}/start")
                added.append(
                    {
                        "name": start,
                        "op": "Const",
                        "input": [],
                        "attr": {"dtype": int32, "value": np.array(0, np.int32)},
                    }
                )
            iterations = frames.parallel_iterations.get(frame, 10)
            enter_attr = {"T": int32, "frame_name": frame, "is_constant": False, "parallel_iterations": iterations}
            merge_attr = {"T": int32, "N": 2}
            added += [
                {"name": names["enter"], "op": "Enter", "input": [start], "attr": enter_attr},
                {"name": names["merge"], "op": "Merge", "input": [names["enter"], names["next"]], "attr": merge_attr},
                {"name": names["switch"], "op": "Switch", "input": [names["merge"], cond], "attr": {"T": int32}},
                {"name": names["next"], "op": "NextIteration", "input": [f"{names['switch']}:1"], "attr": {"T": int32}},
            ]
            for node in added:
                node["device"] = device
                loops.placement[node["name"]] = device
            loops.nodes += added
            loops.merges[(frame, task)] = names["merge"]
    return loops


def _short(task: str) -> str:
    # "/job:worker/replica:0/task:1" -> "worker_0_1", to keep added names valid node names.
    return "_".join(part.split(":", 1)[-1] for part in task.strip("/").split("/"))


@dataclass
class ControlFlow:
    """What partitioning a graph with control flow needs: its frames and the control loops added for it.

    Attributes:
        frames: The graph's frames.
        loops: The control loops added.
        waits: Node -> the control Merges it must come after: both ends of a value crossing tasks inside a loop.
    """

    frames: Frames
    loops: ControlLoops
    waits: dict[str, list[str]]

    def control_merge(self, src: str, task: str) -> str | None:
        """The control Merge that a transfer of ``src``'s values to or from ``task`` waits on (None outside
        loops): that of the frame ``src`` outputs into, on ``task``.

        Raises:
            ValueError: the frame has no control loop on ``task``.
        """
        frame = self.frames.output_frame(src)
        if not frame:
            return None
        merge = self.loops.merges.get((frame, task))
        if merge is None:
            raise ValueError(
                f"Node {src!r} sends from inside loop frame {frame!r} to task {task}, which runs no part of the loop"
            )
        return merge


def plan_control_flow(
    order: Sequence[NodeDict],
    by_name: Mapping[str, NodeDict],
    placement: dict[str, str],
    task_of: Callable[[str], str],
    fresh: Callable[[str], str],
) -> ControlFlow:
    """Frames and control loops of a placed graph whose ops are ``order`` (producers first, back edges aside).

    ``placement`` is updated: a ``NextIteration`` goes to its ``Merge``'s device (a loop's back edge never
    crosses tasks), and the added nodes get theirs.

    Example:
        >>> nodes = [{"name": "i", "op": "Const", "input": []},
        ...          {"name": "e", "op": "Enter", "input": ["i"], "attr": {"frame_name": "w"}},
        ...          {"name": "m", "op": "Merge", "input": ["e", "n"]}, {"name": "c", "op": "LoopCond", "input": ["m"]},
        ...          {"name": "s", "op": "Switch", "input": ["m", "c"]}, {"name": "t", "op": "Neg", "input": ["s:1"]},
        ...          {"name": "n", "op": "NextIteration", "input": ["t"]}]
        >>> wk, ps = "/job:w/replica:0/task:0/device:CPU:0", "/job:ps/replica:0/task:0/device:CPU:0"
        >>> placement = {n["name"]: wk for n in nodes} | {"t": ps, "n": ps}
        >>> flow = plan_control_flow(nodes, {n["name"]: n for n in nodes}, placement,
        ...                          lambda d: d.split("/device:")[0], str)
        >>> placement["n"] == wk, flow.waits["t"], flow.waits["n"]
        (True, ['_cloop/w/ps_0_0/merge'], ['_cloop/w/w_0_0/merge'])
    """
    for node in order:
        for src in map(source_of, node.get("input", ())):
            if is_back_edge(node, by_name[src]):
                placement[src] = placement[node["name"]]
    frames = find_frames(order)
    loops = add_control_loops(order, frames, placement, task_of, fresh)
    placement.update(loops.placement)
    flow = ControlFlow(frames, loops, {})
    for node in (*order, *loops.nodes):
        dst = node["name"]
        for src in map(source_of, node.get("input", ())):
            src_task, dst_task = task_of(placement[src]), task_of(placement[dst])
            if src_task == dst_task:
                continue
            # Inside a loop, both ends of a transfer wait on their task's control loop: it orders them.
            for name, task in ((dst, dst_task), (src, src_task)):
                merge = flow.control_merge(src, task)
                if merge is not None and merge not in flow.waits.setdefault(name, []):
                    flow.waits[name].append(merge)
    return flow
