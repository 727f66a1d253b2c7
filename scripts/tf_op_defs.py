"""Writes ``dtf_notebook/framework/tf_op_defs.pb``: TF's ``OpDef`` of every op type this package registers, and of
TF's save ops that meta graphs written here hold.

``Graph.as_graph_def()`` reads the file to write each node as TF's NodeDef: the type, number and type-list attrs
TF's op signature names (``T``, ``N``, ``Tidx``, ...) come from the node's input and output dtypes, every attr is
encoded as the type TF declares, and attrs TF does not know are kept under a ``_dtf_`` name. The file is an
``OpList`` (sorted by op name; descriptions, summaries and full types left out), written from the installed
TensorFlow. Run it again after adding an op type that TF has::

    python scripts/tf_op_defs.py            # writes the file, prints what it holds
    python scripts/tf_op_defs.py --check    # exit status 1 when the file is not what TF gives now

``tests/framework/test_graph_def_proto.py`` fails when an op type registered here that TF has is missing from the
file.

Example:
    >>> sorted(registered_op_types())[:2]  # doctest: +SKIP
    ['Abs', 'Acos']
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTPUT = os.path.join(REPO, "dtf_notebook", "framework", "tf_op_defs.pb")
# Modules that need Jupyter, or that are whole programs run as scripts, register no op types.
_SKIPPED = ("dtf_notebook.notebook", "dtf_notebook.lab", "dtf_notebook.examples")
# TF's save ops, which a meta graph written here holds in place of this package's (train/meta_graph_saver.py).
WRITTEN_FOR_TF = ("SaveV2", "RestoreV2", "ShardedFilename", "MergeV2Checkpoints")


def registered_op_types() -> set[str]:
    """Every op type this package registers (each of its modules imported)."""
    sys.path.insert(0, REPO)
    import dtf_notebook
    from dtf_notebook.framework import op_registry

    for module in pkgutil.walk_packages(dtf_notebook.__path__, "dtf_notebook."):
        if not module.name.startswith(_SKIPPED) and "programs" not in module.name:
            importlib.import_module(module.name)
    return set(op_registry._REGISTRY)


def tf_op_list(op_types: set[str]) -> tuple[bytes, list[str]]:
    """The serialized ``OpList`` of TF's signatures of ``op_types``, and the op types TF does not have."""
    from tensorflow.core.framework import op_def_pb2
    from tensorflow.python.framework import op_def_registry

    op_list = op_def_pb2.OpList()
    missing = []
    for name in sorted(op_types):
        op_def = op_def_registry.get(name)
        if op_def is None:
            missing.append(name)
            continue
        kept = op_list.op.add()
        kept.CopyFrom(op_def)
        kept.ClearField("summary")
        kept.ClearField("description")
        for arg in [*kept.input_arg, *kept.output_arg]:
            arg.ClearField("description")
            arg.ClearField("experimental_full_type")
        for attr in kept.attr:
            attr.ClearField("description")
    return op_list.SerializeToString(deterministic=True), missing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the file instead of writing it")
    args = parser.parse_args()
    data, missing = tf_op_list(registered_op_types() | set(WRITTEN_FOR_TF))
    if args.check:
        with open(OUTPUT, "rb") as f:
            same = f.read() == data
        print("up to date" if same else f"{OUTPUT} differs from TF's op defs: run python scripts/tf_op_defs.py")
        return 0 if same else 1
    with open(OUTPUT, "wb") as f:
        f.write(data)
    print(f"wrote {len(data)} bytes to {OUTPUT}; op types TF does not have: {', '.join(missing) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
