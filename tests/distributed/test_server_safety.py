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
from dtf_notebook.distributed.transport import Client
from tests.distributed.cluster_util import free_port

pytestmark = pytest.mark.cluster


def _raw_dealer(address: str) -> zmq.Socket:
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, 2000)
    sock.connect(f"tcp://{address}")
    return sock


def test_random_and_truncated_frames_get_errors_and_the_server_keeps_serving():
    server = tf.train.Server.create_local_server()
    sock = _raw_dealer(server.address)
    rng = random.Random(1234)
    valid = wire.encode_message({"id": 5, "method": "GetStatus"}, [np.arange(1000, dtype=np.float32)])
    valid = [bytes(memoryview(f)) for f in valid]
    try:
        messages = []
        for _ in range(150):
            kind = rng.randrange(4)
            if kind == 0:
                messages.append([os.urandom(rng.randrange(1, 64)) for _ in range(rng.randrange(1, 4))])
            elif kind == 1:
                messages.append([valid[0][: rng.randrange(len(valid[0]))]] + valid[1:])
            elif kind == 2:
                messages.append([valid[0], valid[1][: rng.randrange(len(valid[1]))]])
            else:
                messages.append([msgpack.packb({"id": "x", "method": 3, "tensors": [{"dtype": "nope"}]})])
        replies = 0
        for frames in messages:
            sock.send_multipart(frames)
            try:
                header = msgpack.unpackb(sock.recv_multipart()[0], raw=False)
                assert "error" in header
                replies += 1
            except zmq.Again:
                pass  # dropping garbage is also fine
        assert replies > 0
        with tf.Session(server.target) as sess:
            assert sess.run(tf.constant(2.0) * 3.0) == 6.0
    finally:
        sock.close(0)
        server.stop()


def test_unknown_method_is_an_error_reply():
    server = tf.train.Server.create_local_server()
    client = Client()
    try:
        with pytest.raises(tf.errors.UnimplementedError, match="FlyToMoon"):
            client.call(server.address, "FlyToMoon", {}, timeout=5)
    finally:
        client.close()
        server.stop()


def test_cluster_key_refuses_peers_without_it():
    spec = {"local": [f"127.0.0.1:{free_port()}"]}
    config = tf.ConfigProto(cluster_key="correct horse battery staple")
    server = tf.train.Server(spec, config=config)
    outsider = Client(dead_after=1.0)
    wrong = Client(cluster_key="wrong key", dead_after=1.0)
    try:
        with tf.Session(server.target, config=tf.ConfigProto(cluster_key="correct horse battery staple")) as sess:
            assert sess.run(tf.constant(1.0) + 1.0) == 2.0
        for client in (outsider, wrong):
            with pytest.raises((tf.errors.UnavailableError, tf.errors.DeadlineExceededError)):
                client.call(server.address, "GetStatus", {}, timeout=3)
    finally:
        outsider.close()
        wrong.close()
        server.stop()


def _keyed_server(key: str):
    return tf.train.Server({"local": [f"127.0.0.1:{free_port()}"]}, config=tf.ConfigProto(cluster_key=key))


def _answers(client: Client, server) -> bool:
    try:
        client.call(server.address, "GetStatus", {}, timeout=3)
        return True
    except (tf.errors.UnavailableError, tf.errors.DeadlineExceededError):
        return False


def _knows_only_the_public_key(server, key: str) -> bool:
    """Whether a peer holding the server's public key (not secret) but its own key pair gets an answer."""
    from dtf_notebook.distributed.curve import curve_keys

    public, secret = zmq.curve_keypair()
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, 1500)
    sock.curve_serverkey, sock.curve_publickey, sock.curve_secretkey = curve_keys(key)["server_public"], public, secret
    try:
        sock.connect(f"tcp://{server.address}")
        sock.send_multipart(wire.encode_message({"id": 1, "method": "GetStatus"}))
        sock.recv_multipart()
        return True
    except zmq.Again:
        return False
    finally:
        sock.close(0)


def test_several_keyed_servers_in_one_process_share_the_authenticator():
    from dtf_notebook.distributed.curve import _running

    first, same, other = _keyed_server("key one"), _keyed_server("key one"), _keyed_server("key two")
    clients = {key: Client(cluster_key=key, dead_after=1.0) for key in ("key one", "key two", "wrong")}
    try:
        for server, key in ((first, "key one"), (same, "key one"), (other, "key two")):
            with tf.Session(server.target, config=tf.ConfigProto(cluster_key=key)) as sess:
                assert sess.run(tf.constant(1.0) + 1.0) == 2.0
            assert _answers(clients[key], server)
            assert not _answers(clients["wrong"], server)
            assert not _knows_only_the_public_key(server, key)  # refused by the authenticator itself
        assert not _answers(clients["key two"], first) and not _answers(clients["key one"], other)
        # Stopping one keyed server leaves the others guarded; a restart on the same port is guarded again.
        first.stop()
        assert _answers(clients["key one"], same) and not _answers(clients["wrong"], same)
        first.start()
        assert _answers(clients["key one"], first) and not _answers(clients["wrong"], first)
        for server in (first, same, other):
            server.stop()
        assert not _running(zmq.Context.instance())  # the last keyed socket stopped the authenticator
        first.start()
        assert _answers(clients["key one"], first) and not _answers(clients["key two"], first)
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
    server = tf.train.Server.create_local_server()
    client = Client()
    try:
        v = tf.Variable([3.0, 4.0], name="watched")
        with tf.Session(server.target) as sess:
            sess.run(v.initializer)
        reply, _ = client.call(server.address, "ListVariables", {}, timeout=5)
        row = next(r for r in reply["variables"] if r["name"] == "watched")
        assert row["shape"] == [2] and row["dtype"] == "float32" and row["norm"] == pytest.approx(5.0)
        assert row["min"] == 3.0 and row["max"] == 4.0 and row["mean"] == 3.5
    finally:
        client.close()
        server.stop()
