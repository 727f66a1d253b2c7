"""Fewer control edges between tasks: ``NoOp`` nodes that only order other ops are bypassed where that helps.

An optimizer's ``minimize(global_step=...)`` builds ``update`` (a ``NoOp`` on the worker grouping the variable
updates of every ps task) and makes the global step's increment, on ps task 0, wait on it: each step then
bounces ps → worker → ps for nothing but ordering. TF's Grappler (its dependency optimizer) removes such a NoOp
by wiring its control inputs straight to its consumers; :func:`bypass_noops` does the same to the node list of
a step before it is partitioned, when that does not add edges between tasks, so the ps tasks order their
updates among themselves. The NoOp orders nothing else: every op that waited on it still waits on everything
it waited for.

Example:
    >>> ps0, ps1, wk = (f"/job:{j}/replica:0/task:{t}/device:CPU:0" for j, t in (("ps", 0), ("ps", 1), ("worker", 0)))
    >>> nodes = [
    ...     {"name": "a", "op": "AssignAdd", "input": []}, {"name": "b", "op": "AssignAdd", "input": []},
    ...     {"name": "update", "op": "NoOp", "input": ["^a", "^b"]}, {"name": "step", "op": "AssignAdd",
    ...      "input": ["^update"]}]
    >>> placement = {"a": ps0, "b": ps1, "update": wk, "step": ps0}
    >>> [(n["name"], n["input"]) for n in bypass_noops(nodes, placement, keep={"step"})]
    [('a', []), ('b', []), ('step', ['^a', '^b'])]
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from dtf_notebook.runtime.dataflow import KIND_OF_TYPE


def _task(device: str) -> str:
    return device.split("/device:")[0]


def bypass_noops(
    nodes: list[dict[str, Any]], placement: Mapping[str, str], keep: Collection[str]
) -> list[dict[str, Any]]:
    """``nodes`` (node dicts in a valid order) without the NoOps whose bypassing does not add control edges
    between tasks; their consumers take over their control inputs (new dicts; ``nodes`` is not changed).

    A NoOp is bypassed when it is not in ``keep`` (the step's fetches and targets), has only control inputs,
    is only a control input of others, and the control edges between tasks (one per source and receiving task,
    as the partitioner sends them) are no more without it. A step with control flow is left as it is.
    """
    if any(n["op"] in KIND_OF_TYPE for n in nodes):
        return nodes
    by_name = {n["name"]: dict(n, input=list(n["input"])) for n in nodes}
    data_used: set[str] = set()
    waiting: dict[str, list[str]] = {}  # name -> the nodes it is a control input of
    for n in by_name.values():
        for ref in n["input"]:
            if ref.startswith("^"):
                waiting.setdefault(ref[1:], []).append(n["name"])
            else:
                data_used.add(ref.split(":")[0])
    removed: set[str] = set()
    for name, n in by_name.items():
        if n["op"] != "NoOp" or name in keep or name in data_used or name not in placement:
            continue
        fanin = [ref[1:] for ref in n["input"]]
        fanout = [c for c in waiting.get(name, []) if c not in removed]
        if not fanin or not fanout or any(not ref.startswith("^") for ref in n["input"]):
            continue
        if any(f not in placement for f in fanin) or any(c not in placement for c in fanout):
            continue
        own = _task(placement[name])
        out_tasks = {_task(placement[c]) for c in fanout}
        before = sum(_task(placement[f]) != own for f in fanin) + len(out_tasks - {own})
        after = sum(len(out_tasks - {_task(placement[f])}) for f in fanin)
        if after > before:
            continue
        for c in fanout:
            inputs = by_name[c]["input"]
            inputs.remove("^" + name)
            inputs.extend(f"^{f}" for f in fanin if f"^{f}" not in inputs)
        for f in fanin:
            users = waiting.setdefault(f, [])
            users.remove(name)
            users.extend(c for c in fanout if c not in users)
        removed.add(name)
    return [by_name[n["name"]] for n in nodes if n["name"] not in removed]


def hoist_target_noops(
    nodes: list[dict[str, Any]], placement: Mapping[str, str], targets: list[str]
) -> tuple[list[dict[str, Any]], list[str]]:
    """``nodes`` and ``targets`` with each targeted ``NoOp`` that only groups ops of other tasks replaced, as a
    target, by the ops it groups (on their own tasks).

    ``minimize()`` without a global step returns such a NoOp on the worker, waiting on each ps task's variable
    update: each of those tasks then sends the worker a control message every step, only so that the NoOp can
    run. A master answers a step once every partition has finished, so running the grouped ops as targets of
    their own partitions finishes the same work before the step returns. A NoOp stays when a node of the step
    reads or waits on it, when it groups nothing of another task, or when the step has control flow.

    Example:
        >>> ps0, ps1, wk = (f"/job:{j}/replica:0/task:{t}/device:CPU:0" for j, t in (("ps", 0), ("ps", 1), ("wk", 0)))
        >>> nodes = [{"name": "a", "op": "AssignAdd", "input": []}, {"name": "b", "op": "AssignAdd", "input": []},
        ...          {"name": "train", "op": "NoOp", "input": ["^a", "^b"]}]
        >>> out, targets = hoist_target_noops(nodes, {"a": ps0, "b": ps1, "train": wk}, ["train"])
        >>> [n["name"] for n in out], targets
        (['a', 'b'], ['a', 'b'])
    """
    if any(n["op"] in KIND_OF_TYPE for n in nodes):
        return nodes, targets
    by_name = {n["name"]: n for n in nodes}
    used: set[str] = set()
    for n in nodes:
        used.update(ref.lstrip("^").split(":")[0] for ref in n["input"])
    targets = list(targets)
    removed: set[str] = set()
    for name in list(targets):
        n = by_name.get(name)
        if n is None or n["op"] != "NoOp" or name in used or name not in placement:
            continue
        if not n["input"] or any(not ref.startswith("^") or ref[1:] not in placement for ref in n["input"]):
            continue
        fanin = [ref[1:] for ref in n["input"]]
        if all(_task(placement[f]) == _task(placement[name]) for f in fanin):
            continue
        targets.remove(name)
        targets.extend(f for f in fanin if f not in targets)
        removed.add(name)
    return [n for n in nodes if n["name"] not in removed], targets


__all__ = ["bypass_noops", "hoist_target_noops"]
