"""TF's op signatures (``OpDef``) of the op types this package has, read from ``tf_op_defs.pb`` beside this module.

A NodeDef that real TF imports carries the attrs TF's op signature names: the element type of each input and output
(``T``, ``Tidx``, ``dtype``, ...), the length of each list input (``N``), every attr with TF's declared type, and
the attrs with a default. The builders here keep only the attrs their kernels need, so ``Graph.as_graph_def()``
completes each node from TF's signature of its op type (:mod:`dtf_notebook.framework.attr_values`). The file is
TF's ``OpList`` for the op types registered here, written by ``scripts/tf_op_defs.py`` from the installed TF;
nothing here imports TF. Op types TF does not have (this package's save ops ``SaveShard``,
``MergeCheckpointShards`` and ``RestoreSlices``, among a few) have no entry.

Example:
    >>> [(a.name, a.type_attr) for a in tf_op_def("MatMul").input_arg]
    [('a', 'T'), ('b', 'T')]
    >>> tf_op_def("SaveShard") is None
    True
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from typing import Any

__all__ = ["stripped_op_list", "tf_op_def"]

_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tf_op_defs.pb")


@functools.cache
def _op_defs() -> dict[str, Any]:
    from dtf_notebook.protos.graph_pb import OpList

    with open(_PATH, "rb") as f:
        op_list = OpList.FromString(f.read())
    return {op_def.name: op_def for op_def in op_list.op}


def tf_op_def(op_type: str) -> Any:
    """TF's ``OpDef`` of ``op_type`` (a shared message: copy it before changing it), or None when TF has no such op.

    Example:
        >>> tf_op_def("Placeholder").attr[0].name
        'dtype'
    """
    return _op_defs().get(op_type)


def stripped_op_list(op_types: Iterable[str]) -> Any:
    """The ``OpList`` of TF's signatures of ``op_types`` (sorted by name), as a meta graph's ``stripped_op_list``
    holds the op types its graph uses; op types TF does not have are left out.

    Example:
        >>> [op.name for op in stripped_op_list(["Const", "MatMul", "SaveShard", "Const"]).op]
        ['Const', 'MatMul']
    """
    from dtf_notebook.protos.graph_pb import OpList

    known = _op_defs()
    return OpList(op=[known[name] for name in sorted(set(op_types)) if name in known])
