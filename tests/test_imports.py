"""What importing the package costs, and how its modules import each other (issue 13, start-up).

Building a graph and talking to a cluster are plain Python: a fresh ``import dtf_notebook.compat.v1`` (and graph
building after it) loads neither torch nor ZeroMQ nor safetensors, which load when a local session builds its
kernels. And imports go down the layers: framework/, placement/, runtime/, ops/ and distributed/ import no
module of a higher layer and form no import cycle (scripts/import_graph.py reads the package with ``ast``).
"""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest

from tests.fresh_process import run_fresh

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_HEAVY = ("torch", "zmq", "safetensors")


@pytest.fixture(scope="module")
def import_graph():
    spec = importlib.util.spec_from_file_location("import_graph", os.path.join(_REPO, "scripts", "import_graph.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules["import_graph"] = module  # dataclasses look their module up while it executes
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules["import_graph"]
    return module


def test_compat_v1_import_and_graph_building_load_no_torch_zmq_or_safetensors():
    loaded = run_fresh(
        """
import json, sys
import dtf_notebook.compat.v1 as tf
after_import = sorted(m for m in ("torch", "zmq", "safetensors") if m in sys.modules)
with tf.Graph().as_default():
    x = tf.placeholder(tf.float32, [None, 4])
    with tf.variable_scope("model"):
        w = tf.get_variable("w", [4, 2])
    logits = tf.matmul(x, w)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([0]), logits=logits))
    step = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_or_create_global_step())
    tf.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)])
    tf.cond(tf.constant(True), lambda: x, lambda: x * 2.0)
    tf.train.Saver()
    with tf.device("/job:ps/task:0"):
        tf.Variable(1.0)
    tf.gradients(tf.reduce_sum(tf.gather(w, [0, 1])), w)
    cluster = tf.train.ClusterSpec({"ps": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"]})
after_graph = sorted(m for m in ("torch", "zmq", "safetensors") if m in sys.modules)
print(json.dumps({"import": after_import, "graph": after_graph}))
"""
    )
    assert loaded == {"import": [], "graph": []}


def test_a_local_session_imports_torch_when_it_runs():
    result = run_fresh(
        """
import json, sys
import dtf_notebook.compat.v1 as tf
with tf.Graph().as_default():
    y = tf.constant([1.0, 2.0]) * 3.0
    with tf.Session() as sess:
        value = sess.run(y).tolist()
print(json.dumps({"value": value, "torch": "torch" in sys.modules}))
"""
    )
    assert result == {"value": [3.0, 6.0], "torch": True}


def test_the_package_root_and_a_task_load_neither_the_tf1_namespace_nor_the_servers_they_do_not_need():
    loaded = run_fresh(
        """
import json, sys
import dtf_notebook
root = sorted(m for m in ("dtf_notebook.compat.v1", "dtf_notebook.distributed.server") if m in sys.modules)
import dtf_notebook.compat.v1
client = sorted(m for m in ("dtf_notebook.distributed.server", "dtf_notebook.estimator") if m in sys.modules)
import dtf_notebook as tf
lazy = [tf.estimator.ModeKeys.TRAIN, tf.train.Server.__name__, type(tf.app.flags).__name__]
print(json.dumps({"root": root, "client": client, "lazy": lazy, "dir": "estimator" in dir(tf)}))
"""
    )
    assert loaded == {"root": [], "client": [], "lazy": ["train", "Server", "module"], "dir": True}
    task = run_fresh(
        """
import json, sys
import dtf_notebook.server
print(json.dumps(sorted(m for m in ("dtf_notebook.compat.v1", "dtf_notebook.estimator") if m in sys.modules)))
"""
    )
    assert task == []


def test_a_task_registers_every_op_the_package_defines():
    """A task runs whatever graph it is sent: ``dtf_notebook.server`` registers every op of every module."""
    registered = run_fresh(
        """
import importlib, json, os, pkgutil
import dtf_notebook.server
from dtf_notebook.framework import op_registry
task = set(op_registry.registered_types())
root = os.path.dirname(dtf_notebook.server.__file__)
for info in pkgutil.walk_packages([root], "dtf_notebook."):
    path = os.path.join(os.path.dirname(root), *info.name.split(".")) + ("/__init__.py" if info.ispkg else ".py")
    if os.path.exists(path) and "register_op(" in open(path, encoding="utf-8").read():
        importlib.import_module(info.name)
print(json.dumps(sorted(set(op_registry.registered_types()) - task)))
"""
    )
    assert registered == []


def test_no_import_cycle_among_framework_ops_runtime_distributed(import_graph):
    graph = import_graph.build_graph(import_graph.PACKAGE_DIR)
    lower = {"framework", "placement", "runtime", "ops", "distributed"}
    edges = {
        module: {t for t in targets if import_graph.layer_of(t) in lower}
        for module, targets in graph.edges().items()
        if import_graph.layer_of(module) in lower
    }
    assert import_graph.strongly_connected(edges) == []


def test_lower_layers_import_no_higher_layer(import_graph):
    graph = import_graph.build_graph(import_graph.PACKAGE_DIR)
    lower = {"errors", "lazy_modules", "framework", "placement", "runtime", "ops", "distributed"}
    upward = [
        f"{i.source}:{i.line} -> {i.target}"
        for i in graph.imports
        if import_graph.layer_of(i.source) in lower and import_graph.upward(i)
    ]
    assert upward == []


def test_import_graph_reads_function_level_imports_and_cycles(import_graph, tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "low.py").write_text("def f():\n    from pkg import high\n    return high\n")
    (package / "other.py").write_text("")
    # An import under TYPE_CHECKING never runs: no edge.
    high = "from typing import TYPE_CHECKING\n\nfrom pkg.low import f\n\nif TYPE_CHECKING:\n    from pkg import other\n"
    (package / "high.py").write_text(high)
    graph = import_graph.build_graph(str(package))
    assert {(i.source, i.target, i.function_level) for i in graph.imports} == {
        ("pkg.low", "pkg.high", True),
        ("pkg.high", "pkg.low", False),
    }
    assert import_graph.strongly_connected(graph.edges()) == [["pkg.high", "pkg.low"]]
    assert import_graph.strongly_connected(graph.edges(function_level=False)) == []


def test_zmq_constants_written_out_match_pyzmq():
    zmq = pytest.importorskip("zmq")
    from dtf_notebook.distributed import handshake_watch, zmq_util

    assert (zmq_util._EVENTS, zmq_util._POLLIN) == (int(zmq.EVENTS), int(zmq.POLLIN))
    assert (zmq_util._NOBLOCK, zmq_util._SNDMORE) == (int(zmq.NOBLOCK), int(zmq.SNDMORE))
    assert handshake_watch._PROTOCOL == int(zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL)
    assert handshake_watch._AUTH == int(zmq.EVENT_HANDSHAKE_FAILED_AUTH)
    assert handshake_watch._NO_DETAIL == int(zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL)
    assert handshake_watch._SUCCEEDED == int(zmq.EVENT_HANDSHAKE_SUCCEEDED)
    assert zmq_util._DISCONNECTED == int(zmq.EVENT_DISCONNECTED)
    assert zmq_util._HANDSHAKE_SUCCEEDED == int(zmq.EVENT_HANDSHAKE_SUCCEEDED)


def test_lazy_module_becomes_the_real_module():
    import types

    import torch

    from dtf_notebook.lazy_modules import LazyModule

    stand_in = LazyModule("torch")
    assert stand_in.Tensor is torch.Tensor and stand_in.float32 is torch.float32
    assert type(stand_in) is types.ModuleType  # plain module attribute reads from now on
    assert stand_in.fft is torch.fft
    assert not hasattr(stand_in, "no_such_attribute_in_torch")


@pytest.mark.slow
@pytest.mark.cluster
def test_a_client_of_a_local_cluster_never_imports_torch(runtime_dir):
    result = run_fresh(
        """
import json, sys
import dtf_notebook.compat.v1 as tf
from dtf_notebook.notebook.local_cluster import LocalCluster
with LocalCluster(ps=1, workers=1) as cluster, tf.Graph().as_default():
    with tf.device("/job:ps/task:0"):
        v = tf.Variable([1.5, 2.5])
    with tf.device("/job:worker/task:0"):
        y = tf.reduce_sum(v * 2.0)
    with tf.Session(cluster.target("worker", 0)) as sess:
        sess.run(v.initializer)
        value = float(sess.run(y))
print(json.dumps({"value": value, "heavy": sorted(m for m in ("torch", "safetensors") if m in sys.modules)}))
"""
    )
    assert result == {"value": 8.0, "heavy": []}
