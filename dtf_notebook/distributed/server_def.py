"""The server's own form of ``tf.train.ServerDef``: which cluster a server belongs to and which task it is.

TF1's ``ServerDef`` protocol buffer has the cluster (a ``ClusterDef``), the
task's ``job_name`` and ``task_index``, the ``protocol`` and the
``default_session_config``. ``tf.train.ServerDef`` is that protobuf
(:mod:`dtf_notebook.protos.config_pb`); ``tf.train.Server`` turns it into this
dataclass with the same fields (:meth:`ServerDef.from_proto`, :func:`server_def_of`)
and gives one back as a protobuf (:meth:`ServerDef.to_proto`). The cluster is kept in
the plain-data form of
:meth:`~dtf_notebook.distributed.cluster_spec.ClusterSpec.as_cluster_def_dict` (any
form a ``ClusterSpec`` accepts may be given), and :meth:`ServerDef.to_dict` /
:meth:`ServerDef.from_dict` give and take the plain data that travels or goes
to JSON. As in the protocol buffer, an unset ``task_index`` is 0 and an unset
``job_name`` is ``""`` (no job: a server refuses it, it is not inferred).

Example:
    >>> server_def = ServerDef(cluster={"worker": ["w0:2222", "w1:2222"]}, job_name="worker", task_index=1)
    >>> server_def.cluster
    {'job': [{'name': 'worker', 'tasks': {0: 'w0:2222', 1: 'w1:2222'}}]}
    >>> ServerDef.from_dict(server_def.to_dict()) == server_def
    True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dtf_notebook.distributed.cluster_spec import ClusterSpec
from dtf_notebook.protos import config_pb
from dtf_notebook.runtime.config import ConfigProto, as_config

__all__ = ["ServerDef", "is_server_def_dict", "merge_config", "server_def_of"]


@dataclass
class ServerDef:
    """A server's cluster and task (``tf.train.ServerDef``), accepted by ``tf.train.Server``.

    Args:
        cluster: The cluster: its cluster def, a ClusterSpec, or a dict of job -> addresses.
        job_name: This task's job.
        task_index: This task's index in its job.
        protocol: ``"zmq"`` or ``"grpc"`` (the same here); ``""`` means the default.
        default_session_config: The server's ConfigProto (the runtime's, a ``tf.ConfigProto`` protobuf or a dict).

    Raises:
        TypeError, ValueError: ``cluster`` is not a valid cluster (as for ``ClusterSpec``), or ``job_name`` is not
            a string, or ``task_index`` not an int.

    Example:
        >>> ServerDef(cluster=ClusterSpec({"ps": ["p0:1"]}), job_name="ps").task_index
        0
        >>> ServerDef(job_name=3)
        Traceback (most recent call last):
        ...
        TypeError: ServerDef.job_name must be a string, not 3
    """

    cluster: Any = field(default_factory=lambda: {"job": []})
    job_name: str = ""
    task_index: int = 0
    protocol: str = ""
    default_session_config: ConfigProto = field(default_factory=ConfigProto)

    def __post_init__(self) -> None:
        self.cluster = ClusterSpec(self.cluster).as_cluster_def_dict()
        if not isinstance(self.job_name, str):
            raise TypeError(f"ServerDef.job_name must be a string, not {self.job_name!r}")
        if isinstance(self.task_index, bool) or not isinstance(self.task_index, int):
            raise TypeError(f"ServerDef.task_index must be an int, not {self.task_index!r}")
        if not isinstance(self.protocol, str):
            raise TypeError(f"ServerDef.protocol must be a string, not {self.protocol!r}")
        if isinstance(self.default_session_config, Mapping):
            self.default_session_config = ConfigProto.from_dict(dict(self.default_session_config))
        if isinstance(self.default_session_config, config_pb.ConfigProto):
            self.default_session_config = as_config(self.default_session_config)
        if not isinstance(self.default_session_config, ConfigProto):
            raise TypeError(
                f"ServerDef.default_session_config must be a ConfigProto, not {self.default_session_config!r}"
            )

    @property
    def cluster_spec(self) -> ClusterSpec:
        """The cluster as a ClusterSpec.

        Example:
            >>> ServerDef(cluster={"ps": ["p0:1"]}).cluster_spec
            ClusterSpec({'ps': ['p0:1']})
        """
        return ClusterSpec(self.cluster)

    def to_dict(self) -> dict[str, Any]:
        """Plain data (dicts, lists, numbers, strings), as :meth:`from_dict` and ``tf.train.Server`` take it.

        Example:
            >>> ServerDef(cluster={"ps": ["p0:1"]}, job_name="ps").to_dict()["cluster"]
            {'job': [{'name': 'ps', 'tasks': {0: 'p0:1'}}]}
        """
        return {
            "cluster": ClusterSpec(self.cluster).as_cluster_def_dict(),
            "job_name": self.job_name,
            "task_index": self.task_index,
            "protocol": self.protocol,
            "default_session_config": self.default_session_config.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ServerDef:
        """Rebuilds a ServerDef from :meth:`to_dict` output (missing fields take their defaults).

        Raises:
            ValueError: a key is not a ServerDef field.

        Example:
            >>> ServerDef.from_dict({"cluster": {"ps": ["p0:1"]}, "job_name": "ps"}).protocol
            ''
            >>> ServerDef.from_dict({"cluster": {}, "port": 2})
            Traceback (most recent call last):
            ...
            ValueError: Unknown ServerDef field(s): port
        """
        unknown = set(data) - _FIELDS
        if unknown:
            raise ValueError(f"Unknown ServerDef field(s): {', '.join(sorted(map(str, unknown)))}")
        return cls(**data)

    @classmethod
    def from_proto(cls, message: config_pb.ServerDef) -> ServerDef:
        """The ServerDef of a ``tf.train.ServerDef`` protobuf (``replica`` and ``port`` are not used here).

        Raises:
            TypeError: ``message`` is not a ServerDef protobuf.

        Example:
            >>> proto = config_pb.ServerDef(job_name="ps", task_index=0)
            >>> proto.cluster.job.add(name="ps", tasks={0: "p0:1"})  # doctest: +ELLIPSIS
            name: "ps"...
            >>> ServerDef.from_proto(proto).cluster
            {'job': [{'name': 'ps', 'tasks': {0: 'p0:1'}}]}
        """
        if not isinstance(message, config_pb.ServerDef):
            raise TypeError(f"Expected a ServerDef protocol buffer, got {type(message).__name__}")
        return cls(
            cluster=ClusterSpec(message.cluster),
            job_name=message.job_name,
            task_index=message.task_index,
            protocol=message.protocol,
            default_session_config=ConfigProto.from_proto(message.default_session_config),
        )

    def to_proto(self) -> config_pb.ServerDef:
        """This ServerDef as a ``tf.train.ServerDef`` protobuf.

        Its ``default_session_config`` holds the config's ``cluster_key`` when one is set (as this object does):
        printing the message shows it.

        Example:
            >>> ServerDef(cluster={"ps": ["p0:1"]}, job_name="ps").to_proto().cluster.job[0].tasks[0]
            'p0:1'
        """
        return config_pb.ServerDef(
            cluster=ClusterSpec(self.cluster).as_cluster_def(),
            job_name=self.job_name,
            task_index=self.task_index,
            protocol=self.protocol,
            default_session_config=self.default_session_config.to_proto(),
        )


_FIELDS = frozenset(f.name for f in dataclasses.fields(ServerDef))


def server_def_of(value: Any) -> ServerDef | None:
    """``value`` as the server's ServerDef when it describes a server (a ``tf.train.ServerDef`` protobuf, this
    class or its dict form), None when it is a cluster (a ClusterSpec, ClusterDef or dict of jobs).

    Example:
        >>> server_def_of(config_pb.ServerDef(job_name="ps")).job_name
        'ps'
        >>> server_def_of({"ps": ["p0:1"]}) is None
        True
    """
    if isinstance(value, ServerDef):
        return value
    if isinstance(value, config_pb.ServerDef):
        return ServerDef.from_proto(value)
    if is_server_def_dict(value):
        return ServerDef.from_dict(value)
    return None


def is_server_def_dict(value: Any) -> bool:
    """Whether ``value`` is a ServerDef's dict form rather than a cluster dict.

    It is when every key is a ServerDef field, and its ``cluster`` is a cluster (def) in turn: a job named
    ``cluster`` would map to addresses, never to lists or dicts.

    Example:
        >>> is_server_def_dict({"cluster": {"ps": ["p0:1"]}, "job_name": "ps"})
        True
        >>> is_server_def_dict({"cluster": ["c0:1"]}), is_server_def_dict({"cluster": {0: "c0:1"}})
        (False, False)
    """
    if not isinstance(value, Mapping) or "cluster" not in value or not set(value) <= _FIELDS:
        return False
    cluster = value["cluster"]
    if isinstance(cluster, ClusterSpec):
        return True
    return isinstance(cluster, Mapping) and any(not isinstance(v, str | bytes) for v in cluster.values())


def merge_config(base: ConfigProto, extra: Any) -> ConfigProto:
    """``base`` with ``extra`` merged in as protocol buffers merge: fields of ``extra`` that are set (differ from
    their default) win, lists are appended and dicts updated, nested options merged field by field. ``extra``
    may be a ``tf.ConfigProto`` protobuf.

    Example:
        >>> merged = merge_config(ConfigProto(log_device_placement=True), ConfigProto(allow_soft_placement=True))
        >>> merged.log_device_placement, merged.allow_soft_placement
        (True, True)
    """
    return _merged(base, as_config(extra))


def _merged(base: Any, extra: Any) -> Any:
    defaults = type(extra)()
    out = dataclasses.replace(base)
    for f in dataclasses.fields(extra):
        mine, theirs, default = getattr(base, f.name), getattr(extra, f.name), getattr(defaults, f.name)
        if dataclasses.is_dataclass(theirs):
            setattr(out, f.name, _merged(mine, theirs))
        elif isinstance(theirs, list):
            setattr(out, f.name, list(mine) + list(theirs))
        elif isinstance(theirs, dict):
            setattr(out, f.name, {**mine, **theirs})
        elif theirs != default:
            setattr(out, f.name, theirs)
    return out
