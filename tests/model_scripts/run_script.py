"""Runs a model script of this folder as a program, under dtf_notebook or under real TensorFlow with only its import
line changed, and optionally with the initial variable values of another run.

    python tests/model_scripts/run_script.py --lib tf  --save-init init.pkl --seed 1 mnist_deep.py --max_steps 200
    python tests/model_scripts/run_script.py --lib dtf --load-init init.pkl mnist_deep.py --max_steps 200

The scripts (and the sibling modules they import, such as ``mnist.py``) say ``import dtf_notebook.compat.v1 as tf``;
under ``--lib tf`` that line, and nothing else, reads ``import tensorflow.compat.v1 as tf``. Everything after
``--`` or the script's name goes to the script as its command line.

Initial values: the two libraries draw different random numbers, so a comparison of training runs starts both from
the same values. The first ``Session.run`` that runs every global variable's initializer (``sess.run(init)``,
``tf.global_variables_initializer().run()``, a MonitoredSession's scaffold) is followed, with ``--save-init``, by
writing every global variable's value by name, or with ``--load-init`` by loading those values (``Variable.load``)
into the variables of the same names -- which must be exactly the saved ones, so the scripts' variable names are
compared on the way. ``--seed`` (with ``--lib tf``) gives every TF graph that graph-level random seed, so the saved
values are the same in every run and a comparison is repeatable.

``--tf-cluster`` (with ``--lib tf``) starts a ps and a worker ``tf.train.Server`` in this process and replaces
``{master}`` in the script's arguments by the worker's target.

Under TF 2.21, ``tf.compat.v1.layers`` and ``tf.compat.v1.nn.rnn_cell`` need Keras 2 (``tf_keras``), which is not
installed; the TF run takes them from the copies TF ships (``legacy_tf_layers``, ``legacy_rnn``), the very classes
those names export with Keras 2.

Example:
    >>> [line for line in source_for(os.path.join(HERE, "mnist.py"), "tf").splitlines() if line.startswith("import")]
    ['import math', 'import tensorflow.compat.v1 as tf']
"""

from __future__ import annotations

import argparse
import importlib
import importlib.abc
import importlib.util
import os
import pickle
import sys
import types
from collections.abc import Sequence
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
DTF_IMPORT = "import dtf_notebook.compat.v1 as tf"
TF_IMPORT = "import tensorflow.compat.v1 as tf"


def source_for(path: str, lib: str) -> str:
    """A script's text as run under ``lib``: the dtf_notebook import line swapped for TF's under ``tf``."""
    with open(path) as f:
        text = f.read()
    if lib == "tf":
        if any(line.lstrip().startswith(("import tensorflow", "from tensorflow")) for line in text.splitlines()):
            raise ValueError(f"{path} imports tensorflow itself; a script here imports only dtf_notebook")
        text = "".join(TF_IMPORT + "\n" if line.strip() == DTF_IMPORT else line for line in text.splitlines(True))
    return text


class _SiblingLoader(importlib.abc.Loader):
    """Loads a sibling module (``mnist``, ``reader``, ...) with its import line swapped like the script's."""

    def __init__(self, path: str, lib: str) -> None:
        self.path, self.lib = path, lib

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        exec(compile(source_for(self.path, self.lib), self.path, "exec"), module.__dict__)


class _SiblingFinder(importlib.abc.MetaPathFinder):
    def __init__(self, lib: str) -> None:
        self.lib = lib

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        file = os.path.join(HERE, name + ".py")
        if "." in name or not os.path.exists(file):
            return None
        return importlib.util.spec_from_file_location(name, file, loader=_SiblingLoader(file, self.lib))


def _seed_every_graph(tf1: Any, seed: int) -> None:
    """Gives every TF graph (the default one and each ``tf.Graph()`` a script makes) the graph-level ``seed``, so
    its random initializers draw the same values in every run (TF derives each op's seed from it)."""
    from tensorflow.python.framework import ops

    unseeded_init = ops.Graph.__init__

    def seeded_init(self: Any, *args: Any, **kwargs: Any) -> None:
        unseeded_init(self, *args, **kwargs)
        self.seed = seed

    ops.Graph.__init__ = seeded_init
    tf1.get_default_graph().seed = seed


def _prepare_real_tf() -> Any:
    """TF1's ``tf.layers`` and ``tf.nn.rnn_cell`` for TF 2.21 without Keras 2."""
    import tensorflow.compat.v1 as tf1
    from tensorflow.python.keras.legacy_tf_layers import convolutional, core, pooling

    layers = types.ModuleType("tensorflow.compat.v1.layers")
    for module in (core, convolutional, pooling):
        for name in dir(module):
            if not name.startswith("_"):
                setattr(layers, name, getattr(module, name))
    tf1.layers = layers
    tf1.nn.rnn_cell = importlib.import_module("tensorflow._api.v2.compat.v1.nn.rnn_cell")
    return tf1


def _ancestors_by_control(fetches: Any) -> set[Any]:
    """The ops of ``fetches`` and every op they wait on through control inputs."""
    stack, seen = [], set()

    def add(x: Any) -> None:
        if isinstance(x, list | tuple):
            for y in x:
                add(y)
        elif isinstance(x, dict):
            for y in x.values():
                add(y)
        elif hasattr(x, "control_inputs"):
            stack.append(x)
        elif hasattr(x, "op") and hasattr(x.op, "control_inputs"):
            stack.append(x.op)

    add(fetches)
    while stack:
        op = stack.pop()
        if op not in seen:
            seen.add(op)
            stack.extend(op.control_inputs)
    return seen


def _hook_initial_values(tf: Any, save: str | None, load: str | None) -> None:
    """After the first run of each session that initializes every global variable, saves or loads their values."""
    done: set[int] = set()

    def after_init(session: Any, run: Any) -> None:
        variables = session.graph.get_collection(tf.GraphKeys.GLOBAL_VARIABLES)
        # Where the variables live, for the test of runs on a cluster.
        print(f"run_script: variable devices {sorted({v.device for v in variables})}", file=sys.stderr, flush=True)
        if save:
            values = dict(zip([v.op.name for v in variables], run(session, variables)))
            with open(save, "wb") as f:
                pickle.dump(values, f)
        if load:
            with open(load, "rb") as f:
                values = pickle.load(f)
            names = sorted(v.op.name for v in variables)
            if names != sorted(values):
                raise AssertionError(
                    f"variables differ from the saved run's: only here {sorted(set(names) - set(values))}, "
                    f"only there {sorted(set(values) - set(names))}"
                )
            for v in variables:
                v.load(values[v.op.name], session)

    for cls in (tf.Session, tf.InteractiveSession):
        original = cls.run
        if getattr(original, "hooked", False):
            continue

        def run(self: Any, fetches: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
            result = _original(self, fetches, *args, **kwargs)
            if id(self) not in done:
                initializers = {v.initializer for v in self.graph.get_collection(tf.GraphKeys.GLOBAL_VARIABLES)}
                if initializers and initializers <= _ancestors_by_control(fetches):
                    done.add(id(self))
                    after_init(self, _original)
            return result

        run.hooked = True
        cls.run = run


def _start_tf_cluster(tf1: Any) -> str:
    """A ps and a worker TF server in this process; the worker's target."""
    import socket

    ports = []
    for _ in range(2):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            ports.append(s.getsockname()[1])
    spec = tf1.train.ClusterSpec({"ps": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{ports[1]}"]})
    tf1.train.Server(spec, job_name="ps", task_index=0)
    worker = tf1.train.Server(spec, job_name="worker", task_index=0)
    return worker.target


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the script as ``__main__`` and returns its exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lib", choices=("tf", "dtf"), required=True)
    parser.add_argument("--save-init", help="write the initial variable values here")
    parser.add_argument("--load-init", help="start from the initial variable values written here")
    parser.add_argument("--tf-cluster", action="store_true", help="start a ps and a worker TF server in-process")
    parser.add_argument(
        "--seed",
        type=int,
        help="(with --lib tf) the graph-level random seed of every graph: initial values, dropout and shuffles repeat "
        "from run to run (an op given its own seed draws a different stream than with no graph seed)",
    )
    parser.add_argument("script")
    parser.add_argument("script_args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.seed is not None and args.lib != "tf":
        parser.error("--seed seeds TF's graphs; a dtf_notebook run starts from --load-init's values")
    script = os.path.join(HERE, args.script)
    script_args = args.script_args[1:] if args.script_args[:1] == ["--"] else args.script_args
    if args.lib == "tf":
        tf = _prepare_real_tf()
        if args.seed is not None:
            _seed_every_graph(tf, args.seed)
        if args.tf_cluster:
            master = _start_tf_cluster(tf)
            script_args = [a.replace("{master}", master) for a in script_args]
    else:
        import dtf_notebook.compat.v1 as tf
    _hook_initial_values(tf, args.save_init, args.load_init)
    sys.meta_path.insert(0, _SiblingFinder(args.lib))
    sys.argv = [script, *script_args]
    # The script is the program's __main__ (tf.app.run() without main= looks up __main__.main).
    program = types.ModuleType("__main__")
    program.__file__ = script
    sys.modules["__main__"] = program
    try:
        exec(compile(source_for(script, args.lib), script, "exec"), program.__dict__)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
