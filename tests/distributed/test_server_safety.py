"""A server must survive garbage, refuse peers without the cluster key, and time out instead of hanging."""

from __future__ import annotations

import os
import random

import msgpack
import numpy as np
import pytest
import zmq

import dtf_notebook.compat.v1 as tf
from dtf_notebook.distributed import wire
from dtf_notebook.distributed.cluster_key import ClusterKey
from dtf_notebook.distributed.transport import Client
from dtf_notebook.notebook.local_cluster import UnlockedClusterWarning
from tests.distributed.cluster_util import LocalCluster, free_port

pytestmark = pytest.mark.cluster


def _raw_dealer(address: str) -> zmq.Socket:
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, 2000)
    sock.connect(f"tcp://{address}")
    return sock


@pytest.fixture(scope="module")
def task():
    """One task in a process of its own, run without a key: the garbage a key holder (or any peer of a cluster
    run with ``--no-auth``) can send. Locked tasks refuse a peer without the key before it sends anything."""
    with pytest.warns(UnlockedClusterWarning):
        cluster = LocalCluster(jobs={"local": 1}, cluster_key=False).start()
    with cluster:
        yield cluster


def _reply(sock: zmq.Socket) -> dict | None:
    """The header of the next reply, or None when none came (the message was dropped)."""
    try:
        return msgpack.unpackb(sock.recv_multipart()[0], raw=False)
    except zmq.Again:
        return None


def test_random_and_truncated_frames_get_errors_and_the_task_keeps_serving(task):
    address = task.spec["local"][0]
    sock = _raw_dealer(address)
    rng = random.Random(1234)
    valid = wire.encode_message({"id": 5, "method": "GetStatus"}, [np.arange(1000, dtype=np.float32)])
    valid = [bytes(memoryview(f)) for f in valid]
    try:
        messages = []
        for _ in range(150):
            kind = rng.randrange(5)
            if kind == 0:
                messages.append([os.urandom(rng.randrange(1, 64)) for _ in range(rng.randrange(1, 4))])
            elif kind == 1:
                messages.append([valid[0][: rng.randrange(len(valid[0]))]] + valid[1:])
            elif kind == 2:
                messages.append([valid[0], valid[1][: rng.randrange(len(valid[1]))]])
            elif kind == 3:
                messages.append([b"\xc1" + os.urandom(rng.randrange(1, 20)), os.urandom(rng.randrange(1, 20))])
            else:
                messages.append([msgpack.packb({"id": "x", "method": 3, "tensors": [{"dtype": "nope"}]})])
        replies = 0
        for frames in messages:
            sock.send_multipart(frames)
            header = _reply(sock)
            if header is not None:  # dropping garbage is also fine
                assert "error" in header
                replies += 1
        assert replies > 0
        assert task.task("local").status == "running"
        with tf.Session(task.target("local")) as sess:
            assert sess.run(tf.constant(2.0) * 3.0) == 6.0
    finally:
        sock.close(0)


def _meta(dtype: str, shape: list[int], nbytes: int, chunks: int = 1) -> dict:
    return {"dtype": dtype, "shape": shape, "nbytes": nbytes, "chunks": chunks}


@pytest.mark.parametrize(
    "frames, why",
    [
        ([{"tensors": [_meta("float32", [1 << 40, 1 << 40], 8)]}, b"\0" * 8], "bad dim"),
        ([{"tensors": [_meta("uint8", [5 << 30], 5 << 30)]}, b"\0" * 8], "not an int in"),
        ([{"tensors": [_meta("float32", [1] * 40, 4)]}, b"\0" * 4], "at most 32 dims"),
        ([{"tensors": [_meta("float32", [4], 16, chunks=3)]}, b"\0" * 16], ""),
        ([{"tensors": [_meta("float32", [1 << 28], 1 << 30)]}, b"\0" * 8], ""),
        ([{"blob": b"\0" * (17 << 20)}], "header"),
    ],
    ids=["huge-dims", "over-tensor-limit", "rank-40", "chunks-mismatch", "short-payload", "17MiB-header"],
)
def test_oversized_or_lying_messages_get_an_error_and_the_task_keeps_serving(task, frames, why):
    address = task.spec["local"][0]
    header = {"id": 9, "method": "GetStatus", **frames[0]}
    packed = [msgpack.packb(header, use_bin_type=True), *frames[1:]]
    sock = _raw_dealer(address)
    try:
        sock.send_multipart(packed)
        reply = _reply(sock)
        assert reply is not None and "error" in reply, reply
        assert why.lower() in str(reply["error"]).lower()
        client = Client()
        try:
            assert client.call(address, "GetStatus", {}, timeout=30)[0]["job"] == "local"
        finally:
            client.close()
    finally:
        sock.close(0)


def test_a_stream_announcing_more_than_a_receiver_reserves_is_refused(task):
    address = task.spec["local"][0]
    # Five tensors at the 4 GiB limit: 20 GiB, more than the 16 GiB a receiver reserves for open streams.
    metas = [_meta("uint8", [4 << 30], 4 << 30, chunks=4096)] * 5
    header = {"id": 11, "method": "GetStatus", "tensors": metas}
    head = b"\xc1H" + (77).to_bytes(8, "little") + (5 * 4096).to_bytes(4, "little")
    sock = _raw_dealer(address)
    try:
        sock.send_multipart([head, msgpack.packb(header, use_bin_type=True)])
        reply = _reply(sock)
        assert reply is not None and reply["id"] == 11 and "exceeds" in str(reply["error"]), reply
        for _ in range(3):  # parts of the refused stream are dropped quietly
            sock.send_multipart([b"\xc1P" + (77).to_bytes(8, "little"), b"\0" * (1 << 20)])
        assert _reply(sock) is None
        with tf.Session(task.target("local")) as sess:
            assert sess.run(tf.constant(1.5) * 2.0) == 3.0
    finally:
        sock.close(0)


def test_unknown_method_is_an_error_reply():
    server = tf.train.Server.create_local_server()
    client = Client()
    try:
        with pytest.raises(tf.errors.UnimplementedError, match="FlyToMoon"):
            client.call(server.address, "FlyToMoon", {}, timeout=5)
    finally:
        client.close()
        server.stop()


def test_keyed_task_process_refuses_peers_without_the_key(tmp_path):
    passphrase, salt = "correct horse battery staple", "safety-test"
    key = ClusterKey.parse(passphrase, salt)
    key_file = tmp_path / "cluster.key"
    key_file.write_text(passphrase + "\n")
    key_file.chmod(0o600)
    args = ["--key-file", str(key_file), "--cluster-salt", salt]
    # The task reads the passphrase file (the later --key-file wins); the launcher holds the same key, to see it serve.
    with LocalCluster(jobs={"local": 1}, server_args={"local": args}, cluster_key=key) as cluster:
        address = cluster.spec["local"][0]
        config = tf.ConfigProto(cluster_key=passphrase, cluster_key_salt=salt)
        with tf.Session(cluster.target("local"), config=config) as sess:
            assert sess.run(tf.constant(1.0) + 1.0) == 2.0
        outsider, wrong = Client(dead_after=1.0), Client(cluster_key=ClusterKey.generate(), dead_after=1.0)
        try:
            assert not _answers(outsider, address) and not _answers(wrong, address)
            assert not _knows_only_the_public_key(address, key)
            sock = _raw_dealer(address)  # plain text to an encrypting task: nothing comes back
            try:
                sock.send_multipart(wire.encode_message({"id": 1, "method": "GetStatus"}))
                assert _reply(sock) is None
            finally:
                sock.close(0)
        finally:
            outsider.close()
            wrong.close()
        with tf.Session(cluster.target("local"), config=config) as sess:
            assert sess.run(tf.constant(2.0) + 1.0) == 3.0  # still serving the key holders


def _keyed_server(key: ClusterKey):
    return tf.train.Server({"local": [f"127.0.0.1:{free_port()}"]}, config=tf.ConfigProto(cluster_key=key.text))


def _answers(client: Client, address: str) -> bool:
    try:
        client.call(address, "GetStatus", {}, timeout=3)
        return True
    except (tf.errors.UnavailableError, tf.errors.DeadlineExceededError, tf.errors.UnauthenticatedError):
        return False


def _knows_only_the_public_key(address: str, key: ClusterKey) -> bool:
    """Whether a peer holding the server's public key (not secret) but its own key pair gets an answer."""
    from dtf_notebook.distributed.curve import curve_keys

    public, secret = zmq.curve_keypair()
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, 1500)
    sock.curve_serverkey, sock.curve_publickey, sock.curve_secretkey = curve_keys(key)["server_public"], public, secret
    try:
        sock.connect(f"tcp://{address}")
        sock.send_multipart(wire.encode_message({"id": 1, "method": "GetStatus"}))
        sock.recv_multipart()
        return True
    except zmq.Again:
        return False
    finally:
        sock.close(0)


def test_several_keyed_servers_in_one_process_share_the_authenticator():
    from dtf_notebook.distributed.curve import _running

    keys = {name: ClusterKey.generate() for name in ("key one", "key two", "wrong")}
    first, same, other = _keyed_server(keys["key one"]), _keyed_server(keys["key one"]), _keyed_server(keys["key two"])
    clients = {name: Client(cluster_key=key, dead_after=1.0) for name, key in keys.items()}
    try:
        for server, name in ((first, "key one"), (same, "key one"), (other, "key two")):
            with tf.Session(server.target, config=tf.ConfigProto(cluster_key=keys[name].text)) as sess:
                assert sess.run(tf.constant(1.0) + 1.0) == 2.0
            assert _answers(clients[name], server.address)
            assert not _answers(clients["wrong"], server.address)
            assert not _knows_only_the_public_key(server.address, keys[name])  # refused by the authenticator
        assert not _answers(clients["key two"], first.address) and not _answers(clients["key one"], other.address)
        # Stopping one keyed server leaves the others guarded; a restart on the same port is guarded again.
        first.stop()
        assert _answers(clients["key one"], same.address) and not _answers(clients["wrong"], same.address)
        first.start()
        assert _answers(clients["key one"], first.address) and not _answers(clients["wrong"], first.address)
        for server in (first, same, other):
            server.stop()
        assert not _running(zmq.Context.instance())  # the last keyed socket stopped the authenticator
        first.start()
        assert _answers(clients["key one"], first.address) and not _answers(clients["key two"], first.address)
    finally:
        for client in clients.values():
            client.close()
        for server in (first, same, other):
            server.stop()


def test_run_timeout_raises_deadline_exceeded():
    server = tf.train.Server.create_local_server()
    try:
        big = tf.random_normal([1500, 1500])
        prod = tf.reduce_sum(tf.matmul(tf.matmul(big, big), tf.matmul(big, big)))
        with tf.Session(server.target) as sess:
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(prod, options=tf.RunOptions(timeout_in_ms=1))
            assert sess.run(tf.constant(1.0)) == 1.0
    finally:
        server.stop()


def test_list_variables_summarizes_where_the_variable_lives():
    server = tf.train.Server.create_local_server(config=tf.ConfigProto(virtual_gpus=1))
    client = Client()
    try:
        with tf.device("/cpu:0"):
            v = tf.Variable([3.0, 4.0], name="watched")
        with tf.container("experiment"), tf.device("/gpu:0"):
            w = tf.Variable([[1, 2], [3, 4]], name="kept", dtype=tf.int32)
        with tf.Session(server.target) as sess:
            sess.run([v.initializer, w.initializer])
        reply, _ = client.call(server.address, "ListVariables", {}, timeout=5)
        assert reply["task"] == "/job:localhost/replica:0/task:0"
        rows = {r["name"]: r for r in reply["variables"]}
        row = rows["watched"]
        assert row["container"] == "" and row["device"] == "/job:localhost/replica:0/task:0/device:CPU:0"
        assert row["shape"] == [2] and row["dtype"] == "float32" and row["norm"] == pytest.approx(5.0)
        assert row["min"] == 3.0 and row["max"] == 4.0 and row["mean"] == 3.5
        kept = rows["kept"]
        assert kept["container"] == "experiment" and kept["device"] == "/job:localhost/replica:0/task:0/device:GPU:0"
        assert kept["shape"] == [2, 2] and kept["dtype"] == "int32" and kept["max"] == 4.0
        only, _ = client.call(server.address, "ListVariables", {"containers": ["experiment"]}, timeout=5)
        assert [r["name"] for r in only["variables"]] == ["kept"]
    finally:
        client.close()
        server.stop()
