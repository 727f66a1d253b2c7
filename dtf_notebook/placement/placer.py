"""Assigns every node a full device name: pure functions over plain node data.

Rules (TF1's placer, simplified to what the seeds use):

* Nodes colocated with ``colocate_with`` (``_class = ["loc:@x"]``) and nodes
  that take a variable by reference (``Assign``, optimizer updates) form one
  group and land on one device.
* A group's requested specs are merged. Missing fields default to the
  session's master task (for groups holding a variable: the cluster's *state
  task*, the same for every master, so two clients connected to different
  tasks share an unpinned ``x``): no job means the master's job, no task means the
  master's task for the master's job and task 0 for any other job
  (``/job:ps`` → ``/job:ps/task:0``), no device type means the task's GPU:0
  when it has one and every member has a GPU kernel, else CPU:0.
* A *generator* (a node with no inputs and one output that is not a reference: a constant, a placeholder), in no
  colocation group, goes where all its consumers are when they are on one device its own request allows (TF's
  "Heuristic A"): ``assign_add(v, 1.0)`` on a ps variable runs wholly on the ps task, with no transfer.
* With ``allow_soft_placement`` an unsatisfiable request falls back: first to
  the requested task's default device, then to the master's default device.
  Without it, the node gets an error naming the node, what it asked for and
  the devices that exist. Errors are returned, not raised, so a session
  fails only when it runs a node that could not be placed.

Example:
    >>> devs = ["/job:localhost/replica:0/task:0/device:CPU:0"]
    >>> placed, errs = place([PlacementNode("a", "Const", "/cpu:0")], devs)
    >>> placed["a"]
    '/job:localhost/replica:0/task:0/device:CPU:0'
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from dtf_notebook.framework.device_spec import DeviceSpec


@dataclass(frozen=True)
class PlacementNode:
    """What the placer needs to know about one node.

    Attributes:
        name: Node name.
        op_type: Op type (for messages).
        requested: Requested device string (may be partial or empty).
        colocation: Names of nodes it must be colocated with (``loc:@`` stripped).
        cpu_only: The node has no GPU kernel (string values, CPU-only ops).
        ref_sources: Names of nodes whose variable references it consumes.
        holds_state: The node owns a resource (a variable): unpinned, it goes to the cluster's state task.
        generator: The node has no inputs and one output that is not a reference (a constant, a placeholder).
        consumers: Names of the nodes that take its output or depend on it (control inputs).

    Example:
        >>> devs = ["/job:localhost/replica:0/task:0/device:CPU:0", "/job:localhost/replica:0/task:0/device:GPU:0"]
        >>> nodes = [PlacementNode("v", "VariableV2", "/gpu:0"), PlacementNode("s", "Assign", ref_sources=("v",))]
        >>> placed, _ = place(nodes, devs)
        >>> placed["s"]   # follows the variable it assigns to
        '/job:localhost/replica:0/task:0/device:GPU:0'
    """

    name: str
    op_type: str
    requested: str = ""
    colocation: tuple[str, ...] = ()
    cpu_only: bool = False
    ref_sources: tuple[str, ...] = ()
    holds_state: bool = False
    generator: bool = False
    consumers: tuple[str, ...] = ()


@functools.lru_cache(maxsize=4096)
def _spec(device: str) -> DeviceSpec:
    return DeviceSpec.from_string(device)


def _compatible(a: DeviceSpec, b: DeviceSpec) -> bool:
    pairs = (
        (a.job, b.job),
        (a.replica, b.replica),
        (a.task, b.task),
        (a.device_type, b.device_type),
        (a.device_index, b.device_index),
    )
    return all(x is None or y is None or x == y for x, y in pairs)


class _UnionFind:
    def __init__(self, names: Sequence[str]) -> None:
        self.parent = {n: n for n in names}

    def find(self, n: str) -> str:
        parent = self.parent
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


def place(
    nodes: Sequence[PlacementNode],
    devices: Sequence[str],
    default_job: str = "localhost",
    default_task: int = 0,
    allow_soft_placement: bool = False,
    state_task: tuple[str, int] | None = None,
) -> tuple[dict[str, str], dict[str, str]]:
    """Places ``nodes`` on ``devices`` (full names).

    Args:
        state_task: ``(job, task)`` where groups holding state (variables) with no job requested go, so that
            every master of a cluster puts unpinned variables in the same place (default: the master's task).

    Returns:
        ``(placement, errors)``: node name → device name, and node name → error message.

    Example:
        >>> devs = ["/job:localhost/replica:0/task:0/device:CPU:0"]
        >>> _, errs = place([PlacementNode("g", "Const", "/gpu:3")], devs)
        >>> "Cannot assign a device for operation g" in errs["g"]
        True
    """
    by_name = {n.name: n for n in nodes}
    uf = _UnionFind(list(by_name))
    for n in nodes:
        for other in n.colocation + n.ref_sources:
            if other in by_name and other != n.name:
                uf.union(n.name, other)
    groups: dict[str, list[PlacementNode]] = {}
    for n in nodes:
        groups.setdefault(uf.find(n.name), []).append(n)

    parsed = [_spec(d) for d in devices]
    placement: dict[str, str] = {}
    errors: dict[str, str] = {}
    generators = []  # placed after their consumers
    for members in groups.values():
        (first,) = members if len(members) == 1 else (None,)
        if first is not None and first.generator and first.consumers and not first.holds_state:
            generators.append(first)
            continue
        job, task = default_job, default_task
        if state_task is not None and any(m.holds_state for m in members):
            job, task = state_task
        device, message, refused = _place_group(members, devices, parsed, job, task, allow_soft_placement)
        for m in members:
            if m.name in refused:
                errors[m.name] = refused[m.name]
            elif message is None:
                placement[m.name] = device
            else:
                errors[m.name] = message
    for node in generators:
        device = _with_consumers(node, placement)
        message = None
        if device is None:
            device, message, _ = _place_group([node], devices, parsed, default_job, default_task, allow_soft_placement)
        if message is None:
            placement[node.name] = device
        else:
            errors[node.name] = message
    return placement, errors


def _with_consumers(node: PlacementNode, placement: dict[str, str]) -> str | None:
    """The one device all of ``node``'s consumers are on, when its request and kernels allow it there."""
    found = {placement.get(name) for name in node.consumers}
    if len(found) != 1 or None in found:
        return None
    (device,) = found
    spec = _spec(device)
    if node.cpu_only and spec.device_type != "CPU":
        return None
    if node.requested:
        try:
            if not _compatible(_spec(node.requested), spec):
                return None
        except ValueError:
            return None  # the usual path names the malformed request
    return device


def _place_group(
    members: list[PlacementNode],
    devices: Sequence[str],
    parsed: Sequence[DeviceSpec],
    default_job: str,
    default_task: int,
    soft: bool,
) -> tuple[str, str | None, dict[str, str]]:
    """The device of a colocation group, or an error for all of it; and the members refused on their own.

    A member joined only through a reference or resource handle (no ``colocate_with`` of its own) whose request
    conflicts follows the group, as TF moves an op to the variable it updates or reads (a ``VarIsInitializedOp``
    that ``replica_device_setter`` sends to the worker, its variable on a ps task). A member whose explicit
    colocation conflicts (without soft placement) is refused alone, with an error naming both, and the rest are
    placed: TF places each step's nodes only, so a step that does not run it still runs. The variables' requests
    count first.
    """
    merged = DeviceSpec()
    origin: dict[str, str] = {}
    refused: dict[str, str] = {}
    for m in sorted(members, key=lambda m: not m.holds_state):
        if not m.requested:
            continue
        try:
            spec = _spec(m.requested)
        except ValueError as e:
            return "", f"Cannot assign a device for operation {m.name}: {e}", refused
        if not _compatible(merged, spec):
            if not soft and (m.colocation or not m.ref_sources):
                refused[m.name] = (
                    f"Cannot colocate nodes {origin.get('first', m.name)} and {m.name}: their requested devices "
                    f"'{merged}' and '{m.requested}' conflict. Colocation group: {', '.join(x.name for x in members)}"
                )
            continue
        origin.setdefault("first", m.name)
        merged = merged.make_merged_spec(spec)
    cpu_only = any(m.cpu_only for m in members)

    device = _resolve(merged, parsed, devices, default_job, default_task, cpu_only)
    if device is not None:
        return device, None, refused
    if soft:
        relaxed = merged.replace(device_type=None, device_index=None)
        device = _resolve(relaxed, parsed, devices, default_job, default_task, cpu_only)
        if device is None:
            device = _resolve(DeviceSpec(), parsed, devices, default_job, default_task, cpu_only)
        if device is not None:
            return device, None, refused
    node = next((m for m in members if m.requested), members[0])
    if cpu_only and merged.device_type == "GPU":
        why = "no supported kernel for GPU devices is available"
    else:
        why = "no devices matching that specification are registered in this process"
    return (
        "",
        f"Cannot assign a device for operation {node.name}: Could not satisfy explicit device specification "
        f"'{merged}' because {why}; available devices: {', '.join(devices)}",
        refused,
    )


def _resolve(
    spec: DeviceSpec,
    parsed: Sequence[DeviceSpec],
    devices: Sequence[str],
    default_job: str,
    default_task: int,
    cpu_only: bool,
) -> str | None:
    job = spec.job if spec.job is not None else default_job
    task = spec.task if spec.task is not None else (default_task if job == default_job else 0)
    replica = spec.replica if spec.replica is not None else 0
    candidates = [
        (d, name) for d, name in zip(parsed, devices) if d.job == job and d.task == task and (d.replica or 0) == replica
    ]
    wanted_type = spec.device_type
    if wanted_type is None:
        order = ["CPU"] if cpu_only else ["GPU", "CPU"]
    elif wanted_type == "GPU" and cpu_only:
        return None
    else:
        order = [wanted_type]
    for device_type in order:
        matches = sorted(
            (
                (d.device_index or 0, name)
                for d, name in candidates
                if d.device_type == device_type and (spec.device_index is None or d.device_index == spec.device_index)
            ),
        )
        if matches:
            return matches[0][1]
    return None
