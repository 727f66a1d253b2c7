"""Tasks on IPv6 addresses (``[::1]:port``): every task its own process, tensors crossing tasks over IPv6."""

from __future__ import annotations

import socket

import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.distributed.transport import Client
from tests.distributed.cluster_util import LocalCluster

pytestmark = pytest.mark.cluster


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _has_ipv6_loopback(), reason="this machine has no IPv6 loopback")
def test_a_cluster_on_ipv6_loopback_runs_steps_across_tasks():
    with LocalCluster(jobs={"ps": 1, "worker": 1}, host="[::1]") as cluster:
        assert cluster.spec["ps"][0].startswith("[::1]:")
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(2.0, name="v6")
        tripled = v * 3.0  # on the worker: v travels ps -> worker over IPv6
        with tf.Session(cluster.target("worker", 0)) as sess:
            sess.run(v.initializer)
            assert sess.run(tripled) == 6.0
        client = Client(cluster.cluster_key, dead_after=5.0)  # a raw client of a locked cluster needs its key
        try:
            reply, _ = client.call(cluster.spec["ps"][0], "GetStatus", {}, timeout=30)
            assert reply["job"] == "ps"
        finally:
            client.close()
