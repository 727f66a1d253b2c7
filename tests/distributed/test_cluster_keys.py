"""Cluster keys: random keys and key files, passphrases through scrypt with a cluster's salt, where a process
finds its key, what dtf-server says and refuses, and that the key never travels to a server."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys
import time

import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.distributed import keyring
from dtf_notebook.distributed.cluster_key import KEY_PREFIX, ClusterKey, read_key_file, write_key_file
from dtf_notebook.distributed.curve import curve_keys
from dtf_notebook.notebook.cli import main as dtf_cluster
from tests.distributed.cluster_util import free_port, task_env


def test_generated_keys_are_random_and_round_trip_through_their_text():
    keys = {ClusterKey.generate().text for _ in range(50)}
    assert len(keys) == 50 and all(k.startswith(KEY_PREFIX) and len(k) == len(KEY_PREFIX) + 43 for k in keys)
    key = ClusterKey.generate()
    assert ClusterKey.parse(key.text) == key and ClusterKey.parse(f"  {key.text}\n") == key
    assert key.text not in repr(key) and key.fingerprint in repr(key)


@pytest.mark.parametrize("text", ["dtfkey1:short", "dtfkey1:" + "!" * 43, "dtfkey1:" + "A" * 50])
def test_a_damaged_key_is_refused_not_taken_for_a_passphrase(text):
    with pytest.raises(ValueError, match="Malformed cluster key"):
        ClusterKey.parse(text, salt="anything")


def test_a_passphrase_goes_through_scrypt_with_the_clusters_salt():
    passphrase = "correct horse battery staple"
    with pytest.raises(ValueError, match="needs a salt naming the cluster"):
        ClusterKey.parse(passphrase)
    key = ClusterKey.parse(passphrase, salt="exp42")
    # What the key is made of: scrypt (memory-hard) of the passphrase with a salt naming the cluster.
    salt = hashlib.sha256(b"dtf_notebook cluster key salt v1\0exp42").digest()
    expected = hashlib.scrypt(passphrase.encode(), salt=salt, n=1 << 15, r=8, p=1, maxmem=64 << 20, dklen=32)
    assert key == ClusterKey(expected)
    assert key != ClusterKey.parse(passphrase, salt="exp43")  # another cluster, another key
    assert key != ClusterKey(hashlib.sha256(passphrase.encode()).digest())
    # Each guess costs real time (a derivation outside the process's cache).
    started = time.perf_counter()
    hashlib.scrypt(b"a guess", salt=salt, n=1 << 15, r=8, p=1, maxmem=64 << 20, dklen=32)
    assert time.perf_counter() - started > 0.01


def test_curve_keys_differ_per_cluster_key_and_role():
    a, b = curve_keys(ClusterKey.generate()), curve_keys(ClusterKey.generate())
    assert a["server_secret"] != a["client_secret"] and a["server_public"] != b["server_public"]


def test_key_files_are_owner_only_and_never_overwritten(tmp_path):
    path = str(tmp_path / "cluster.key")
    key = write_key_file(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert ClusterKey.parse(read_key_file(path)) == key
    with pytest.raises(FileExistsError):
        write_key_file(path)
    os.chmod(path, 0o640)
    with pytest.raises(PermissionError, match=r"can be read by other users \(mode 0640\): run `chmod 600"):
        read_key_file(path)
    empty = tmp_path / "empty.key"
    empty.write_text("\n")
    empty.chmod(0o600)
    with pytest.raises(ValueError, match="is empty"):
        read_key_file(str(empty))


def test_dtf_cluster_keygen(tmp_path, capsys):
    path = str(tmp_path / "k")
    assert dtf_cluster(["keygen", path]) == 0
    out = capsys.readouterr().out
    key = ClusterKey.parse(read_key_file(path))
    assert key.fingerprint in out and key.text not in out and "dtf-server --key-file" in out
    assert dtf_cluster(["keygen", path]) == 1
    assert "never overwritten" in capsys.readouterr().err


def test_where_a_client_finds_its_key(monkeypatch, tmp_path):
    mine, env_key, explicit = ClusterKey.generate(), ClusterKey.generate(), ClusterKey.generate()
    address = f"127.0.0.1:{free_port()}"
    monkeypatch.delenv("DTF_CLUSTER_KEY", raising=False)
    monkeypatch.delenv("DTF_CLUSTER_KEY_FILE", raising=False)
    assert keyring.client_key(address) is None
    key_file = str(tmp_path / "env.key")
    write_key_file(key_file, env_key)
    monkeypatch.setenv("DTF_CLUSTER_KEY_FILE", key_file)
    assert keyring.client_key(address) == env_key  # the environment's, when nothing else is known
    keyring.remember([address], mine)
    try:
        assert keyring.client_key(address) == mine  # this process's cluster at that address wins
        assert keyring.client_key(address, tf.ConfigProto(cluster_key=explicit.text)) == explicit  # the config, most
    finally:
        keyring.forget([address])
    monkeypatch.setenv("DTF_CLUSTER_KEY", "open sesame")
    monkeypatch.setenv("DTF_CLUSTER_SALT", "exp42")
    assert keyring.client_key(address) == ClusterKey.parse("open sesame", "exp42")


def test_the_key_stays_in_the_client_and_is_used_to_call_a_keyed_server():
    key = ClusterKey.generate()
    server = tf.train.Server({"local": ["127.0.0.1:0"]}, config=tf.ConfigProto(cluster_key=key.text))
    try:
        config = tf.ConfigProto(cluster_key=key.text)
        with tf.Graph().as_default(), tf.Session(server.target, config=config) as sess:
            backend = sess._backend
            assert "cluster_key" not in backend._wire_config and "cluster_key_salt" not in backend._wire_config
            assert sess.run(tf.constant(2.0) + 1.0) == 3.0
    finally:
        server.stop()


def _serve(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen, str]:
    """Starts dtf-server; returns it once it serves, with what it printed until then."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "dtf_notebook.server", *args],
        env=env or task_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    printed = ""
    while True:
        line = proc.stdout.readline()
        printed += line
        if not line or line.startswith("ready"):
            return proc, printed


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(10)
    proc.stdout.close()


@pytest.mark.cluster
def test_a_server_without_a_key_on_a_network_address_warns_in_one_line(tmp_path):
    port = free_port("0.0.0.0")
    spec = f'{{"local": ["0.0.0.0:{port}"]}}'
    proc, printed = _serve("--cluster", spec, "--job", "local", "--task", "0")
    try:
        (warning,) = [line for line in printed.splitlines() if "without a cluster key" in line]
        assert warning.startswith(f"Task /job:local/task:0 serves 0.0.0.0:{port} without a cluster key: anyone")
        assert "dtf-server --key-file" in warning
    finally:
        _stop(proc)
    key_file = str(tmp_path / "k")
    write_key_file(key_file)
    for args in (["--key-file", key_file], []):  # keyed on the network, or keyless on loopback: quiet
        address = f"{'0.0.0.0' if args else '127.0.0.1'}:{free_port()}"
        proc, printed = _serve("--cluster", f'{{"local": ["{address}"]}}', "--job", "local", "--task", "0", *args)
        try:
            assert printed.startswith("ready") and "without a cluster key" not in printed, printed
        finally:
            _stop(proc)


@pytest.mark.cluster
def test_dtf_server_refuses_a_key_file_others_can_read_and_a_passphrase_without_salt(tmp_path):
    key_file = tmp_path / "k"
    write_key_file(str(key_file))
    key_file.chmod(0o644)
    spec = f'{{"local": ["127.0.0.1:{free_port()}"]}}'
    base = [sys.executable, "-m", "dtf_notebook.server", "--cluster", spec, "--job", "local", "--task", "0"]
    result = subprocess.run([*base, "--key-file", str(key_file)], env=task_env(), capture_output=True, text=True)
    assert result.returncode != 0 and "can be read by other users (mode 0644)" in result.stderr
    assert "Traceback" not in result.stderr
    passphrase = tmp_path / "p"
    passphrase.write_text("open sesame\n")
    passphrase.chmod(0o600)
    result = subprocess.run([*base, "--key-file", str(passphrase)], env=task_env(), capture_output=True, text=True)
    assert result.returncode != 0 and "needs a salt naming the cluster" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.cluster
def test_a_task_with_another_key_is_named_at_once_and_a_connection_reset_is_not_taken_for_one():
    import socket
    import struct
    import threading

    from dtf_notebook.distributed.transport import Client

    server = tf.train.Server({"local": ["127.0.0.1:0"]}, config=tf.ConfigProto(cluster_key=ClusterKey.generate().text))
    wrong = Client(ClusterKey.generate(), dead_after=10.0)
    try:
        started = time.monotonic()
        with pytest.raises(tf.errors.UnauthenticatedError, match="another cluster key than this client's"):
            wrong.call(server.address, "GetStatus", timeout=30)
        assert time.monotonic() - started < 5  # not the 10 s a dead task takes to be declared down
    finally:
        wrong.close()
        server.stop()
    # A listener that resets every connection, as a task going down does: down, not a key mismatch.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.1)
    stop = threading.Event()

    def reset_everyone() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()  # RST

    thread = threading.Thread(target=reset_everyone, daemon=True)
    thread.start()
    address = f"127.0.0.1:{listener.getsockname()[1]}"
    try:
        for key in (None, ClusterKey.generate()):
            client = Client(key, dead_after=1.0)
            try:
                with pytest.raises(tf.errors.UnavailableError, match="probably down"):
                    client.call(address, "GetStatus", timeout=30)
            finally:
                client.close()
    finally:
        stop.set()
        thread.join(5)
        listener.close()


class _ImpatientTask:
    """A listener that greets a probe with ``mechanism`` but resets a ZeroMQ client's connection before its greeting
    gets there: the race a task with another mechanism wins now and then on a loaded machine, where the client's
    handshake fails without saying why."""

    def __init__(self, mechanism: bytes) -> None:
        import socket
        import threading

        self.mechanism = mechanism
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen()
        self.listener.settimeout(0.1)
        self.address = f"127.0.0.1:{self.listener.getsockname()[1]}"
        self.stop = threading.Event()
        self.resets = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        import select
        import socket
        import struct

        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    conn.sendall(b"\xff" + b"\0" * 8 + b"\x7f")
                    got = b""
                    while len(got) < 11:  # the peer's signature and major version
                        got += conn.recv(11 - len(got)) or b"!" * 11
                    conn.sendall(b"\x03")
                    # libzmq sends the rest of its greeting now; the probe waits for ours first.
                    if select.select([conn], [], [], 0.2)[0]:
                        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                        self.resets += 1
                        continue  # closing resets the connection
                    conn.sendall(b"\x01" + self.mechanism.ljust(20, b"\0") + b"\0" * 32)
                    conn.recv(1)
                except OSError:
                    pass

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        self.listener.close()


@pytest.mark.parametrize(
    "key, mechanism, message",
    [(None, b"CURVE", "requires a cluster key and this client has none"), ("key", b"NULL", "runs without one")],
)
def test_a_handshake_reset_by_a_task_with_another_mechanism_is_still_named_a_refusal(key, mechanism, message):
    from dtf_notebook.distributed.handshake_watch import greeting_mechanism
    from dtf_notebook.distributed.transport import Client

    task = _ImpatientTask(mechanism)
    client = Client(key and ClusterKey.generate(), dead_after=10.0)
    try:
        assert greeting_mechanism(task.address) == mechanism.decode()
        started = time.monotonic()
        with pytest.raises(tf.errors.UnauthenticatedError, match=message):
            client.call(task.address, "GetStatus", timeout=30)
        assert time.monotonic() - started < 5 and task.resets >= 1
    finally:
        client.close()
        task.close()


def test_the_greeting_probe_gives_up_on_a_peer_that_dribbles_bytes():
    import socket
    import threading

    from dtf_notebook.distributed.handshake_watch import greeting_mechanism

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()

    def dribble() -> None:
        conn, _ = listener.accept()
        with conn:
            for byte in b"\xff" + b"\0" * 8 + b"\x7f" + b"\x03\x01CURVE":
                if stop.wait(0.2):
                    return
                conn.sendall(bytes([byte]))

    thread = threading.Thread(target=dribble, daemon=True)
    thread.start()
    try:
        started = time.monotonic()
        assert greeting_mechanism(f"127.0.0.1:{listener.getsockname()[1]}", timeout=0.5) is None
        assert time.monotonic() - started < 2.0  # one deadline for the whole greeting, not one per byte
    finally:
        stop.set()
        thread.join(5)
        listener.close()
