"""Cluster files: one JSON file per running local cluster, in the Jupyter runtime directory.

A running :class:`~dtf_notebook.notebook.local_cluster.LocalCluster` writes
``dtf-cluster-<name>.json`` to ``jupyter_core.paths.jupyter_runtime_dir()``
(``$JUPYTER_RUNTIME_DIR`` when set), next to the kernels' connection files, so
that another kernel, the ``dtf-cluster`` command or the lab extension can find
it, reconnect to it and stop it. The file holds plain data: the name, the
cluster spec, every task's pid (with its start time, see
:mod:`~dtf_notebook.notebook.pids`), the owner process, the start time, the log
directory and the cluster's key, so that the same user's other kernels, scripts
and the ``dtf-cluster`` command reach a locked cluster with no extra step while
other users cannot read it (:func:`key_for_address` finds it by a task's
address; listings never show it). Files are written atomically (a complete file
or none), readable by their owner only, and removed when the cluster stops; a file whose owner and tasks are all gone is
stale and :func:`list_clusters` removes it, with the cluster's temporary log
directory. A stale file that cannot be removed (a read-only directory, say) is
left where it is, with a logged warning: it never stops a cluster from starting.

Example:
    >>> import tempfile
    >>> os.environ["JUPYTER_RUNTIME_DIR"] = tempfile.mkdtemp()
    >>> record = claim(ClusterRecord(name="demo", spec={"worker": ["127.0.0.1:2222"]}))
    >>> os.path.basename(record.path)
    'dtf-cluster-demo.json'
    >>> [r.name for r in list_clusters()]
    ['demo']
    >>> remove(record); list_clusters()
    []
    >>> del os.environ["JUPYTER_RUNTIME_DIR"]
"""

from __future__ import annotations

import contextlib
import glob
import json
import logging
import os
import re
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from jupyter_core.paths import jupyter_runtime_dir

from dtf_notebook.distributed.cluster_key import ClusterKey
from dtf_notebook.distributed.keyring import same_task
from dtf_notebook.notebook.pids import pid_running, start_ticks

__all__ = [
    "ClusterNotFoundError",
    "ClusterRecord",
    "claim",
    "clean_stale",
    "cluster_file",
    "find",
    "key_for_address",
    "list_clusters",
    "remove",
    "remove_if_stale",
    "runtime_dir",
    "update",
]

_PREFIX = "dtf-cluster-"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
FORMAT_VERSION = 1
_log = logging.getLogger(__name__)


class ClusterNotFoundError(LookupError):
    """No running cluster has that name (or no such cluster file); the message lists the running ones.

    Example:
        >>> import tempfile
        >>> os.environ["JUPYTER_RUNTIME_DIR"] = tempfile.mkdtemp()
        >>> find("nowhere")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
            ...
        dtf_notebook.notebook.cluster_files.ClusterNotFoundError: No cluster 'nowhere' (no file ...); running ...: none
        >>> del os.environ["JUPYTER_RUNTIME_DIR"]
    """


@dataclass
class ClusterRecord:
    """What a cluster file holds.

    ``tasks`` rows are ``{"job", "task", "address", "pid", "start_ticks", "log"}``; ``status`` is
    ``"starting"`` until every task serves, then ``"running"``; ``temporary_logs`` says that ``log_dir`` was
    made for the cluster and goes with it (also when the file is found stale). ``cluster_key`` says whether the
    tasks require a key, ``key`` is that key's text (``dtfkey1:...``; empty for a cluster without one).

    Example:
        >>> record = ClusterRecord(name="demo", spec={"worker": ["127.0.0.1:2222"]})
        >>> record.status, record.owner_pid == os.getpid(), record.owner_alive()
        ('starting', True, True)
    """

    name: str
    spec: dict[str, list[str]]
    tasks: list[dict[str, Any]] = field(default_factory=list)
    owner_pid: int = field(default_factory=os.getpid)
    owner_start_ticks: int | None = field(default_factory=lambda: start_ticks(os.getpid()))
    started: float = field(default_factory=time.time)
    log_dir: str = ""
    temporary_logs: bool = False
    cluster_key: bool = False
    key: str = field(default="", repr=False)
    status: str = "starting"
    version: int = FORMAT_VERSION
    path: str = field(default="", compare=False)

    def owner_alive(self) -> bool:
        """Whether the process that started the cluster still runs."""
        return pid_running(self.owner_pid, self.owner_start_ticks)

    def live_tasks(self) -> list[dict[str, Any]]:
        """The task rows whose process still runs."""
        return [t for t in self.tasks if pid_running(t["pid"], t.get("start_ticks"))]

    def is_stale(self) -> bool:
        """True when the owner and every task are gone: nothing is left to reach or stop."""
        return not self.owner_alive() and not self.live_tasks()

    def state(self) -> str:
        """A word for listings: ``starting``, ``running``, ``degraded a/b``, ``orphaned`` or ``stale``.

        Example:
            >>> ClusterRecord(name="x", spec={}, owner_pid=0).state()
            'stale'
        """
        live, owner = len(self.live_tasks()), self.owner_alive()
        if not owner and not live:
            return "stale"
        if self.status == "starting" and owner:
            return "starting"
        if not owner:
            return "orphaned"  # tasks outlived their owner (they normally follow it within a second)
        return "running" if live == len(self.tasks) else f"degraded {live}/{len(self.tasks)}"

    def to_json(self) -> str:
        """The file's content: every field, the key included (see :meth:`public`)."""
        data = asdict(self)
        del data["path"]
        return json.dumps(data, indent=1, sort_keys=True)

    def public(self) -> dict[str, Any]:
        """The record as plain data to show or print: everything but the key.

        Example:
            >>> record = ClusterRecord(name="demo", spec={}, cluster_key=True, key="dtfkey1:secret")
            >>> "key" in record.public(), record.public()["cluster_key"]
            (False, True)
        """
        data = asdict(self)
        del data["path"], data["key"]
        return data


def runtime_dir() -> str:
    """Jupyter's runtime directory (``$JUPYTER_RUNTIME_DIR`` when set), where cluster files live.

    Example:
        >>> os.path.isabs(runtime_dir())
        True
    """
    return jupyter_runtime_dir()


def check_name(name: str) -> str:
    """Returns ``name`` if it is a valid cluster name (letters, digits, ``_.-``; at most 64 characters).

    Raises:
        ValueError: the name would not make a plain file name.

    Example:
        >>> check_name("exp-1")
        'exp-1'
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(
            f"Invalid cluster name {name!r}: use letters, digits, '_', '.' and '-' (at most 64, not starting with "
            "'.' or '-')"
        )
    return name


def cluster_file(name: str) -> str:
    """The path of the cluster file of cluster ``name``.

    Example:
        >>> os.path.basename(cluster_file("exp-1"))
        'dtf-cluster-exp-1.json'
    """
    return os.path.join(runtime_dir(), f"{_PREFIX}{check_name(name)}.json")


def _write_temp(record: ClusterRecord) -> str:
    directory = runtime_dir()
    os.makedirs(directory, mode=0o700, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".dtf-cluster-", suffix=".tmp", dir=directory)  # mode 0600
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(record.to_json())
        f.flush()
        os.fsync(f.fileno())
    return tmp


def claim(record: ClusterRecord) -> ClusterRecord:
    """Writes a new cluster file for ``record``, which must not be taken by a live cluster.

    With ``record.name`` empty, picks the first free name of ``local-1``, ``local-2``, ...
    A stale file of the same name is replaced. The file appears whole or not at all
    (written aside, then hard-linked into place, which fails if the name exists).

    Raises:
        FileExistsError: a live cluster already has that name.

    Example:
        >>> import tempfile
        >>> os.environ["JUPYTER_RUNTIME_DIR"] = tempfile.mkdtemp()
        >>> first, second = claim(ClusterRecord(name="", spec={})), claim(ClusterRecord(name="", spec={}))
        >>> first.name, second.name  # free names picked in turn
        ('local-1', 'local-2')
        >>> remove(first); remove(second); del os.environ["JUPYTER_RUNTIME_DIR"]
    """
    auto, n = not record.name, 1
    while n < 10_000:
        if auto:
            record.name = f"local-{n}"
        path = cluster_file(record.name)
        tmp = _write_temp(record)
        try:
            os.link(tmp, path)
        except FileExistsError:
            taken = _why_taken(path)
            if taken is None:
                continue  # the same name again: it is free now
            if not auto:
                raise FileExistsError(f"A cluster named {record.name!r} {taken}") from None
            n += 1
            continue
        finally:
            os.unlink(tmp)
        record.path = path
        return record
    raise FileExistsError(f"No free cluster name in {runtime_dir()}")


def _why_taken(path: str) -> str | None:
    """Why the existing cluster file ``path`` keeps its name, or None when the name may be free now (the file was
    stale and is removed, or went meanwhile)."""
    try:
        existing, file_id = _load(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"has a file we cannot read ({path}: {e.strerror or e}); remove it or pick another name"
    if existing is not None and not existing.is_stale():
        return f"is already running (owner pid {existing.owner_pid}, file {path}); stop it first or pick another name"
    try:
        _remove_stale(path, existing, file_id)
    except OSError as e:
        return f"left a stale file that cannot be removed ({path}: {e.strerror or e}); remove it or pick another name"
    return None


def update(record: ClusterRecord) -> None:
    """Rewrites the cluster file of ``record`` atomically (readers see the old or the new file, never a mix).

    Example:
        >>> import tempfile
        >>> os.environ["JUPYTER_RUNTIME_DIR"] = tempfile.mkdtemp()
        >>> record = claim(ClusterRecord(name="demo", spec={}))
        >>> record.status = "running"; update(record); find("demo").status
        'running'
        >>> remove(record); del os.environ["JUPYTER_RUNTIME_DIR"]
    """
    os.replace(_write_temp(record), record.path or cluster_file(record.name))


def remove(record: ClusterRecord | str) -> None:
    """Removes a cluster file, given its record or the cluster's name; a missing file is fine.

    Example:
        >>> import tempfile
        >>> os.environ["JUPYTER_RUNTIME_DIR"] = tempfile.mkdtemp()
        >>> record = claim(ClusterRecord(name="demo", spec={}))
        >>> remove("demo"); remove("demo")  # a missing file is fine
        >>> os.path.exists(record.path); del os.environ["JUPYTER_RUNTIME_DIR"]
        False
    """
    path = record.path or cluster_file(record.name) if isinstance(record, ClusterRecord) else cluster_file(record)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


_FileId = tuple[int, int, int, int]


def _file_id(st: os.stat_result) -> _FileId:
    """What tells a file from the one that replaced it under the same name."""
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _read_bytes(path: str) -> tuple[bytes, _FileId]:
    """The content of ``path`` and the identity of the file read.

    Raises:
        PermissionError: the file belongs to another user: in a runtime directory others can write to, such a
            file could hand out their key and addresses, or have us stop their pids; it is never read.
    """
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        if st.st_uid != os.geteuid():
            raise PermissionError(f"Cluster file {path} belongs to another user (uid {st.st_uid}); it is ignored")
        return f.read(), _file_id(st)


def _parse(content: bytes, path: str) -> ClusterRecord:
    try:
        data = json.loads(content)
    except ValueError as e:  # bad JSON or bad UTF-8
        raise ValueError(f"Cluster file {path} is not valid JSON: {e}") from None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str) or not isinstance(data.get("spec"), dict):
        raise ValueError(f"Cluster file {path} does not describe a cluster (no name or spec)")
    known = {f for f in ClusterRecord.__dataclass_fields__ if f != "path"}
    return ClusterRecord(**{k: v for k, v in data.items() if k in known}, path=path)


def _read(path: str) -> ClusterRecord:
    return _parse(_read_bytes(path)[0], path)


def _load(path: str) -> tuple[ClusterRecord | None, _FileId]:
    """The record in ``path`` (None when the file holds no valid one) and the file's identity.

    Raises:
        OSError: the file cannot be opened (FileNotFoundError: it is gone).
    """
    content, file_id = _read_bytes(path)
    try:
        return _parse(content, path), file_id
    except ValueError:
        return None, file_id


def find(name_or_file: str) -> ClusterRecord:
    """The record of a cluster, by name or by the path of its file.

    Raises:
        ClusterNotFoundError: no such file (the message names the running clusters), or it belongs to another user.
        ValueError: the file is not a cluster file.

    Example:
        >>> import tempfile
        >>> os.environ["JUPYTER_RUNTIME_DIR"] = tempfile.mkdtemp()
        >>> record = claim(ClusterRecord(name="demo", spec={"ps": ["127.0.0.1:2222"]}))
        >>> find("demo").spec == find(record.path).spec == {"ps": ["127.0.0.1:2222"]}
        True
        >>> remove(record); del os.environ["JUPYTER_RUNTIME_DIR"]
    """
    looks_like_path = os.sep in name_or_file or name_or_file.endswith(".json")
    path = name_or_file if looks_like_path else cluster_file(name_or_file)
    try:
        return _read(path)
    except FileNotFoundError:
        running = ", ".join(repr(r.name) for r in list_clusters()) or "none"
        raise ClusterNotFoundError(
            f"No cluster {name_or_file!r} (no file {path}); running clusters: {running}"
        ) from None
    except PermissionError as e:
        raise ClusterNotFoundError(f"No cluster {name_or_file!r} of yours: {e}") from None


def _all_files() -> list[str]:
    return sorted(glob.glob(os.path.join(glob.escape(runtime_dir()), f"{_PREFIX}*.json")))


def _remove_stale(path: str, record: ClusterRecord | None, file_id: _FileId) -> bool:
    """Removes ``path``, already read as the stale ``record`` (None: no valid record) with identity ``file_id``, and
    the record's temporary log directory; False when the file went or was replaced meanwhile.

    Raises:
        OSError: the file cannot be removed (permission denied, read-only directory, ...).
    """
    try:
        # Right before unlinking: is it still the file we read? Another process may have removed it and claimed the
        # name since (auto names are reused); a file we read stale stays stale (its pids carry their start times).
        if _file_id(os.stat(path)) != file_id:
            return False
        os.unlink(path)
    except FileNotFoundError:
        return False
    if record is not None and record.temporary_logs and record.log_dir:
        shutil.rmtree(record.log_dir, ignore_errors=True)  # its owner died before it could
        if os.path.lexists(record.log_dir):
            _log.warning("Could not remove all of the temporary log directory %s of a stale cluster", record.log_dir)
    return True


def _remove_or_warn(path: str, record: ClusterRecord | None, file_id: _FileId) -> bool:
    try:
        return _remove_stale(path, record, file_id)
    except OSError as e:
        # Another kernel's leftover: worth a warning, never a reason to fail what we are doing.
        _log.warning("Could not remove the stale cluster file %s: %s", path, e.strerror or e)
        return False


def remove_if_stale(path: str) -> bool:
    """Removes the cluster file ``path`` (and the cluster's temporary log directory) if its owner and tasks are
    all gone, or if it holds no valid record; True when it removed the file. A live cluster's file, a file this
    process cannot read and one it cannot remove (a warning is logged) are left alone.

    Example:
        >>> import tempfile
        >>> os.environ["JUPYTER_RUNTIME_DIR"] = tempfile.mkdtemp()
        >>> live = claim(ClusterRecord(name="live", spec={}))  # owned by this process
        >>> dead = claim(ClusterRecord(name="dead", spec={}, owner_pid=0))
        >>> remove_if_stale(live.path), remove_if_stale(dead.path), remove_if_stale(dead.path)
        (False, True, False)
        >>> remove(live); del os.environ["JUPYTER_RUNTIME_DIR"]
    """
    try:
        record, file_id = _load(path)
    except OSError:
        return False
    return (record is None or record.is_stale()) and _remove_or_warn(path, record, file_id)


def _scan(clean: bool) -> tuple[list[ClusterRecord], list[str]]:
    live, removed = [], []
    for path in _all_files():
        try:
            record, file_id = _load(path)
        except OSError:
            continue  # gone meanwhile, or not ours to read
        if record is not None and not record.is_stale():
            live.append(record)
        elif clean and _remove_or_warn(path, record, file_id):
            removed.append(path)
    return sorted(live, key=lambda r: r.started), removed


def key_for_address(address: str) -> ClusterKey | None:
    """The key of the running cluster, of this user, that has a task at ``address`` (None: no such cluster, or it
    runs without a key). Only files owned by this user count, so a file planted in a shared runtime directory
    cannot hand out a key.

    Example:
        >>> import tempfile
        >>> os.environ["JUPYTER_RUNTIME_DIR"] = tempfile.mkdtemp()
        >>> key = ClusterKey.generate()
        >>> record = claim(ClusterRecord(name="k", spec={"ps": ["127.0.0.1:2222"]}, cluster_key=True, key=key.text))
        >>> key_for_address("127.0.0.1:2222") == key, key_for_address("127.0.0.1:2223")
        (True, None)
        >>> remove(record); del os.environ["JUPYTER_RUNTIME_DIR"]
    """
    task = same_task(address)
    for path in _all_files():
        try:
            record, _ = _load(path)  # files of other users are refused there
        except OSError:
            continue
        if record is None or not record.key or record.is_stale():
            continue
        addresses = [a for job in record.spec.values() for a in (job.values() if isinstance(job, dict) else job)]
        if any(same_task(a) == task for a in addresses):
            try:
                return ClusterKey.parse(record.key)
            except ValueError:
                _log.warning("Cluster file %s holds a malformed key; ignoring it", path)
    return None


def list_clusters(clean: bool = True) -> list[ClusterRecord]:
    """The clusters with a live owner or task, oldest first; with ``clean``, stale and unreadable files are removed.

    Example:
        >>> all(not r.is_stale() for r in list_clusters())
        True
    """
    return _scan(clean)[0]


def clean_stale() -> list[str]:
    """Removes the stale cluster files (owner and tasks gone) and those holding no valid record; returns their paths.

    Never raises for a file it cannot remove: that one is left, with a logged warning.

    Example:
        >>> isinstance(clean_stale(), list)
        True
    """
    return _scan(True)[1]
