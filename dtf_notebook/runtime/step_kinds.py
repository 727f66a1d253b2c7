"""What the dataflow executor does with a step: run its kernel, or move values the way a control-flow op does.

Example:
    >>> KIND_OF_TYPE["RefSwitch"] == SWITCH, KIND_OF_TYPE.get("MatMul", NORMAL) == NORMAL
    (True, True)
"""

from __future__ import annotations

#: Step kinds: an ordinary kernel, the five control-flow primitives the executor runs itself, and a plain loop
#: run serially (a step the executor adds, one per such frame, after the plan's own).
NORMAL, SWITCH, MERGE, ENTER, EXIT, NEXT, LOOP = range(7)

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
