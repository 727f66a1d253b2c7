"""``tf.summary.get_summary_description``: the ``SummaryDescription`` stored in a TF1 ``TensorSummary`` node.

TF1's first tensor-summary op (``TensorSummary``, before ``TensorSummaryV2``) kept a JSON ``SummaryDescription`` in
its ``description`` attr. No op here creates one (``tensor_summary`` builds ``TensorSummaryV2``, as TF 1.15 does),
but such nodes come with graphs written by old TF versions; this reads their description from a NodeDef given as
this package's plain dict (``Operation.node_def``) or as a protobuf ``NodeDef``.

Example:
    >>> node = {"op": "TensorSummary", "attr": {"description": '{"type_hint": "scalar"}'}}
    >>> print(get_summary_description(node), end="")
    type_hint: "scalar"
"""

from __future__ import annotations

import json
from typing import Any

from dtf_notebook.summary.messages import SummaryDescription

__all__ = ["get_summary_description"]


def _attr_string(value: Any) -> str:
    """An attr's string value: a str or bytes (plain NodeDefs) or an ``AttrValue`` with ``s``."""
    value = getattr(value, "s", value)
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def get_summary_description(node_def: Any) -> SummaryDescription:
    """The ``SummaryDescription`` of a ``TensorSummary`` NodeDef (JSON in its ``description`` attr; the field may be
    spelled ``type_hint`` or ``typeHint``, as protobuf's JSON parser accepts).

    Args:
        node_def: The NodeDef of a ``TensorSummary`` op: a dict with ``op`` and ``attr``, or a protobuf NodeDef.

    Returns:
        The description.

    Raises:
        ValueError: the node is not a ``TensorSummary`` op, or its description is not a description's JSON.

    Example:
        >>> node = {"op": "TensorSummary", "attr": {"description": b'{"typeHint": "image"}'}}
        >>> get_summary_description(node).type_hint
        'image'
        >>> get_summary_description({"op": "Add", "attr": {}})
        Traceback (most recent call last):
            ...
        ValueError: Can't get_summary_description on Add
    """
    op = node_def["op"] if isinstance(node_def, dict) else getattr(node_def, "op", None)
    if op != "TensorSummary":
        raise ValueError(f"Can't get_summary_description on {op}")
    attrs = node_def["attr"] if isinstance(node_def, dict) else node_def.attr
    text = _attr_string(attrs["description"]) if "description" in attrs else ""
    try:
        fields = json.loads(text) if text else {}
    except json.JSONDecodeError as e:
        raise ValueError(f"The description of the TensorSummary node is not JSON: {e}") from None
    if not isinstance(fields, dict) or set(fields) - {"type_hint", "typeHint"}:
        raise ValueError(f"Not a SummaryDescription: {text!r}")
    hint = fields.get("type_hint", fields.get("typeHint"))
    return SummaryDescription(type_hint=hint) if hint is not None else SummaryDescription()
