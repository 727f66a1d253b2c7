"""Tasks as separate hosts: two network namespaces joined by a veth pair (skipped where not permitted)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from dtf_notebook.distributed.local_process import task_env

pytestmark = pytest.mark.cluster

CLIENT = """
import sys
import dtf_notebook.compat.v1 as tf
with tf.device("/job:ps/task:0"):
    v = tf.Variable([1.0, 2.0], name="remote_v")
with tf.device("/job:worker/task:0"):
    doubled = v * 2.0
with tf.Session(sys.argv[1]) as sess:
    sess.run(v.initializer)
    print(sess.run(doubled).tolist())
"""


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


@pytest.fixture
def two_hosts():
    if shutil.which("ip") is None or os.geteuid() != 0:
        pytest.skip("needs root and iproute2 to create network namespaces")
    tag = uuid.uuid4().hex[:6]
    hosts = [f"dtf{tag}a", f"dtf{tag}b"]
    try:
        _ip("netns", "add", hosts[0])
    except subprocess.CalledProcessError as e:
        pytest.skip(f"network namespaces not permitted here: {e.stderr.decode().strip()}")
    try:
        _ip("netns", "add", hosts[1])
        _ip("link", "add", f"v{tag}a", "type", "veth", "peer", "name", f"v{tag}b")
        addresses = ["10.213.7.1", "10.213.7.2"]
        for host, link, address in zip(hosts, (f"v{tag}a", f"v{tag}b"), addresses):
            _ip("link", "set", link, "netns", host)
            _ip("-n", host, "addr", "add", f"{address}/24", "dev", link)
            _ip("-n", host, "link", "set", link, "up")
            _ip("-n", host, "link", "set", "lo", "up")
        yield list(zip(hosts, addresses))
    finally:
        for host in hosts:
            subprocess.run(["ip", "netns", "del", host], capture_output=True, timeout=10)


def test_tasks_on_separate_hosts(two_hosts, tmp_path):
    """Two "machines" run a keyed cluster, as the README says to run across machines: a key file made by
    ``dtf-cluster keygen`` on every task and client. A client with the key trains; one without is refused."""
    (ps_host, ps_ip), (worker_host, worker_ip) = two_hosts
    spec = {"ps": [f"{ps_ip}:2222"], "worker": [f"{worker_ip}:2222"]}
    key_file = str(tmp_path / "cluster.key")
    subprocess.run([sys.executable, "-m", "dtf_notebook.notebook.cli", "keygen", key_file], env=task_env(), check=True)
    keyed = {**task_env(), "DTF_CLUSTER_KEY_FILE": key_file}
    procs = []
    try:
        for host, job in ((ps_host, "ps"), (worker_host, "worker")):
            procs.append(
                subprocess.Popen(
                    [
                        "ip",
                        "netns",
                        "exec",
                        host,
                        sys.executable,
                        "-m",
                        "dtf_notebook.server",
                        "--cluster",
                        json.dumps(spec),
                        "--job",
                        job,
                        "--task",
                        "0",
                        "--key-file",
                        key_file,
                    ],
                    env=task_env(),
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                )
            )
        for proc in procs:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                line = proc.stdout.readline()
                assert "without a cluster key" not in line  # a keyed task on a network address: no warning
                if line.startswith("ready") or not line:
                    break
            assert line.startswith("ready"), "task did not start"

        def client(env: dict[str, str]) -> subprocess.CompletedProcess:
            command = ["ip", "netns", "exec", ps_host, sys.executable, "-c", CLIENT, f"zmq://{worker_ip}:2222"]
            return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)

        result = client(keyed)  # from the other machine, with the key
        assert result.returncode == 0, result.stderr[-2000:]
        assert result.stdout.strip() == "[2.0, 4.0]"
        refused = client(task_env())  # the same, without it
        assert refused.returncode != 0
        assert "UnauthenticatedError" in refused.stderr and "this client has none" in refused.stderr
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
