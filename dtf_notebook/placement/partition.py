"""Prunes a placed graph and splits it into one subgraph per task, joined by ``_Send``/``_Recv`` pairs.

Works on plain node dicts (``Operation.node_def``). :func:`partition` gives each *task* (not each
device: a task's executor copies between its own devices) its nodes, and replaces every edge
between tasks by a ``_Send`` on the producer's task and a ``_Recv`` on the consumer's, like TF's
``graph_partition.cc``: one pair per (tensor, destination task), the ``_Recv`` on the device of the
first consumer met; a control edge sends a dummy int32 ``Const`` that runs after its source; a
reference input (a variable itself) never crosses tasks, since the placer colocates those.

The lists are one global order projected onto the tasks, so a task that runs its list in order,
blocking at each ``_Recv``, cannot deadlock with another. Added nodes are named ``{src}/_send_...``,
``{src}/_recv_...``, ``{src}/_ctrl_...``: valid names that ``Graph.create_op`` accepts, made unique
against the graph's. A pair shares attrs, which :func:`rendezvous_key` turns into their key.

Control flow, as TF's ``graph_partition.cc``: a ``_Send`` of a dead value (a branch not taken) makes its
``_Recv`` produce a dead value, and a control edge's ``_Recv`` is followed by an ``Identity`` so that its
deadness reaches the consumer. A loop whose frame has ops on several tasks gets a *control loop* on each of
them (see :mod:`.control_loops`): driven by the loop's ``LoopCond``, sent to them every iteration, it runs the
task's share of the loop once per iteration, and each ``_Send``/``_Recv`` in the frame waits on it. A
``NextIteration`` is moved to its ``Merge``'s device (a loop's back edge never crosses tasks). Rendezvous keys
carry the frame and iteration a pair runs in.

Example:
    >>> ps, wk = "/job:ps/replica:0/task:0/device:CPU:0", "/job:worker/replica:0/task:0/device:CPU:0"
    >>> nodes = [{"name": "a", "op": "Const", "input": []}, {"name": "b", "op": "Neg", "input": ["a"]}]
    >>> parts = partition(nodes, {"a": ps, "b": wk}, {"a": ["float32"], "b": ["float32"]})
    >>> [(n["name"], n["op"], n["input"]) for n in parts["/job:ps/replica:0/task:0"]]
    [('a', 'Const', []), ('a/_send_0_to_worker_0_0', '_Send', ['a:0'])]
    >>> [(n["name"], n["op"], n["input"]) for n in parts["/job:worker/replica:0/task:0"]]
    [('a/_recv_0_on_worker_0_0', '_Recv', []), ('b', 'Neg', ['a/_recv_0_on_worker_0_0:0'])]
"""

from __future__ import annotations

import functools
import hashlib
from collections import deque
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.device_spec import DeviceSpec
from dtf_notebook.placement.control_loops import CONTROL_FLOW_TYPES, ControlFlow, is_back_edge, plan_control_flow

NodeDict = dict[str, Any]
#: Per node, its outputs' types: a dtype (name or DType) or a ``(dtype, shape)`` pair each.
OutputTypes = Mapping[str, Sequence[Any]] | Callable[[str], Sequence[Any]]

SEND_OP = "_Send"
RECV_OP = "_Recv"


@functools.lru_cache(maxsize=4096)
def _task_of(device_name: str) -> str:
    spec = DeviceSpec.from_string(device_name)
    if spec.job is None or spec.task is None:
        raise ValueError(
            f"Device name {device_name!r} names no job and task; partitioning needs full device names "
            "like '/job:worker/replica:0/task:0/device:CPU:0'"
        )
    return f"/job:{spec.job}/replica:{spec.replica or 0}/task:{spec.task}"


def task_of(device_name: str) -> str:
    """The task part ``/job:x/replica:r/task:t`` of a full device name (replica 0 when absent).

    Raises:
        ValueError: the name has no job or no task.

    Example:
        >>> task_of("/job:worker/replica:0/task:1/device:GPU:0")
        '/job:worker/replica:0/task:1'
        >>> task_of("/job:ps/task:2/cpu:0")
        '/job:ps/replica:0/task:2'
    """
    return _task_of(device_name)


def rendezvous_prefix(attrs: Mapping[str, Any]) -> str:
    """A pair's rendezvous key without its frame and iteration: ``send_device;incarnation;recv_device;tensor_name``.

    Example:
        >>> rendezvous_prefix({"send_device": "/s", "send_device_incarnation": 1, "recv_device": "/r",
        ...                    "tensor_name": "a:0"})
        '/s;0000000000000001;/r;a:0'
    """
    incarnation = int(attrs["send_device_incarnation"]) & 0xFFFFFFFFFFFFFFFF  # TF prints the uint64 bits
    return f"{attrs['send_device']};{incarnation:016x};{attrs['recv_device']};{attrs['tensor_name']}"


def rendezvous_key(attrs: Mapping[str, Any], frame_iter: str = "0:0") -> str:
    """The rendezvous key a ``_Send`` and its ``_Recv`` agree on, built from their attrs like TF.

    TF's layout is ``send_device;incarnation;recv_device;tensor_name;frame:iter`` with the
    incarnation as 16 hex digits; ``frame_iter`` is ``0:0`` outside loops (see :func:`frame_iter`).

    Example:
        >>> rendezvous_key({"send_device": "/job:ps/replica:0/task:0/device:CPU:0", "send_device_incarnation": 0,
        ...                 "recv_device": "/job:worker/replica:0/task:0/device:CPU:0", "tensor_name": "a:0"})
        '/job:ps/replica:0/task:0/device:CPU:0;0000000000000000;/job:worker/replica:0/task:0/device:CPU:0;a:0;0:0'
    """
    return f"{rendezvous_prefix(attrs)};{frame_iter}"


@functools.lru_cache(maxsize=4096)
def _frame_id(frame_path: str) -> str:
    return hashlib.blake2b(frame_path.encode(), digest_size=8).hexdigest()


def frame_iter(frame_path: str, iteration: int) -> str:
    """The ``frame:iter`` part of a rendezvous key: ``0:0`` in the root frame, else a 64-bit hash of the frame's
    path (TF's frame id: a hash of the frame's name, its parent's and the parent iteration) and the iteration.

    Example:
        >>> frame_iter("", 0), frame_iter(";0;while/while_context", 2)
        ('0:0', '247d70ce3fd442bb:2')
    """
    return f"{_frame_id(frame_path)}:{iteration}" if frame_path else "0:0"


def _parse_input(ref: str) -> tuple[str, int]:
    """``"a"`` → (a, 0), ``"a:1"`` → (a, 1), ``"^a"`` → (a, -1)."""
    if ref.startswith("^"):
        return ref[1:], -1
    name, sep, index = ref.rpartition(":")
    if sep and index.isdigit():
        return name, int(index)
    return ref, 0


def _index_nodes(nodes: Iterable[NodeDict]) -> dict[str, NodeDict]:
    by_name: dict[str, NodeDict] = {}
    for node in nodes:
        name = node["name"]
        if name in by_name:
            raise ValueError(f"Duplicate node name in graph: {name!r}")
        by_name[name] = node
    for node in by_name.values():
        for ref in node.get("input", ()):
            if _parse_input(ref)[0] not in by_name:
                raise ValueError(f"Node {node['name']!r} has input {ref!r}, but no node of that name is in the graph")
    return by_name


def _topological(
    roots: Iterable[str],
    by_name: Mapping[str, NodeDict],
    follow: Callable[[str, str], bool],
    extra: Mapping[str, Sequence[str]] | None = None,
) -> list:
    """Nodes reachable from ``roots`` through inputs ``follow(node, ref)`` accepts, producers first.

    Depth-first like the executor's ``needed_ops``, so a graph already in topological
    order (``Graph.as_graph_def_dict``) keeps its order. A loop's back edge (``NextIteration`` into
    ``Merge``) is not followed: its source is visited after the roots. ``extra`` names more
    nodes each node comes after.
    """
    order: list[NodeDict] = []
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done
    pending = deque(roots)
    back_edges: deque[str] = deque()
    while pending or back_edges:
        root = pending.popleft() if pending else back_edges.popleft()
        stack: list[tuple[str, bool]] = [(root, False)]
        while stack:
            name, expanded = stack.pop()
            if expanded:
                state[name] = 2
                order.append(by_name[name])
                continue
            mark = state.get(name)
            if mark == 2:
                continue
            if mark == 1:
                raise ValueError(f"Graph has a cycle through node {name!r}")
            state[name] = 1
            stack.append((name, True))
            node = by_name[name]
            refs = node.get("input", ())
            # Data inputs, then control inputs, pushed in reverse: visited in needed_ops' order.
            for ref in reversed([r for r in refs if not r.startswith("^")] + [r for r in refs if r.startswith("^")]):
                src = _parse_input(ref)[0]
                if state.get(src) != 2 and follow(name, ref):
                    if is_back_edge(node, by_name[src]):
                        back_edges.append(src)
                    else:
                        stack.append((src, False))
            if extra:
                stack.extend((e, False) for e in reversed(extra.get(name, ())) if state.get(e) != 2)
    return order


def _tensor_name(name: str) -> str:
    return name if ":" in name else f"{name}:0"


def _type_list(output_types: OutputTypes | None, node: str) -> Sequence[Any] | None:
    if output_types is None:
        return None
    if callable(output_types):
        return output_types(node)
    return output_types.get(node)


def prune(
    nodes: Sequence[NodeDict],
    fetch_names: Iterable[str],
    target_names: Iterable[str],
    feed_names: Iterable[str] = (),
    output_types: OutputTypes | None = None,
) -> list[NodeDict]:
    """The nodes the fetches and targets need, producers first, stopping at fed tensors.

    Mirrors the executor's ``needed_ops`` over node dicts (a loop's back edge is followed
    after the rest): a fed tensor's producer is not needed for that input, a fetched tensor
    that is fed needs nothing, and a node reached only through a control edge is skipped when
    every output of it is fed. Without ``output_types`` a node's outputs are taken to be those
    the graph or the feeds mention. The returned dicts are the given ones, not copies.

    Args:
        nodes: Node dicts (``Graph.as_graph_def_dict()["node"]``).
        fetch_names: Tensor names to compute (``"a:0"``; ``"a"`` means ``"a:0"``).
        target_names: Node names to run for their effect.
        feed_names: Tensor names whose values the client gives.
        output_types: Optional per-node output types (as for :func:`partition`), to count outputs.

    Raises:
        ValueError: a name refers to no node, or the needed nodes form a cycle (other than a loop's back edge).

    Example:
        >>> nodes = [{"name": "a", "op": "Placeholder", "input": []}, {"name": "b", "op": "Neg", "input": ["a"]},
        ...          {"name": "c", "op": "Neg", "input": ["b"]}, {"name": "d", "op": "Neg", "input": ["a"]}]
        >>> [n["name"] for n in prune(nodes, ["c:0"], [], feed_names=["b:0"])]
        ['c']
        >>> [n["name"] for n in prune(nodes, ["c:0"], ["d"])]
        ['a', 'b', 'c', 'd']
    """
    by_name = _index_nodes(nodes)
    fed = {_tensor_name(t) for t in feed_names}
    for name in (*fed, *(_tensor_name(t) for t in fetch_names), *target_names):
        if _parse_input(name)[0] not in by_name:
            raise ValueError(f"Fetch, target or feed {name!r} refers to no node in the graph")

    mentioned: dict[str, int] = {}  # node → 1 + the highest output index the graph or the feeds use
    for ref in [r for n in nodes for r in n.get("input", ())] + sorted(fed):
        src, index = _parse_input(ref)
        mentioned[src] = max(mentioned.get(src, 0), index + 1)

    def fully_fed(src: str) -> bool:
        types = _type_list(output_types, src)
        count = len(types) if types is not None else mentioned.get(src, 0)
        return count > 0 and all(f"{src}:{i}" in fed for i in range(count))

    def follow(node: str, ref: str) -> bool:
        src, index = _parse_input(ref)
        if index < 0:
            return not fully_fed(src)
        return f"{src}:{index}" not in fed

    roots = [_parse_input(t)[0] for t in map(_tensor_name, fetch_names) if t not in fed]
    roots += list(target_names)
    order = _topological(roots, by_name, follow)
    # Like needed_ops, keep the given order when it is a valid schedule: partitions cut from one
    # global order can run each in list order without a task waiting on a send scheduled after it.
    position = {n["name"]: i for i, n in enumerate(nodes)}
    kept = {n["name"] for n in order}
    if all(
        position[src] < position[n["name"]] or is_back_edge(n, by_name[src])
        for n in order
        for src, index in map(_parse_input, n.get("input", ()))
        if (src in kept if index < 0 else f"{src}:{index}" not in fed)
    ):
        return sorted(order, key=lambda n: position[n["name"]])
    return order


def _normalized_type(entry: Any, tensor: str) -> tuple[str, tuple[int | None, ...] | None]:
    dtype, shape = entry if isinstance(entry, tuple | list) else (entry, None)
    try:
        name = dtypes.as_dtype(dtype).name  # "float32_ref" → "float32": a send carries the value
    except TypeError:
        raise ValueError(f"Output type {dtype!r} of tensor {tensor!r} is not a known dtype") from None
    if shape is not None and not isinstance(shape, tuple | list):
        shape = shape.as_tuple()  # a TensorShape; None when the rank is unknown
    return name, None if shape is None else tuple(None if d is None else int(d) for d in shape)


def _ref_positions(op_type: str, registered: Collection[str]) -> frozenset[int]:
    return op_registry.get(op_type).ref_inputs if op_type in registered else frozenset()


def _short_task(task: str) -> str:
    # "/job:worker/replica:0/task:1" → "worker_0_1", to keep added names valid node names.
    return "_".join(part.split(":", 1)[1] for part in task.strip("/").split("/"))


def partition(
    nodes: Sequence[NodeDict],
    placement: Mapping[str, str],
    output_types: OutputTypes,
    step_key_prefix: str = "",
) -> dict[str, list[NodeDict]]:
    """Splits placed nodes into one subgraph per task, adding ``_Send``/``_Recv`` for edges between tasks.

    Args:
        nodes: Node dicts (pruned); their ``device`` (the requested one) is ignored.
        placement: Node name → full device name, for every node.
        output_types: Node name → its outputs' types, each a dtype name (or DType) or a
            ``(dtype, shape)`` pair with shape a tuple (None for unknown dims) or None;
            a mapping or a callable. Needed for every tensor that crosses tasks.
        step_key_prefix: Prepended to every ``tensor_name`` attr, so the rendezvous keys of
            graphs that may run in the same step (e.g. two registrations) cannot meet.

    Returns:
        Task name (``"/job:ps/replica:0/task:0"``) → its node dicts in a topological order,
        tasks in order of first appearance. Nodes are copies with ``device`` set to the placed
        device and inputs from other tasks rewritten to ``"<recv>:0"`` or ``"^<recv>"``.

    Raises:
        ValueError: a node has no placement, an input names no node, a ref input crosses
            tasks, a crossing tensor has no output type, the graph has a cycle (other than a loop's back
            edge), or a loop with ops on several tasks has no ``LoopCond``.

    Example:
        >>> ps, wk = "/job:ps/replica:0/task:0/device:CPU:0", "/job:worker/replica:0/task:0/device:CPU:0"
        >>> nodes = [{"name": "a", "op": "NoOp", "input": []}, {"name": "b", "op": "NoOp", "input": ["^a"]}]
        >>> parts = partition(nodes, {"a": ps, "b": wk}, {"a": [], "b": []})
        >>> [(n["op"], n["input"]) for n in parts["/job:ps/replica:0/task:0"]]
        [('NoOp', []), ('Const', ['^a']), ('_Send', ['a/_ctrl_to_worker_0_0:0'])]
        >>> parts["/job:worker/replica:0/task:0"][-1]["input"]
        ['^a/_recv_ctrl_on_worker_0_0']
    """
    by_name = _index_nodes(nodes)
    missing = [name for name in by_name if name not in placement]
    if missing:
        raise ValueError(f"No device placement for node(s): {', '.join(repr(n) for n in missing[:10])}")
    placement = {name: placement[name] for name in by_name}
    taken = set(by_name)
    order = _topological(by_name, by_name, lambda node, ref: True)
    flow = None
    if any(n["op"] in CONTROL_FLOW_TYPES for n in nodes):
        flow = plan_control_flow(order, by_name, placement, task_of, lambda name: _fresh(name, taken))
        by_name.update({n["name"]: n for n in flow.loops.nodes})
        order = _topological(by_name, by_name, lambda node, ref: True, flow.waits)
    tasks = {name: task_of(placement[name]) for name in by_name}
    registered = set(op_registry.registered_types())

    # Pass 1: every edge between tasks, keyed (src, output or -1 for control, dst task), in the
    # order its first consumer comes; that consumer's device receives.
    recv_devices: dict[tuple[str, int, str], str] = {}
    for node in order:
        _check_no_ref_crosses(node, placement, tasks, _ref_positions(node["op"], registered))
        for src, index in map(_parse_input, node.get("input", ())):
            if tasks[src] != tasks[node["name"]]:
                recv_devices.setdefault((src, index, tasks[node["name"]]), placement[node["name"]])

    senders: dict[str, list[NodeDict]] = {}  # src → the nodes sending its values, placed right after it
    recvs: dict[tuple[str, int, str], list[NodeDict]] = {}  # the last of them is what consumers read
    for key, recv_device in recv_devices.items():
        sending, recvs[key] = _transfer(key, placement[key[0]], recv_device, output_types, step_key_prefix, taken, flow)
        senders.setdefault(key[0], []).extend(sending)

    # Pass 2: one global order, projected onto the tasks. A send comes right after its producer and a
    # recv right before its first consumer, so a task running its list in order never waits on a send
    # that another task has scheduled behind a recv of its own.
    parts: dict[str, list[NodeDict]] = {}
    emitted: set[tuple[str, int, str]] = set()
    for node in order:
        name, task = node["name"], tasks[node["name"]]
        part = parts.setdefault(task, [])
        inputs: list[str] = []
        for ref in node.get("input", ()):
            src, index = _parse_input(ref)
            key = (src, index, task)
            if tasks[src] == task:
                inputs.append(ref)
                continue
            receiving = recvs[key]
            if key not in emitted:
                part.extend(receiving)
                emitted.add(key)
            inputs.append(f"^{receiving[-1]['name']}" if index < 0 else f"{receiving[-1]['name']}:0")
        part.append({**node, "input": inputs, "device": placement[name], "attr": dict(node.get("attr", {}))})
        part.extend(senders.get(name, ()))
    return parts


def _check_no_ref_crosses(
    node: NodeDict, placement: Mapping[str, str], tasks: Mapping[str, str], refs: Collection[int]
) -> None:
    for position, ref in enumerate(r for r in node.get("input", ()) if not r.startswith("^")):
        src = _parse_input(ref)[0]
        if position in refs and tasks[src] != tasks[node["name"]]:
            raise ValueError(
                f"Node {node['name']!r} ({node['op']}) on {placement[node['name']]} takes input {position} "
                f"({ref!r}, on {placement[src]}) by reference, and a reference cannot cross tasks; colocate them"
            )


def _fresh(name: str, taken: set[str]) -> str:
    """``name``, or ``name_1``, ``name_2``, ... : the first not in ``taken``, which it joins."""
    unique, n = name, 0
    while unique in taken:
        n += 1
        unique = f"{name}_{n}"
    taken.add(unique)
    return unique


def _transfer(
    key: tuple[str, int, str],
    send_device: str,
    recv_device: str,
    output_types: OutputTypes,
    step_key_prefix: str,
    taken: set[str],
    flow: ControlFlow | None,
) -> tuple[list[NodeDict], list[NodeDict]]:
    """The nodes moving ``src:index`` (or, for index -1, the fact that src ran) to ``dst_task``: those sending,
    and those receiving (the last one is what consumers read)."""
    src, index, dst_task = key
    tag = _short_task(dst_task)
    sending: list[NodeDict] = []
    if index < 0:
        sent, stem, dtype, shape = _fresh(f"{src}/_ctrl_to_{tag}", taken), "ctrl", "int32", ()
        # TF's dummy: a scalar that exists only once src has run, so its arrival orders dst after src.
        attr = {"dtype": dtypes.int32, "value": np.array(0, dtype=np.int32)}
        sending.append({"name": sent, "op": "Const", "input": [f"^{src}"], "device": send_device, "attr": attr})
        sent_index = 0
    else:
        types = _type_list(output_types, src)
        if types is None or index >= len(types):
            raise ValueError(f"No output type for tensor '{src}:{index}', which crosses to task {dst_task}")
        dtype, shape = _normalized_type(types[index], f"{src}:{index}")
        sent, stem, sent_index = src, str(index), index
    attrs = {
        "tensor_name": f"{step_key_prefix}{sent}:{sent_index}",
        "send_device": send_device,
        "recv_device": recv_device,
        "send_device_incarnation": 0,
        "client_terminated": False,
    }
    # Inside a loop, each end runs once per iteration of its task's control loop (see .control_loops).
    send_after = recv_after = []
    if flow is not None and flow.control_merge(src, dst_task) is not None:
        send_after = [f"^{flow.control_merge(src, task_of(send_device))}"]
        recv_after = [f"^{flow.control_merge(src, dst_task)}"]
    send_name = _fresh(f"{src}/_send_{stem}_to_{tag}", taken)
    sending.append(
        {
            "name": send_name,
            "op": SEND_OP,
            "input": [f"{sent}:{sent_index}", *send_after],
            "device": send_device,
            "attr": {**attrs, "T": dtype},
        }
    )
    recv = {
        "name": _fresh(f"{src}/_recv_{stem}_on_{tag}", taken),
        "op": RECV_OP,
        "input": recv_after,
        "device": recv_device,
        # With control flow, the value may come dead (the sender's branch was not taken): the receiving plan must
        # run on the dataflow executor.
        "attr": {**attrs, "tensor_type": dtype, "shape": shape, **({"_may_be_dead": True} if flow is not None else {})},
    }
    if index >= 0 or flow is None:
        return sending, [recv]
    # A control edge's consumer waits on an op, not a value: an Identity of the received dummy is dead when its
    # source was, so the consumer does not run either (TF adds the same Identity).
    dead_or_alive = {
        "name": _fresh(f"{src}/_ctrl_on_{tag}", taken),
        "op": "Identity",
        "input": [f"{recv['name']}:0"],
        "device": recv_device,
        "attr": {"T": dtypes.as_dtype(dtype)},
    }
    return sending, [recv, dead_or_alive]
