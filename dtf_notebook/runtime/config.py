"""Session and run configuration: ``ConfigProto``, ``GPUOptions``, ``RunOptions``, ``RunMetadata``.

These mirror TF1's protocol buffers as plain Python objects with the same
field names, so ``config.gpu_options.per_process_gpu_memory_fraction = 0.4``
works unchanged. ``to_dict``/``from_dict`` give plain data for the wire.

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
        """Copies every field of ``other`` into this config."""
        for f in fields(self):
            setattr(self, f.name, getattr(other, f.name))


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
