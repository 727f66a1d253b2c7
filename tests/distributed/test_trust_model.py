"""The trust model, tested the way an attacker comes: from other processes, against separate task processes.

- A peer holding the key still cannot make a task touch a file outside its roots, nor make a merge rename or
  remove a file by naming it in a shard description (the attack found against ``MergeCheckpointShards``).
- A default local cluster refuses every peer without its key: another process that cannot read the cluster
  file, a raw ZeroMQ peer, another user of the machine; the same user's processes reach it with no extra step.
- One peer flooding a task with sessions or bytes is refused with ``ResourceExhaustedError`` while another
  client's training keeps stepping.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest
import torch
import zmq

import dtf_notebook.compat.v1 as tf
from dtf_notebook.distributed import wire
from dtf_notebook.lib.io import tensor_bundle
from dtf_notebook.ops import io_ops
from dtf_notebook.runtime import checkpoint_format as fmt
from tests.distributed.cluster_util import LocalCluster, task_env

pytestmark = pytest.mark.cluster


# ---- file access of a key holder -------------------------------------------------------------------
@pytest.fixture(scope="module")
def places(tmp_path_factory):
    """A task's file root, a directory outside it holding a victim file, and a symlink inside pointing out."""
    base = tmp_path_factory.mktemp("files")
    root, outside = base / "root", base / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("victim")
    (root / "escape").symlink_to(outside, target_is_directory=True)
    return root, outside


@pytest.fixture(scope="module")
def rooted(places):
    """One locked task, in its own process, confined to ``root``; this test process holds the key."""
    root, _ = places
    with LocalCluster(jobs={"local": 1}, server_args={"local": ["--file-root", str(root)]}) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def unrooted():
    """One locked task with no file roots (as TF: anywhere the process may go)."""
    with LocalCluster(jobs={"local": 1}) as cluster:
        yield cluster


def _run_on(cluster: LocalCluster, build):
    """Builds ``build()`` on the task's device and runs it there in a session of a key holder."""
    with tf.Graph().as_default():
        with tf.device("/job:local/task:0"):
            fetch = build()
        with tf.Session(cluster.target("local")) as sess:
            return sess.run(fetch)


def _still_serving(cluster: LocalCluster) -> None:
    assert cluster.task("local").status == "running"
    assert _run_on(cluster, lambda: tf.constant(2.0) * 3.0) == 6.0


def _write(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


def _tree(path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def _escapes(root, outside) -> dict[str, str]:
    return {
        "absolute": str(outside / "model"),
        "dot-dot": f"{root}/../outside/model",
        "symlinked-directory": str(root / "escape" / "model"),
        "file-url": f"file://{outside}/model",
        "file-colon": f"file:{outside}/model",  # no "//": fsspec still reads it as a local path
        "home": "~/../../" + str(outside).lstrip("/") + "/model",
        "other-scheme": "memory://elsewhere/model",
        "chained-url": f"simplecache::file://{root}/model",
    }


@pytest.mark.parametrize(
    "kind",
    ["absolute", "dot-dot", "symlinked-directory", "file-url", "file-colon", "home", "other-scheme", "chained-url"],
)
def test_a_save_outside_the_roots_is_refused_and_writes_nothing(rooted, places, kind):
    root, outside = places
    before = _tree(outside)
    prefix = _escapes(root, outside)[kind]
    with pytest.raises(tf.errors.PermissionDeniedError, match="outside this task's file roots|chained URLs"):
        _run_on(rooted, lambda: io_ops.save_shard(prefix, [tf.constant([1.0, 2.0])], ["w"], [""], 0, 1))
    assert _tree(outside) == before
    assert not list(root.glob("*.tmp-*"))
    _still_serving(rooted)


@pytest.mark.parametrize(
    "kind", ["absolute", "dot-dot", "symlinked-directory", "file-url", "file-colon", "home", "other-scheme"]
)
def test_a_restore_outside_the_roots_is_refused(rooted, places, kind):
    root, outside = places
    # A real checkpoint outside the roots, which the task could read were it not confined: TF's format, as savers
    # write it, and this package's earlier one.
    tensor_bundle.write_tensor_bundle(str(outside / "model"), {"w": np.array([7.0], np.float32)}, _write)
    data, entries = fmt.encode_shard([("w", "", torch.tensor([7.0]))])
    (outside / "model.data-00000-of-00001.safetensors").write_bytes(data)
    meta = {"shard": 0, "num_shards": 1, "file": "model.data-00000-of-00001.safetensors", "entries": entries}
    (outside / "model.index.json").write_bytes(fmt.encode_index(fmt.build_index([meta])))
    prefix = _escapes(root, outside)[kind]
    with pytest.raises(tf.errors.PermissionDeniedError, match="outside this task's file roots"):
        _run_on(rooted, lambda: io_ops.restore_slices(prefix, ["w"], [""], [tf.float32], [[1]])[0])
    _still_serving(rooted)


def test_an_index_naming_a_shard_file_outside_its_directory_is_refused(rooted, places):
    root, outside = places
    (outside / "loot.data-00000-of-00001.safetensors").write_bytes(
        fmt.encode_shard([("w", "", torch.tensor([9.0]))])[0]
    )
    _, entries = fmt.encode_shard([("w", "", torch.tensor([0.0]))])
    for name in ("../outside/loot.data-00000-of-00001.safetensors", "escape/loot.data-00000-of-00001.safetensors"):
        meta = {"shard": 0, "num_shards": 1, "file": name, "entries": entries}
        index = fmt.build_index([meta])
        (root / "planted.index.json").write_bytes(fmt.encode_index(index))
        with pytest.raises(tf.errors.DataLossError, match="not a shard file name"):
            _run_on(rooted, lambda: io_ops.restore_slices(str(root / "planted"), ["w"], [""], [tf.float32], [[1]])[0])
    # A symlinked index inside the roots pointing out is read where it really is: refused.
    (root / "linked.index.json").symlink_to(outside / "model.index.json")
    with pytest.raises(tf.errors.PermissionDeniedError, match="it resolves to"):
        _run_on(rooted, lambda: io_ops.restore_slices(str(root / "linked"), ["w"], [""], [tf.float32], [[1]])[0])
    _still_serving(rooted)


def _outside_readers(path: str) -> dict:
    """Every other kind of kernel that opens a file on its task, each given ``path`` (outside the roots)."""

    def reader(make):
        def build():
            queue = tf.FIFOQueue(1, tf.string)
            with tf.control_dependencies([queue.enqueue([path])]):
                return make().read(queue)[1]

        return build

    def dataset(make):
        return lambda: tf.data.make_one_shot_iterator(make([path])).get_next()

    def sampler():
        classes = tf.constant([[0]], tf.int64)
        return tf.nn.fixed_unigram_candidate_sampler(classes, 1, 1, False, 3, vocab_file=path)[0]

    return {
        "read_file": lambda: tf.read_file(path),
        "write_file": lambda: tf.write_file(path, "x"),
        "TextLineReader": reader(tf.TextLineReader),
        "WholeFileReader": reader(tf.WholeFileReader),
        "TFRecordReader": reader(tf.TFRecordReader),
        "TextLineDataset": dataset(tf.data.TextLineDataset),
        "TFRecordDataset": dataset(tf.data.TFRecordDataset),
        "candidate sampler vocab_file": sampler,
    }


@pytest.mark.parametrize("kind", list(_outside_readers("x")))
def test_every_kernel_that_opens_a_file_refuses_one_outside_the_roots(rooted, places, kind):
    root, outside = places
    (outside / "data.txt").write_text("0,1\n1,1\n2,1\n")
    before = _tree(outside)
    for path in (str(outside / "data.txt"), str(root / "escape" / "data.txt"), f"{root}/../outside/data.txt"):
        with pytest.raises(tf.errors.PermissionDeniedError, match="outside this task's file roots"):
            _run_on(rooted, _outside_readers(path)[kind])
    assert _tree(outside) == before
    _still_serving(rooted)


def _lying_description(file: str, temp: str) -> str:
    return json.dumps({"shard": 0, "num_shards": 1, "file": file, "temp": temp, "entries": []})


@pytest.mark.parametrize("task", ["rooted", "unrooted"])
@pytest.mark.parametrize(
    "file, temp",
    [
        ("../stolen.txt", "../outside/secret.txt"),  # the attack as found: rename a victim file elsewhere
        ("model.data-00000-of-00001", "{outside}/secret.txt"),  # absolute temporary name
        ("model.data-00000-of-00001", "escape/secret.txt"),  # through a symlinked directory
        ("sub/model.data-00000-of-00001", "model.data-00000-of-00001.tmp-" + "0" * 32),
        ("model.data-00000-of-00001", "model.data-00000-of-00001.tmp-../../x"),
    ],
    ids=["dot-dot", "absolute-temp", "symlinked-temp", "separator-in-file", "dot-dot-in-temp-suffix"],
)
def test_a_merge_cannot_rename_or_remove_a_file_named_in_a_lying_description(request, places, task, file, temp):
    """A merge only moves the exact shard names its prefix gives, roots or not; the victim stays where it is."""
    cluster = request.getfixturevalue(task)
    root, outside = places
    before = _tree(outside.parent)
    description = _lying_description(file, temp.format(outside=outside))
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be 'model.data-00000-of-00001'"):
        _run_on(cluster, lambda: io_ops.merge_checkpoint_shards(str(root / "model"), [tf.constant(description)]))
    assert _tree(outside.parent) == before  # nothing renamed, written or removed (no failure clean-up either)
    assert (outside / "secret.txt").read_text() == "victim"
    _still_serving(cluster)


def test_a_save_and_restore_inside_the_roots_work(rooted, places):
    root, _ = places
    prefix = str(root / "run" / "model")
    (root / "run").mkdir(exist_ok=True)

    def save():
        described = io_ops.save_shard(prefix, [tf.constant([1.5, 2.5])], ["w"], [""], 0, 1)
        return io_ops.merge_checkpoint_shards(prefix, [described])

    assert _run_on(rooted, save) == prefix.encode()
    restored = _run_on(rooted, lambda: io_ops.restore_slices(prefix, ["w"], [""], [tf.float32], [[2]])[0])
    assert restored.tolist() == [1.5, 2.5]


def test_a_server_given_a_root_that_does_not_exist_says_so():
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "dtf_notebook.server",
            "--cluster",
            '{"local": ["127.0.0.1:0"]}',
            "--job",
            "local",
            "--task",
            "0",
            "--file-root",
            "/no/such/root",
        ],
        env=task_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "dtf-server: File root /no/such/root is not an existing directory" in result.stderr
    assert "Traceback" not in result.stderr


# ---- a locked local cluster, as other processes and users see it ------------------------------------
STRANGER = """
import sys
import dtf_notebook.compat.v1 as tf
try:
    with tf.Session(sys.argv[1]) as sess:
        print("ran", sess.run(tf.constant(1.0) + 1.0))
except tf.errors.OpError as e:
    print(type(e).__name__, e.message)
"""

NEIGHBOUR = """
import sys
import dtf_notebook.compat.v1 as tf
from dtf_notebook.notebook.local_cluster import LocalCluster

cluster = LocalCluster.connect(sys.argv[1])
with tf.device("/job:ps/task:0"):
    x = tf.Variable(41.0, name="shared_by_name")
with tf.Session(cluster.target("worker", 0)) as sess:
    sess.run(x.initializer)
    print("connected", sess.run(x + 1.0))
with tf.Session(sys.argv[2]) as sess:  # a bare target of the same cluster, no key given anywhere
    print("bare target", sess.run(x * 2.0))
"""


@pytest.fixture(scope="module")
def locked():
    """A default (locked) local cluster whose runtime directory anyone may enter, so that only the cluster
    file's own mode keeps other users out of it."""
    from dtf_notebook.notebook.local_cluster import LocalCluster

    directory = tempfile.mkdtemp(prefix="dtf-runtime-")
    os.chmod(directory, 0o755)
    try:
        with pytest.MonkeyPatch.context() as m:
            m.setenv("JUPYTER_RUNTIME_DIR", directory)
            with LocalCluster(ps=1, workers=1, name="locked") as cluster:
                yield cluster
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _python(script: str, *args: str, env: dict[str, str]) -> str:
    result = subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def test_a_local_cluster_is_locked_by_default(locked, tmp_path):
    assert locked.locked and locked.cluster_key is not None
    record = json.loads(open(locked.file).read())
    assert record["cluster_key"] is True and record["key"] == locked.cluster_key.text
    assert oct(os.stat(locked.file).st_mode & 0o777) == "0o600"
    # A process that cannot read the cluster file (here: another runtime directory) holds no key: refused.
    elsewhere = {**task_env(), "JUPYTER_RUNTIME_DIR": str(tmp_path)}
    out = _python(STRANGER, locked.target("worker", 0), env=elsewhere)
    assert out.startswith("UnauthenticatedError") and "requires a cluster key and this client has none" in out
    # A raw ZeroMQ peer speaking the plain protocol gets nothing back.
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, 1500)
    try:
        sock.connect(f"tcp://{locked.spec['ps'][0]}")
        sock.send_multipart(wire.encode_message({"id": 1, "method": "ListVariables"}))
        with pytest.raises(zmq.Again):
            sock.recv_multipart()
    finally:
        sock.close(0)


def test_the_same_users_other_processes_connect_by_name_or_target(locked):
    # The bare target spelled as TF1 scripts often do: grpc:// and "localhost" for the 127.0.0.1 the task binds.
    bare = locked.target("worker", 0).replace("zmq://127.0.0.1:", "grpc://localhost:")
    out = _python(NEIGHBOUR, "locked", bare, env=task_env())
    assert out.splitlines() == ["connected 42.0", "bare target 82.0"]


def test_the_cli_and_listings_never_show_the_key(locked):
    listing = subprocess.run(
        [sys.executable, "-m", "dtf_notebook.notebook.cli", "list", "--json"],
        env=task_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert listing.returncode == 0
    (record,) = [r for r in json.loads(listing.stdout) if r["name"] == "locked"]
    assert record["cluster_key"] is True and "key" not in record and "dtfkey1:" not in listing.stdout


# What another user of the machine can try with the system's Python and no packages: read the cluster file,
# then speak ZeroMQ's wire protocol (ZMTP 3.0) with the NULL (no key) mechanism to a task.
OTHER_USER = r"""
import socket, sys
path, address = sys.argv[1], sys.argv[2]
try:
    open(path).read()
    print("read the cluster file")
except PermissionError:
    print("cluster file: permission denied")
host, port = address.rsplit(":", 1)
s = socket.create_connection((host, int(port)), timeout=5)

def read(n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return data

# The greeting in ZMTP's steps: signature, major version, then minor version and mechanism (NULL: no key).
s.sendall(b"\xff" + b"\0" * 8 + b"\x7f")
read(10)
s.sendall(b"\x03")
read(1)
s.sendall(b"\x00" + b"NULL".ljust(20, b"\0") + b"\x00" + b"\0" * 31)
print("task mechanism", read(53)[1:21].rstrip(b"\0").decode())
ready = b"\x05READY" + b"\x0bSocket-Type" + (6).to_bytes(4, "big") + b"DEALER"
try:
    s.sendall(b"\x04" + bytes([len(ready)]) + ready)
    rest = s.recv(4096)
    print("after READY", "closed" if not rest else "command %r" % rest[2:7])
except OSError:
    print("after READY", "closed")
"""


def test_another_user_can_neither_read_the_cluster_file_nor_talk_to_a_task(locked):
    system_python = shutil.which("python3", path="/usr/bin:/bin")
    if os.geteuid() != 0 or system_python is None:
        pytest.skip("needs root (to run a process as another user) and a system python3")
    try:
        pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no 'nobody' user")
    result = subprocess.run(
        [system_python, "-c", OTHER_USER, locked.file, locked.spec["worker"][0]],
        user="nobody",
        capture_output=True,
        text=True,
        timeout=60,
        cwd="/",
        env={"PATH": "/usr/bin:/bin"},
    )
    if "cluster file: permission denied" not in result.stdout and "read the cluster file" not in result.stdout:
        pytest.skip(f"could not run a process as nobody here: {result.stderr[-500:]}")
    lines = result.stdout.splitlines()
    assert lines[0] == "cluster file: permission denied"
    assert lines[1] == "task mechanism CURVE"  # the task only speaks to key holders
    assert lines[2] in ("after READY closed", "after READY command b'ERROR'"), lines
    out = _python(STRANGER, locked.target("worker", 0), env=task_env())
    assert out.startswith("ran 2.0")  # and the owner's processes carry on


# ---- per-peer caps ----------------------------------------------------------------------------------
FLOODER = """
import json, sys
import numpy as np
import dtf_notebook.compat.v1 as tf
from dtf_notebook.distributed import wire
from dtf_notebook.distributed.client import Client
from dtf_notebook.distributed.keyring import client_key

address, what = sys.argv[1], sys.argv[2]
client = Client(client_key(address))  # a key holder: the strongest peer there is
graph = tf.Graph()
with graph.as_default():
    queue = tf.FIFOQueue(1, tf.float32, shared_name="never-filled")
    x = tf.placeholder(tf.float32, [None], name="x")
    y = tf.identity(queue.dequeue() + tf.reduce_sum(x), name="y")
plain, tensors = wire.encode_graph_def({"node": [op.node_def for op in graph.get_operations()]})
request = {"graph": plain, "config": {}}
if what == "sessions":
    opened = 0
    try:
        while opened < 1000:
            client.call(address, "CreateSession", request, tensors, timeout=30)
            opened += 1
        print("never refused")
    except tf.errors.ResourceExhaustedError as e:
        print("refused after", opened, e.message)
else:
    handle = client.call(address, "CreateSession", request, tensors, timeout=30)[0]["session_handle"]
    big = np.ones(4 << 20, np.float32)  # 16 MiB per request, all sent at once on one connection
    step = {"session_handle": handle, "feeds": ["x:0"], "fetches": ["y:0"], "targets": [], "timeout": 6}
    futures = [client.call_async(address, "RunStep", step, [big]) for _ in range(12)]
    outcomes = []
    for future in futures:
        try:
            future.result(120)
            outcomes.append("ok")
        except tf.errors.OpError as e:
            outcomes.append(type(e).__name__)
    print(json.dumps(outcomes))
"""

TRAINER = """
import sys, time
import numpy as np
import dtf_notebook.compat.v1 as tf

with tf.device("/job:local/task:0"):
    w = tf.Variable(tf.zeros([10, 1]), name="w_cap")
x = tf.placeholder(tf.float32, [None, 10])
loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
with tf.Session(sys.argv[1]) as sess:
    sess.run(w.initializer)
    print("ready", flush=True)
    sys.stdin.readline()  # the flood has begun
    end = time.monotonic() + float(sys.argv[2])
    while time.monotonic() < end:
        _, value = sess.run([train, loss], {x: np.ones((8, 10), np.float32)})
        print("step", round(time.monotonic(), 3), value, flush=True)
"""


@pytest.fixture(scope="module")
def capped():
    caps = ["--max-sessions-per-peer", "8", "--max-inflight-bytes-per-peer", str(40 << 20)]
    with LocalCluster(jobs={"local": 1}, server_args={"local": caps}) as cluster:
        yield cluster


def _flood_while_training(cluster: LocalCluster, what: str, seconds: float) -> tuple[str, list[float]]:
    address = cluster.spec["local"][0]
    trainer = subprocess.Popen(
        [sys.executable, "-c", TRAINER, cluster.target("local"), str(seconds)],
        env=cluster.client_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert trainer.stdout.readline().strip() == "ready"
        began = time.monotonic()
        flooder = subprocess.Popen(
            [sys.executable, "-c", FLOODER, address, what],
            env=cluster.client_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        trainer.stdin.write("go\n")
        trainer.stdin.flush()
        flood_out, flood_err = flooder.communicate(timeout=180)
        ended = time.monotonic()
        out, err = trainer.communicate(timeout=180)
    finally:
        for proc in (trainer,):
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
    assert flooder.returncode == 0, flood_err[-3000:]
    assert trainer.returncode == 0, err[-3000:]
    steps = [float(line.split()[1]) for line in out.splitlines() if line.startswith("step")]
    during = [t for t in steps if began <= t <= ended]
    return flood_out, during


def test_a_session_flood_is_refused_while_another_client_trains(capped):
    flood, during = _flood_while_training(capped, "sessions", seconds=4.0)
    assert flood.startswith("refused after 8 ") and "--max-sessions-per-peer" in flood, flood
    assert during, "the other client did not step while the flood ran"


def test_a_byte_flood_is_refused_while_another_client_trains(capped):
    flood, during = _flood_while_training(capped, "bytes", seconds=8.0)
    outcomes = json.loads(flood)
    # 40 MiB in flight per peer: two 16 MiB requests wait on the queue (and time out), the rest are refused.
    assert outcomes.count("DeadlineExceededError") == 2 and outcomes.count("ResourceExhaustedError") == 10, outcomes
    assert len(during) >= 5, "the other client hardly stepped while the flood ran"
    _, after = _flood_while_training(capped, "sessions", seconds=1.0)  # refused requests left nothing behind
    assert after


def test_a_cluster_file_planted_by_another_user_is_never_believed(tmp_path, monkeypatch):
    """A runtime directory others can write to (shared storage): their file must not hand out a key, addresses or
    pids, nor have a log directory removed."""
    if os.geteuid() != 0:
        pytest.skip("needs root to make a file owned by another user")
    from dtf_notebook.distributed.cluster_key import ClusterKey
    from dtf_notebook.distributed.keyring import client_key
    from dtf_notebook.notebook import cluster_files

    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path))
    victim_logs = tmp_path / "logs-of-someone"
    victim_logs.mkdir()
    record = cluster_files.ClusterRecord(
        name="planted",
        spec={"worker": ["127.0.0.1:2999"]},
        owner_pid=0,  # stale: a listing would clean it up, with its "temporary" logs
        log_dir=str(victim_logs),
        temporary_logs=True,
        cluster_key=True,
        key=ClusterKey.generate().text,
    )
    path = tmp_path / "dtf-cluster-planted.json"
    path.write_text(record.to_json())
    nobody = pwd.getpwnam("nobody")
    os.chown(path, nobody.pw_uid, nobody.pw_gid)
    assert cluster_files.key_for_address("127.0.0.1:2999") is None
    monkeypatch.delenv("DTF_CLUSTER_KEY", raising=False)
    monkeypatch.delenv("DTF_CLUSTER_KEY_FILE", raising=False)
    assert client_key("127.0.0.1:2999") is None
    with pytest.raises(cluster_files.ClusterNotFoundError, match="belongs to another user"):
        cluster_files.find("planted")
    assert cluster_files.list_clusters() == [] and cluster_files.clean_stale() == []
    assert path.exists() and victim_logs.exists()
