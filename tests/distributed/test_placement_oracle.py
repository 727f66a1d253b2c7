"""Seed 000's placement rules across a cluster, checked against real TensorFlow servers.

Unpinned ops go to the session master's task; a spec naming a job but no task resolves to the master's own task
when the master is in that job and to task 0 otherwise (``/job:worker`` from a session on worker 1 is worker 1,
from a session on ps 1 it is worker 0). A generator (a constant, a placeholder) goes with its consumers when they
are all on one device its request allows.
"""

from __future__ import annotations

from typing import Any

import pytest

import dtf_notebook.compat.v1 as tf
from tests.distributed.cluster_util import free_port

pytestmark = [pytest.mark.cluster, pytest.mark.tf_oracle]

NAMES = ("a", "b", "c", "s", "p1", "p2", "w", "pp", "v1", "v2", "g1", "g2", "g3", "g4", "ga", "gb", "gw", "gc", "gd")
MASTERS = [("worker", 1), ("worker", 0), ("ps", 1)]


def _build(lib: Any) -> list[Any]:
    """Seed 000's examples (its GPUs as CPUs: TensorFlow's CPU-only servers have none) plus bare job specs."""
    with lib.device("/job:ps/task:0/cpu:0"):
        a = lib.constant(1.0, name="a")
    with lib.device("/job:worker/task:0/cpu:0"):
        b = lib.add(a, 2.0, name="b")
    c = lib.add(a, b, name="c")
    with lib.device(lib.train.replica_device_setter(ps_tasks=2)):
        v1 = lib.Variable(1.0, name="v1")
        v2 = lib.Variable(2.0, name="v2")
        s = lib.add(v1, v2, name="s")
        with lib.device("/cpu:0"):
            p1 = lib.multiply(2.0, s, name="p1")
            with lib.device("/task:1"):
                p2 = lib.multiply(3.0, s, name="p2")
    with lib.device("/job:worker"):
        w = lib.add(c, 1.0, name="w")
    with lib.device("/job:ps"):
        pp = lib.add(c, 1.0, name="pp")
    # Generators: unpinned, with all consumers on ps 1 (there too); consumers on two tasks, or a control consumer
    # elsewhere (the master's task); a request the consumers' device does not meet (the request's own place).
    g1, g2, g4 = (lib.constant(float(i), name=f"g{i}") for i in (1, 2, 4))
    with lib.device("/job:worker"):
        g3 = lib.constant(3.0, name="g3")
    with lib.device("/job:ps/task:1"):
        vg = lib.Variable(1.0, name="vg")
        ga = lib.add(vg, g1, name="ga")
        gb = lib.add(vg, g2, name="gb")
        gc = lib.add(vg, g3, name="gc")
        gd = lib.add(vg, g4, name="gd")
    with lib.device("/job:worker/task:0"):
        gw = lib.add(g2, 1.0, name="gw")
        with lib.control_dependencies([g4]):
            ge = lib.identity(gw, name="ge")
    return [c, s, p1, p2, w, pp, ga, gb, gc, gd, gw, ge]


def _spec() -> dict[str, list[str]]:
    return {job: [f"127.0.0.1:{free_port()}" for _ in range(2)] for job in ("ps", "worker")}


def _theirs(real: Any) -> dict[tuple[str, int], dict[str, str]]:
    spec = _spec()
    servers = {(job, i): real.train.Server(spec, job_name=job, task_index=i) for job in spec for i in range(2)}
    placed = {}
    with real.Graph().as_default() as graph:
        fetches = _build(real)
        init = real.global_variables_initializer()
    for master in MASTERS:
        with real.Session(servers[master].target, graph=graph) as sess:
            sess.run(init)
            metadata = real.RunMetadata()
            sess.run(fetches, options=real.RunOptions(output_partition_graphs=True), run_metadata=metadata)
        placed[master] = {n.name: n.device for g in metadata.partition_graphs for n in g.node if n.name in NAMES}
    return placed


def _ours() -> dict[tuple[str, int], dict[str, str]]:
    spec = _spec()
    servers = {(job, i): tf.train.Server(spec, job_name=job, task_index=i) for job in spec for i in range(2)}
    try:
        with tf.Graph().as_default() as graph:
            fetches = _build(tf)
        placed = {}
        for master in MASTERS:
            with tf.Session(servers[master].target, graph=graph) as sess:
                rows = sess.placement(fetches)["nodes"]
            placed[master] = {row["name"]: row["device"] for row in rows if row["name"] in NAMES}
        return placed
    finally:
        for server in servers.values():
            server.stop()


def test_placement_of_seed_000_examples_matches_tensorflow():
    real = pytest.importorskip("tensorflow").compat.v1
    theirs, ours = _theirs(real), _ours()
    for master in MASTERS:
        # TensorFlow folds some constants away, and copies small ones consumed on several devices to each of them
        # (g2 and g3 become g2/replicate/_0, ...)
        compared = set(theirs[master]) & set(ours[master])
        assert {"c", "s", "p1", "p2", "w", "pp", "g1", "g4", "ga", "gb", "gc", "gd"} <= compared
        assert {n: ours[master][n] for n in compared} == {n: theirs[master][n] for n in compared}, master
    # The rules spelled out, from a session on worker 1:
    assert ours[("worker", 1)]["c"] == "/job:worker/replica:0/task:1/device:CPU:0"
    assert ours[("worker", 1)]["w"] == "/job:worker/replica:0/task:1/device:CPU:0"  # /job:worker: the master
    assert ours[("worker", 1)]["pp"] == "/job:ps/replica:0/task:0/device:CPU:0"  # /job:ps: task 0
    assert ours[("ps", 1)]["w"] == "/job:worker/replica:0/task:0/device:CPU:0"
    assert ours[("worker", 1)]["g1"] == "/job:ps/replica:0/task:1/device:CPU:0"  # with its only consumer
    assert ours[("worker", 1)]["g2"] == ours[("worker", 1)]["g4"] == "/job:worker/replica:0/task:1/device:CPU:0"
    assert ours[("ps", 1)]["g3"] == "/job:worker/replica:0/task:0/device:CPU:0"  # its request wins
