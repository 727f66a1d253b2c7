"""Session and run configuration: ``ConfigProto``, ``GPUOptions``, ``RunOptions``, ``RunMetadata``.

These are the runtime's own forms of TF1's protocol buffers: plain Python
objects with the same field names. ``tf.ConfigProto``, ``tf.RunOptions`` and
``tf.RunMetadata`` are the protobuf messages of :mod:`dtf_notebook.protos.config_pb`;
sessions and servers turn them into these at their boundary (:func:`as_config`,
:func:`as_run_options`, ``from_proto``) and back (``to_proto``).
``to_dict``/``from_dict`` give plain data for the wire.

``virtual_gpus`` is this project's addition: that many ``/gpu:N`` devices
backed by the CPU, so graphs written for GPUs place and run on any machine.
The ``DTF_VIRTUAL_GPUS`` environment variable sets it for scripts that cannot
pass a config (read when a session is created, not at import).

Example:
    >>> config = ConfigProto(allow_soft_placement=True)
    >>> config.gpu_options.per_process_gpu_memory_fraction = 0.4
    >>> ConfigProto.from_dict(config.to_dict()).gpu_options.per_process_gpu_memory_fraction
    0.4
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

#: The ConfigProto fields that are this project's (numbered 10001-10005 in the protobuf): unset there keeps
#: the default here, so an unset ``cluster_wait_secs`` is 30 s, not 0.
_PROJECT_FIELDS = frozenset({"virtual_gpus", "cluster_wait_secs", "cluster_key", "cluster_key_salt", "session_gc_secs"})


def _is_message(value: Any) -> bool:
    return hasattr(value, "DESCRIPTOR") and hasattr(value, "SerializeToString")


def _from_message(cls: Any, message: Any) -> Any:
    """An instance of dataclass ``cls`` with the fields of protobuf ``message`` that both have."""
    expected = cls.__name__
    if not _is_message(message) or message.DESCRIPTOR.name != expected:
        raise TypeError(f"Expected a {expected} protocol buffer, got {type(message).__name__}")
    kwargs: dict[str, Any] = {}
    for f in fields(cls):
        if f.name not in message.DESCRIPTOR.fields_by_name:
            continue
        if f.name in _PROJECT_FIELDS and not message.HasField(f.name):
            continue
        value = getattr(message, f.name)
        if _is_message(value):
            value = _from_message(_NESTED[value.DESCRIPTOR.name], value)
        elif f.name == "device_count":
            value = dict(value)
        elif f.name == "device_filters":
            value = list(value)
        kwargs[f.name] = value
    return cls(**kwargs)


def _to_message(value: Any) -> Any:
    from dtf_notebook.protos import config_pb

    message = getattr(config_pb, type(value).__name__)()
    for f in fields(value):
        mine = getattr(value, f.name)
        if f.name in _PROJECT_FIELDS:
            if mine != f.default:
                setattr(message, f.name, mine)
        elif f.name == "device_count":
            message.device_count.update(mine)
        elif f.name == "device_filters":
            message.device_filters.extend(mine)
        elif hasattr(mine, "__dataclass_fields__"):
            nested = _to_message(mine)
            if nested.ByteSize():  # an all-default option message stays unset, as in a parsed protobuf
                getattr(message, f.name).CopyFrom(nested)
        else:
            setattr(message, f.name, mine)
    return message


@dataclass
class GPUOptions:
    """GPU memory and visibility options of a session or server.

    Attributes:
        per_process_gpu_memory_fraction: Cap on the share of each GPU's memory this process may allocate (0 = no cap).
        allow_growth: Accepted for compatibility; memory is always allocated as needed (torch's caching allocator).
        visible_device_list: Comma-separated CUDA indices, in the order they become ``/gpu:0``, ``/gpu:1``, ...

    Example:
        >>> GPUOptions(visible_device_list="1,0").visible_device_list
        '1,0'
    """

    per_process_gpu_memory_fraction: float = 0.0
    allow_growth: bool = False
    visible_device_list: str = ""
    allocator_type: str = ""
    deferred_deletion_bytes: int = 0
    polling_active_delay_usecs: int = 0
    force_gpu_compatible: bool = False

    @classmethod
    def from_proto(cls, message: Any) -> GPUOptions:
        """The options of a ``tf.GPUOptions`` protobuf (fields this runtime does not use are dropped).

        Example:
            >>> from dtf_notebook.protos.config_pb import GPUOptions as Proto
            >>> GPUOptions.from_proto(Proto(allow_growth=True)).allow_growth
            True
        """
        return _from_message(cls, message)

    def to_proto(self) -> Any:
        """This as a ``tf.GPUOptions`` protobuf.

        Example:
            >>> GPUOptions(visible_device_list="0").to_proto().visible_device_list
            '0'
        """
        return _to_message(self)


@dataclass
class GraphOptions:
    """Graph optimisation options (accepted for compatibility).

    Example:
        >>> ConfigProto(graph_options=GraphOptions(infer_shapes=True)).graph_options.infer_shapes
        True
    """

    enable_recv_scheduling: bool = False
    build_cost_model: int = 0
    infer_shapes: bool = False
    place_pruned_graph: bool = False
    enable_bfloat16_sendrecv: bool = False
    timeline_step: int = 0

    @classmethod
    def from_proto(cls, message: Any) -> GraphOptions:
        """The options of a ``tf.GraphOptions`` protobuf (``optimizer_options`` and others are dropped).

        Example:
            >>> from dtf_notebook.protos.config_pb import GraphOptions as Proto
            >>> GraphOptions.from_proto(Proto(infer_shapes=True)).infer_shapes
            True
        """
        return _from_message(cls, message)

    def to_proto(self) -> Any:
        """This as a ``tf.GraphOptions`` protobuf.

        Example:
            >>> GraphOptions(timeline_step=2).to_proto().timeline_step
            2
        """
        return _to_message(self)


@dataclass
class ConfigProto:
    """Session configuration (TF1's ``tf.ConfigProto``).

    Example:
        >>> ConfigProto(device_count={"GPU": 0}).device_count
        {'GPU': 0}
    """

    device_count: dict[str, int] = field(default_factory=dict)
    intra_op_parallelism_threads: int = 0
    inter_op_parallelism_threads: int = 0
    use_per_session_threads: bool = False
    allow_soft_placement: bool = False
    log_device_placement: bool = False
    operation_timeout_in_ms: int = 0
    device_filters: list[str] = field(default_factory=list)
    gpu_options: GPUOptions = field(default_factory=GPUOptions)
    graph_options: GraphOptions = field(default_factory=GraphOptions)
    isolate_session_state: bool = False
    virtual_gpus: int = 0
    #: How long creating a cluster session waits for every task to answer before UnavailableError.
    cluster_wait_secs: float = 30.0
    #: The cluster key (``dtfkey1:...`` from ``dtf-cluster keygen``, or a passphrase) enabling CurveZMQ between
    #: tasks and clients; also read from DTF_CLUSTER_KEY / DTF_CLUSTER_KEY_FILE. Never sent to a server.
    cluster_key: str = field(default="", repr=False)
    #: The salt naming the cluster that a passphrase ``cluster_key`` is stretched with (also DTF_CLUSTER_SALT).
    cluster_key_salt: str = field(default="", repr=False)
    #: In a server's own config: close master sessions no request used for this many seconds (their client
    #: died without closing them); 0 never does, as TF's servers.
    session_gc_secs: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """Plain data (dicts, lists, numbers, strings)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ConfigProto:
        """Rebuilds a config from :meth:`to_dict` output; unknown keys are an error naming the key.

        Raises:
            ValueError: a key is not a ConfigProto field.
        """
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"Unknown ConfigProto field(s): {', '.join(sorted(unknown))}")
        kwargs = dict(data)
        if isinstance(kwargs.get("gpu_options"), dict):
            kwargs["gpu_options"] = GPUOptions(**kwargs["gpu_options"])
        if isinstance(kwargs.get("graph_options"), dict):
            kwargs["graph_options"] = GraphOptions(**kwargs["graph_options"])
        return cls(**kwargs)

    def CopyFrom(self, other: ConfigProto) -> None:  # noqa: N802 - protobuf's name
        """Copies every field of ``other`` (this class or a ``tf.ConfigProto`` protobuf) into this config."""
        if _is_message(other):
            other = ConfigProto.from_proto(other)
        for f in fields(self):
            setattr(self, f.name, getattr(other, f.name))

    @classmethod
    def from_proto(cls, message: Any) -> ConfigProto:
        """The config of a ``tf.ConfigProto`` protobuf.

        Fields this runtime does not use (``cluster_def``, ``experimental``, ...) are dropped; this project's
        fields left unset in the message keep their defaults here (``cluster_wait_secs`` 30).

        Raises:
            TypeError: ``message`` is not a ConfigProto protobuf.

        Example:
            >>> from dtf_notebook.protos.config_pb import ConfigProto as Proto
            >>> config = ConfigProto.from_proto(Proto(allow_soft_placement=True, device_count={"GPU": 0}))
            >>> config.allow_soft_placement, config.device_count, config.cluster_wait_secs
            (True, {'GPU': 0}, 30.0)
        """
        return _from_message(cls, message)

    def to_proto(self) -> Any:
        """This config as a ``tf.ConfigProto`` protobuf (this project's fields set only where not default).

        Example:
            >>> ConfigProto(virtual_gpus=2).to_proto().virtual_gpus
            2
        """
        return _to_message(self)


@dataclass
class RunOptions:
    """Per-run options (TF1's ``tf.RunOptions``).

    Attributes:
        timeout_in_ms: Fail the run with DeadlineExceededError after this long (0 = the session's default).
        trace_level: ``NO_TRACE`` or ``FULL_TRACE`` (timings and placement recorded in RunMetadata).

    Example:
        >>> RunOptions(trace_level=RunOptions.FULL_TRACE).trace_level
        3
    """

    NO_TRACE = 0
    SOFTWARE_TRACE = 1
    HARDWARE_TRACE = 2
    FULL_TRACE = 3

    trace_level: int = 0
    timeout_in_ms: int = 0
    inter_op_thread_pool: int = 0
    output_partition_graphs: bool = False
    report_tensor_allocations_upon_oom: bool = False

    @classmethod
    def from_proto(cls, message: Any) -> RunOptions:
        """The options of a ``tf.RunOptions`` protobuf.

        Example:
            >>> from dtf_notebook.protos.config_pb import RunOptions as Proto
            >>> RunOptions.from_proto(Proto(trace_level=Proto.FULL_TRACE, timeout_in_ms=5)).timeout_in_ms
            5
        """
        return _from_message(cls, message)

    def to_proto(self) -> Any:
        """These options as a ``tf.RunOptions`` protobuf.

        Example:
            >>> RunOptions(trace_level=RunOptions.FULL_TRACE).to_proto().trace_level
            3
        """
        return _to_message(self)


@dataclass
class NodeExecStats:
    """How one node ran in a traced step.

    Example:
        >>> stats = NodeExecStats("a", "Const", "/job:localhost/replica:0/task:0/device:CPU:0", 1000, 5)
        >>> stats.node_name, stats.op, stats.all_end_rel_micros
        ('a', 'Const', 5)
    """

    node_name: str
    op: str
    device: str
    all_start_micros: int
    all_end_rel_micros: int


@dataclass
class StepStats:
    """Per-device lists of NodeExecStats of a traced step.

    Example:
        >>> stats = StepStats(dev_stats={"/cpu:0": [NodeExecStats("a", "Const", "/cpu:0", 1000, 5)]})
        >>> [s.node_name for s in stats.dev_stats["/cpu:0"]]
        ['a']
    """

    dev_stats: dict[str, list[NodeExecStats]] = field(default_factory=dict)


@dataclass
class RunMetadata:
    """What a run reports back (TF1's ``tf.RunMetadata``): step stats and partition graphs.

    Example:
        >>> RunMetadata().partition_graphs
        []
    """

    step_stats: StepStats = field(default_factory=StepStats)
    partition_graphs: list[dict[str, Any]] = field(default_factory=list)
    cost_graph: dict[str, Any] = field(default_factory=dict)

    def Clear(self) -> None:  # noqa: N802 - protobuf's name
        """Empties the metadata."""
        self.step_stats = StepStats()
        self.partition_graphs = []
        self.cost_graph = {}

    def to_proto(self) -> Any:
        """This metadata as a ``tf.RunMetadata`` protobuf (see ``framework.graph_proto.run_metadata_proto``).

        Example:
            >>> RunMetadata().to_proto().ByteSize()
            0
        """
        from dtf_notebook.framework.graph_proto import run_metadata_proto

        return run_metadata_proto(self)


_NESTED = {"GPUOptions": GPUOptions, "GraphOptions": GraphOptions}


def as_config(config: Any) -> ConfigProto:
    """The runtime's ConfigProto of ``config``: a ``tf.ConfigProto`` protobuf, this class, or None (defaults).

    Raises:
        TypeError: ``config`` is something else.

    Example:
        >>> from dtf_notebook.protos.config_pb import ConfigProto as Proto
        >>> as_config(Proto(log_device_placement=True)).log_device_placement
        True
        >>> as_config(None) == ConfigProto()
        True
    """
    if config is None:
        return ConfigProto()
    if isinstance(config, ConfigProto):
        return config
    if _is_message(config) and config.DESCRIPTOR.name == "ConfigProto":
        return ConfigProto.from_proto(config)
    raise TypeError(f"config must be a tf.ConfigProto, but got {type(config)}")


def as_run_options(options: Any) -> RunOptions | None:
    """The runtime's RunOptions of ``options``: a ``tf.RunOptions`` protobuf, this class, or None.

    Raises:
        TypeError: ``options`` is something else.

    Example:
        >>> from dtf_notebook.protos.config_pb import RunOptions as Proto
        >>> as_run_options(Proto(timeout_in_ms=100)).timeout_in_ms
        100
    """
    if options is None or isinstance(options, RunOptions):
        return options
    if _is_message(options) and options.DESCRIPTOR.name == "RunOptions":
        return RunOptions.from_proto(options)
    raise TypeError(f"options must be a tf.RunOptions, but got {type(options)}")
