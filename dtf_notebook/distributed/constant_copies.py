"""Fewer tensors between tasks: a small constant used on another device is copied there instead of sent.

A ``Const`` costs nothing to keep anywhere, but one placed on the worker and read on a ps task (an optimizer's
learning rate under ``replica_device_setter``), or colocated with a variable on a ps task and read on the worker
(the static shape a ``GatherV2`` gradient builds next to its embedding shard), is a message every step.
:func:`copy_small_constants` gives each device that reads a small constant its own copy, before the step is
partitioned (TF's partitioner and Grappler's constant folding do the same); a constant a step fetches stays
where it is for that fetch.

Example:
    >>> import numpy as np
    >>> ps, wk = "/job:ps/replica:0/task:0/device:CPU:0", "/job:worker/replica:0/task:0/device:CPU:0"
    >>> nodes = [
    ...     {"name": "lr", "op": "Const", "input": [], "attr": {"value": np.float32(0.1)}},
    ...     {"name": "apply", "op": "ApplyGradientDescent", "input": ["w", "lr", "g"]}]
    >>> placement, types = {"lr": wk, "apply": ps}, {"lr": [("float32", ())]}
    >>> out = copy_small_constants(nodes, placement, types, keep=set())
    >>> [(n["name"], n["input"]) for n in out], placement["lr/_copy_0"] == ps
    ([('lr/_copy_0', []), ('apply', ['w', 'lr/_copy_0', 'g'])], True)
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import numpy as np

#: Constants up to this many elements are copied (TF folds constants of up to 10 MB; a copy here is also sent once
#: per partition registration, so keep it small).
MAX_COPIED_ELEMENTS = 1024


def _task(device: str) -> str:
    return device.split("/device:")[0]


def copy_small_constants(
    nodes: list[dict[str, Any]],
    placement: dict[str, str],
    output_types: dict[str, Any],
    keep: Collection[str],
) -> list[dict[str, Any]]:
    """``nodes`` (node dicts in a valid order) with each small ``Const`` read on another task copied to the
    reading devices; ``placement`` and ``output_types`` (node name -> its outputs' types, as the partitioner
    takes them) gain the copies, and ``placement`` loses a constant no node reads any more.

    ``keep`` names the step's fetched and targeted nodes: they stay, even when every reader has its own copy.
    New node dicts are made for what changes; ``nodes`` is not changed.
    """
    small = {
        n["name"]: n
        for n in nodes
        if n["op"] == "Const"
        and not n["input"]  # a constant that waits on something (a loop's, a control scope's) stays put
        and n["name"] in placement
        and np.size(n.get("attr", {}).get("value")) <= MAX_COPIED_ELEMENTS
    }
    if not small:
        return nodes
    copies: dict[tuple[str, str], str] = {}  # (constant, reading device) -> the copy's name
    added: dict[str, list[dict[str, Any]]] = {}  # constant -> its copies, placed right after it
    still_read: set[str] = set()
    out_nodes: dict[str, dict[str, Any]] = {}
    for n in nodes:
        device = placement.get(n["name"])
        inputs = n["input"]
        new_inputs = None
        for i, ref in enumerate(inputs):
            control = ref.startswith("^")
            source = ref[1:] if control else ref.split(":")[0]
            const = small.get(source)
            if const is None or device is None:
                continue
            if _task(placement[source]) == _task(device):
                still_read.add(source)
                continue
            name = copies.get((source, device))
            if name is None:
                name = copies[(source, device)] = f"{source}/_copy_{len(added.get(source, []))}"
                copy = {**const, "name": name, "input": [], "device": device}
                added.setdefault(source, []).append(copy)
                placement[name] = device
                output_types[name] = output_types[source]
            if new_inputs is None:
                new_inputs = list(inputs)
            new_inputs[i] = f"^{name}" if control else name + ref[len(source) :]
        out_nodes[n["name"]] = n if new_inputs is None else {**n, "input": new_inputs}
    result = []
    for n in nodes:
        name = n["name"]
        if name in small and name not in still_read and name not in keep and name in added:
            placement.pop(name, None)  # every reader has its own copy now
        else:
            result.append(out_nodes[name])
        result.extend(added.get(name, []))
    return result


__all__ = ["MAX_COPIED_ELEMENTS", "copy_small_constants"]
