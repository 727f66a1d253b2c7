"""TF's session, run and cluster messages as protobuf classes: ``ConfigProto``, ``GPUOptions``, ``GraphOptions``,
``OptimizerOptions``, ``RunOptions``, ``RunMetadata`` (with ``StepStats`` and ``CostGraphDef``), ``ClusterDef``,
``JobDef`` and ``ServerDef``.

The schemas are TF's ``allocation_description.proto``, ``tensor_description.proto``, ``step_stats.proto``,
``cost_graph.proto``, ``cluster.proto``, ``config.proto`` and ``tensorflow_server.proto`` with TF's names and field
numbers, so ``SerializeToString``, ``ParseFromString`` and the text format interoperate with real TF. Fields whose
types live in protos not written here (``ConfigProto.rpc_options``, ``GraphOptions.rewrite_options``,
``RunOptions.debug_options``, ``ConfigProto.Experimental.coordination_config``,
``ServerDef.cluster_device_filters``) are left out: protobuf keeps them as unknown fields of a parsed message, so
they survive a round trip.

``ConfigProto`` carries this project's own settings as fields numbered from 10001, which TF never uses (TF reads
such bytes and skips them; TF's text parser refuses them by name): ``virtual_gpus``, ``cluster_wait_secs``,
``cluster_key``, ``cluster_key_salt`` and ``session_gc_secs``. They are proto3 ``optional`` fields, so
``HasField`` tells an unset one (which takes the runtime's default) from one set to 0.

Example:
    >>> config = ConfigProto(allow_soft_placement=True, device_count={"GPU": 0})
    >>> config.gpu_options.per_process_gpu_memory_fraction = 0.4
    >>> print(config, end="")
    device_count {
      key: "GPU"
      value: 0
    }
    gpu_options {
      per_process_gpu_memory_fraction: 0.4
    }
    allow_soft_placement: true
    >>> ConfigProto.FromString(config.SerializeToString()) == config
    True
"""

from __future__ import annotations

from dtf_notebook.protos import graph_pb as _graph_pb  # noqa: F401 - puts graph.proto and types.proto in the pool
from dtf_notebook.protos import message_class
from dtf_notebook.protos.spec import add_spec_file

__all__ = [
    "AllocationDescription",
    "CallableOptions",
    "ClusterDef",
    "ConfigProto",
    "CostGraphDef",
    "DeviceStepStats",
    "GPUOptions",
    "GraphOptions",
    "JobDef",
    "NodeExecStats",
    "OptimizerOptions",
    "RunMetadata",
    "RunOptions",
    "ServerDef",
    "SessionMetadata",
    "StepStats",
    "TensorDescription",
    "ThreadPoolOptionProto",
]

_FRAMEWORK = "tensorflow/core/framework/"
_PROTOBUF = "tensorflow/core/protobuf/"

add_spec_file(
    _FRAMEWORK + "allocation_description.proto",
    [],
    [
        (
            "AllocationDescription",
            [
                ("requested_bytes", 1, "int64"),
                ("allocated_bytes", 2, "int64"),
                ("allocator_name", 3, "string"),
                ("allocation_id", 4, "int64"),
                ("has_single_reference", 5, "bool"),
                ("ptr", 6, "uint64"),
            ],
        )
    ],
)
add_spec_file(
    _FRAMEWORK + "tensor_description.proto",
    [_FRAMEWORK + "allocation_description.proto", _FRAMEWORK + "tensor_shape.proto", _FRAMEWORK + "types.proto"],
    [
        (
            "TensorDescription",
            [
                ("dtype", 1, "enum tensorflow.DataType"),
                ("shape", 2, "tensorflow.TensorShapeProto"),
                ("allocation_description", 4, "tensorflow.AllocationDescription"),
            ],
        )
    ],
)
add_spec_file(
    _FRAMEWORK + "step_stats.proto",
    [_FRAMEWORK + "allocation_description.proto", _FRAMEWORK + "tensor_description.proto"],
    [
        ("AllocationRecord", [("alloc_micros", 1, "int64"), ("alloc_bytes", 2, "int64")]),
        (
            "AllocatorMemoryUsed",
            [
                ("allocator_name", 1, "string"),
                ("total_bytes", 2, "int64"),
                ("peak_bytes", 3, "int64"),
                ("live_bytes", 4, "int64"),
                ("allocation_records", 6, "repeated tensorflow.AllocationRecord"),
                ("allocator_bytes_in_use", 5, "int64"),
            ],
        ),
        ("NodeOutput", [("slot", 1, "int32"), ("tensor_description", 3, "tensorflow.TensorDescription")]),
        (
            "MemoryStats",
            [
                ("temp_memory_size", 1, "int64"),
                ("persistent_memory_size", 3, "int64"),
                ("persistent_tensor_alloc_ids", 5, "repeated int64"),
                ("device_temp_memory_size", 2, "int64"),
                ("device_persistent_memory_size", 4, "int64"),
                ("device_persistent_tensor_alloc_ids", 6, "repeated int64"),
            ],
        ),
        (
            "NodeExecStats",
            [
                ("node_name", 1, "string"),
                ("all_start_micros", 2, "int64"),
                ("op_start_rel_micros", 3, "int64"),
                ("op_end_rel_micros", 4, "int64"),
                ("all_end_rel_micros", 5, "int64"),
                ("memory", 6, "repeated tensorflow.AllocatorMemoryUsed"),
                ("output", 7, "repeated tensorflow.NodeOutput"),
                ("timeline_label", 8, "string"),
                ("scheduled_micros", 9, "int64"),
                ("thread_id", 10, "uint32"),
                ("referenced_tensor", 11, "repeated tensorflow.AllocationDescription"),
                ("memory_stats", 12, "tensorflow.MemoryStats"),
                ("all_start_nanos", 13, "int64"),
                ("op_start_rel_nanos", 14, "int64"),
                ("op_end_rel_nanos", 15, "int64"),
                ("all_end_rel_nanos", 16, "int64"),
                ("scheduled_nanos", 17, "int64"),
            ],
        ),
        (
            "DeviceStepStats",
            [
                ("device", 1, "string"),
                ("node_stats", 2, "repeated tensorflow.NodeExecStats"),
                ("thread_names", 3, "map<uint32,string>"),
            ],
        ),
        ("StepStats", [("dev_stats", 1, "repeated tensorflow.DeviceStepStats")]),
    ],
)
add_spec_file(
    _FRAMEWORK + "cost_graph.proto",
    [_FRAMEWORK + "tensor_shape.proto", _FRAMEWORK + "types.proto"],
    [
        (
            "CostGraphDef",
            [
                ("node", 1, "repeated tensorflow.CostGraphDef.Node"),
                ("cost", 2, "repeated tensorflow.CostGraphDef.AggregatedCost"),
            ],
            [
                (
                    "Node",
                    [
                        ("name", 1, "string"),
                        ("device", 2, "string"),
                        ("id", 3, "int32"),
                        ("input_info", 4, "repeated tensorflow.CostGraphDef.Node.InputInfo"),
                        ("output_info", 5, "repeated tensorflow.CostGraphDef.Node.OutputInfo"),
                        ("temporary_memory_size", 6, "int64"),
                        ("persistent_memory_size", 12, "int64"),
                        ("host_temp_memory_size", 10, "int64"),
                        ("device_temp_memory_size", 11, "int64"),
                        ("device_persistent_memory_size", 16, "int64"),
                        ("compute_cost", 9, "int64"),
                        ("compute_time", 14, "int64"),
                        ("memory_time", 15, "int64"),
                        ("is_final", 7, "bool"),
                        ("control_input", 8, "repeated int32"),
                        ("inaccurate", 17, "bool"),
                    ],
                    [
                        ("InputInfo", [("preceding_node", 1, "int32"), ("preceding_port", 2, "int32")]),
                        (
                            "OutputInfo",
                            [
                                ("size", 1, "int64"),
                                ("alias_input_port", 2, "int64"),
                                ("shape", 3, "tensorflow.TensorShapeProto"),
                                ("dtype", 4, "enum tensorflow.DataType"),
                            ],
                        ),
                    ],
                ),
                ("AggregatedCost", [("cost", 1, "float"), ("dimension", 2, "string")]),
            ],
        )
    ],
)
add_spec_file(
    _PROTOBUF + "cluster.proto",
    [],
    [
        ("JobDef", [("name", 1, "string"), ("tasks", 2, "map<int32,string>")]),
        ("ClusterDef", [("job", 1, "repeated tensorflow.JobDef")]),
    ],
)
add_spec_file(
    _PROTOBUF + "config.proto",
    [
        _FRAMEWORK + "cost_graph.proto",
        _FRAMEWORK + "graph.proto",
        _FRAMEWORK + "step_stats.proto",
        _PROTOBUF + "cluster.proto",
    ],
    [
        (
            "GPUOptions",
            [
                ("per_process_gpu_memory_fraction", 1, "double"),
                ("allow_growth", 4, "bool"),
                ("allocator_type", 2, "string"),
                ("deferred_deletion_bytes", 3, "int64"),
                ("visible_device_list", 5, "string"),
                ("polling_active_delay_usecs", 6, "int32"),
                ("polling_inactive_delay_msecs", 7, "int32"),
                ("force_gpu_compatible", 8, "bool"),
                ("experimental", 9, "tensorflow.GPUOptions.Experimental"),
            ],
            [
                (
                    "Experimental",
                    [
                        ("virtual_devices", 1, "repeated tensorflow.GPUOptions.Experimental.VirtualDevices"),
                        ("num_virtual_devices_per_gpu", 15, "int32"),
                        ("use_unified_memory", 2, "bool"),
                        ("num_dev_to_dev_copy_streams", 3, "int32"),
                        ("collective_ring_order", 4, "string"),
                        ("timestamped_allocator", 5, "bool"),
                        ("kernel_tracker_max_interval", 7, "int32"),
                        ("kernel_tracker_max_bytes", 8, "int32"),
                        ("kernel_tracker_max_pending", 9, "int32"),
                        ("internal_fragmentation_fraction", 10, "double"),
                        ("use_cuda_malloc_async", 11, "bool"),
                        ("disallow_retry_on_allocation_failure", 12, "bool"),
                        ("gpu_host_mem_limit_in_mb", 13, "float"),
                        ("gpu_host_mem_disallow_growth", 14, "bool"),
                        ("gpu_system_memory_size_in_mb", 16, "int32"),
                        ("populate_pjrt_gpu_client_creation_info", 17, "bool"),
                        ("node_id", 18, "int32"),
                    ],
                    [
                        (
                            "VirtualDevices",
                            [
                                ("memory_limit_mb", 1, "repeated float"),
                                ("priority", 2, "repeated int32"),
                                ("device_ordinal", 3, "repeated int32"),
                            ],
                        )
                    ],
                )
            ],
        ),
        (
            "OptimizerOptions",
            [
                ("do_common_subexpression_elimination", 1, "bool"),
                ("do_constant_folding", 2, "bool"),
                ("max_folded_constant_in_bytes", 6, "int64"),
                ("do_function_inlining", 4, "bool"),
                ("opt_level", 3, "enum tensorflow.OptimizerOptions.Level"),
                ("global_jit_level", 5, "enum tensorflow.OptimizerOptions.GlobalJitLevel"),
                ("cpu_global_jit", 7, "bool"),
            ],
            [
                ("enum", "Level", [("L1", 0), ("L0", -1)]),
                ("enum", "GlobalJitLevel", [("DEFAULT", 0), ("OFF", -1), ("ON_1", 1), ("ON_2", 2)]),
            ],
        ),
        (
            "GraphOptions",
            [
                ("enable_recv_scheduling", 2, "bool"),
                ("optimizer_options", 3, "tensorflow.OptimizerOptions"),
                ("build_cost_model", 4, "int64"),
                ("build_cost_model_after", 9, "int64"),
                ("infer_shapes", 5, "bool"),
                ("place_pruned_graph", 6, "bool"),
                ("enable_bfloat16_sendrecv", 7, "bool"),
                ("timeline_step", 8, "int32"),
            ],
        ),
        ("ThreadPoolOptionProto", [("num_threads", 1, "int32"), ("global_name", 2, "string")]),
        ("SessionMetadata", [("name", 1, "string"), ("version", 2, "int64")]),
        (
            "ConfigProto",
            [
                ("device_count", 1, "map<string,int32>"),
                ("intra_op_parallelism_threads", 2, "int32"),
                ("inter_op_parallelism_threads", 5, "int32"),
                ("use_per_session_threads", 9, "bool"),
                ("session_inter_op_thread_pool", 12, "repeated tensorflow.ThreadPoolOptionProto"),
                ("placement_period", 3, "int32"),
                ("device_filters", 4, "repeated string"),
                ("gpu_options", 6, "tensorflow.GPUOptions"),
                ("pluggable_device_options", 18, "tensorflow.GPUOptions"),
                ("allow_soft_placement", 7, "bool"),
                ("log_device_placement", 8, "bool"),
                ("graph_options", 10, "tensorflow.GraphOptions"),
                ("operation_timeout_in_ms", 11, "int64"),
                ("cluster_def", 14, "tensorflow.ClusterDef"),
                ("isolate_session_state", 15, "bool"),
                ("share_cluster_devices_in_session", 17, "bool"),
                ("experimental", 16, "tensorflow.ConfigProto.Experimental"),
                # This project's settings (see the module docstring), at numbers TF does not use.
                ("virtual_gpus", 10001, "optional int32"),
                ("cluster_wait_secs", 10002, "optional double"),
                ("cluster_key", 10003, "optional string"),
                ("cluster_key_salt", 10004, "optional string"),
                ("session_gc_secs", 10005, "optional double"),
            ],
            [
                (
                    "Experimental",
                    [
                        ("collective_group_leader", 1, "string"),
                        ("executor_type", 3, "string"),
                        ("recv_buf_max_chunk", 4, "int32"),
                        ("use_numa_affinity", 5, "bool"),
                        ("collective_deterministic_sequential_execution", 6, "bool"),
                        ("collective_nccl", 7, "bool"),
                        ("share_session_state_in_clusterspec_propagation", 8, "bool"),
                        ("disable_thread_spinning", 9, "bool"),
                        ("share_cluster_devices_in_session", 10, "bool"),
                        ("session_metadata", 11, "tensorflow.SessionMetadata"),
                        ("optimize_for_static_graph", 12, "bool"),
                        ("enable_mlir_bridge", 13, "bool"),
                        ("mlir_bridge_rollout", 17, "enum tensorflow.ConfigProto.Experimental.MlirBridgeRollout"),
                        ("enable_mlir_graph_optimization", 16, "bool"),
                        ("disable_output_partition_graphs", 14, "bool"),
                        ("xla_fusion_autotuner_thresh", 15, "int64"),
                        ("use_tfrt", 18, "bool"),
                        ("enable_multi_host", 27, "bool"),
                        ("tfrt_use_ifrt", 32, "bool"),
                        ("backend_server_port", 28, "int32"),
                        ("target_tpu", 29, "bool"),
                        ("target_gpu", 30, "bool"),
                        ("stream_merge_threshold", 31, "int32"),
                        ("disable_functional_ops_lowering", 21, "bool"),
                        ("xla_prefer_single_graph_cluster", 22, "bool"),
                        ("disable_optimize_for_static_graph", 24, "bool"),
                        ("disable_eager_executor_streaming_enqueue", 26, "bool"),
                        ("finalize_function_library_runtime", 33, "bool"),
                        ("finalize_resource_manager", 34, "bool"),
                        ("tf2xla_dump_dir", 35, "string"),
                        ("online_cost_analysis", 36, "bool"),
                    ],
                    [
                        (
                            "enum",
                            "MlirBridgeRollout",
                            [
                                ("MLIR_BRIDGE_ROLLOUT_UNSPECIFIED", 0),
                                ("MLIR_BRIDGE_ROLLOUT_ENABLED", 1),
                                ("MLIR_BRIDGE_ROLLOUT_DISABLED", 2),
                            ],
                        )
                    ],
                )
            ],
        ),
        (
            "RunOptions",
            [
                ("trace_level", 1, "enum tensorflow.RunOptions.TraceLevel"),
                ("timeout_in_ms", 2, "int64"),
                ("inter_op_thread_pool", 3, "int32"),
                ("output_partition_graphs", 5, "bool"),
                ("report_tensor_allocations_upon_oom", 7, "bool"),
                ("experimental", 8, "tensorflow.RunOptions.Experimental"),
            ],
            [
                (
                    "enum",
                    "TraceLevel",
                    [("NO_TRACE", 0), ("SOFTWARE_TRACE", 1), ("HARDWARE_TRACE", 2), ("FULL_TRACE", 3)],
                ),
                (
                    "Experimental",
                    [
                        ("collective_graph_key", 1, "int64"),
                        ("use_run_handler_pool", 2, "bool"),
                        (
                            "run_handler_pool_options",
                            3,
                            "tensorflow.RunOptions.Experimental.RunHandlerPoolOptions",
                        ),
                    ],
                    [("RunHandlerPoolOptions", [("priority", 1, "int64")])],
                ),
            ],
        ),
        (
            "RunMetadata",
            [
                ("step_stats", 1, "tensorflow.StepStats"),
                ("cost_graph", 2, "tensorflow.CostGraphDef"),
                ("partition_graphs", 3, "repeated tensorflow.GraphDef"),
                ("function_graphs", 4, "repeated tensorflow.RunMetadata.FunctionGraphs"),
                ("session_metadata", 5, "tensorflow.SessionMetadata"),
            ],
            [
                (
                    "FunctionGraphs",
                    [
                        ("partition_graphs", 1, "repeated tensorflow.GraphDef"),
                        ("pre_optimization_graph", 2, "tensorflow.GraphDef"),
                        ("post_optimization_graph", 3, "tensorflow.GraphDef"),
                    ],
                )
            ],
        ),
        ("TensorConnection", [("from_tensor", 1, "string"), ("to_tensor", 2, "string")]),
        (
            "CallableOptions",
            [
                ("feed", 1, "repeated string"),
                ("fetch", 2, "repeated string"),
                ("target", 3, "repeated string"),
                ("run_options", 4, "tensorflow.RunOptions"),
                ("tensor_connection", 5, "repeated tensorflow.TensorConnection"),
                ("feed_devices", 6, "map<string,string>"),
                ("fetch_devices", 7, "map<string,string>"),
                ("fetch_skip_sync", 8, "bool"),
            ],
        ),
    ],
)
add_spec_file(
    _PROTOBUF + "tensorflow_server.proto",
    [_PROTOBUF + "cluster.proto", _PROTOBUF + "config.proto"],
    [
        (
            "ServerDef",
            [
                ("cluster", 1, "tensorflow.ClusterDef"),
                ("job_name", 2, "string"),
                ("replica", 8, "int32"),
                ("task_index", 3, "int32"),
                ("default_session_config", 4, "tensorflow.ConfigProto"),
                ("protocol", 5, "string"),
                ("port", 6, "int32"),
            ],
        )
    ],
)

AllocationDescription = message_class("tensorflow.AllocationDescription", __name__)
TensorDescription = message_class("tensorflow.TensorDescription", __name__)
NodeExecStats = message_class("tensorflow.NodeExecStats", __name__)
DeviceStepStats = message_class("tensorflow.DeviceStepStats", __name__)
StepStats = message_class("tensorflow.StepStats", __name__)
CostGraphDef = message_class("tensorflow.CostGraphDef", __name__)
JobDef = message_class("tensorflow.JobDef", __name__)
ClusterDef = message_class("tensorflow.ClusterDef", __name__)
GPUOptions = message_class("tensorflow.GPUOptions", __name__)
OptimizerOptions = message_class("tensorflow.OptimizerOptions", __name__)
GraphOptions = message_class("tensorflow.GraphOptions", __name__)
ThreadPoolOptionProto = message_class("tensorflow.ThreadPoolOptionProto", __name__)
SessionMetadata = message_class("tensorflow.SessionMetadata", __name__)
ConfigProto = message_class("tensorflow.ConfigProto", __name__)
RunOptions = message_class("tensorflow.RunOptions", __name__)
RunMetadata = message_class("tensorflow.RunMetadata", __name__)
CallableOptions = message_class("tensorflow.CallableOptions", __name__)
ServerDef = message_class("tensorflow.ServerDef", __name__)
