"""TF's graph messages as protobuf classes: ``TensorProto``, ``AttrValue``, ``NodeDef``, ``GraphDef``, ``OpDef``,
``MetaGraphDef`` and their parts (``tf.GraphDef``, ``tf.NodeDef``, ``tf.AttrValue``, ``tf.NameAttrList``,
``tf.MetaGraphDef``, ``tf.TensorInfo``), and what a meta graph's collections hold (``VariableDef``,
``QueueRunnerDef``, ``SaverDef``).

The schemas are TF's ``types.proto``, ``tensor_shape.proto``, ``resource_handle.proto``, ``tensor.proto``,
``attr_value.proto``, ``node_def.proto``, ``versions.proto``, ``graph.proto``, ``graph_debug_info.proto``,
``op_def.proto``, ``variable.proto``, ``saver.proto``, ``error_codes.proto``, ``queue_runner.proto`` and
``meta_graph.proto`` with TF's file names, message names and field numbers, so bytes written here parse in TF and
the other way round. Fields whose types live in protos not written here (a graph's function library and debug
info, a node's or an op argument's full type, a meta graph's object graph and ``Any`` lists, a tensor info's
composite tensor) are left out: their numbers stay unused, and protobuf keeps such fields of a parsed message as
unknown fields, so they survive a round trip.

Example:
    >>> node = NodeDef(name="x", op="Const")
    >>> node.attr["dtype"].type = DataType.Value("DT_FLOAT")
    >>> GraphDef.FromString(GraphDef(node=[node]).SerializeToString()).node[0].attr["dtype"].type
    1
"""

from __future__ import annotations

from typing import Any

from google.protobuf.internal.enum_type_wrapper import EnumTypeWrapper

from dtf_notebook.protos import POOL, message_class
from dtf_notebook.protos.spec import add_spec_file as _add_file

__all__ = [
    "AttrValue",
    "DataType",
    "ErrorCode",
    "GraphDebugInfo",
    "GraphDef",
    "MetaGraphDef",
    "NameAttrList",
    "NodeDef",
    "OpDef",
    "OpList",
    "QueueRunnerDef",
    "ResourceHandleProto",
    "SaveSliceInfoDef",
    "SaverDef",
    "SignatureDef",
    "TensorInfo",
    "TensorProto",
    "TensorShapeProto",
    "VariableDef",
    "VersionDef",
]

_DATA_TYPES = (
    "INVALID FLOAT DOUBLE INT32 UINT8 INT16 INT8 STRING COMPLEX64 INT64 BOOL QINT8 QUINT8 QINT32 BFLOAT16 QINT16 "
    "QUINT16 UINT16 COMPLEX128 HALF RESOURCE VARIANT UINT32 UINT64"
).split()
# TF's DataType: the value types, then their reference types at +100.
_DATA_TYPE_VALUES = [(f"DT_{n}", i) for i, n in enumerate(_DATA_TYPES)] + [
    (f"DT_{n}_REF", 100 + i) for i, n in enumerate(_DATA_TYPES) if i
]

_FRAMEWORK = "tensorflow/core/framework/"
_add_file(
    _FRAMEWORK + "types.proto",
    [],
    [("SerializedDType", [("datatype", 1, "enum tensorflow.DataType")])],
    enums=(("DataType", _DATA_TYPE_VALUES),),
)
_add_file(
    _FRAMEWORK + "tensor_shape.proto",
    [],
    [
        (
            "TensorShapeProto",
            [("dim", 2, "repeated tensorflow.TensorShapeProto.Dim"), ("unknown_rank", 3, "bool")],
            [("Dim", [("size", 1, "int64"), ("name", 2, "string")])],
        )
    ],
)
_add_file(
    _FRAMEWORK + "resource_handle.proto",
    [_FRAMEWORK + "tensor_shape.proto", _FRAMEWORK + "types.proto"],
    [
        (
            "ResourceHandleProto",
            [
                ("device", 1, "string"),
                ("container", 2, "string"),
                ("name", 3, "string"),
                ("hash_code", 4, "uint64"),
                ("maybe_type_name", 5, "string"),
                ("dtypes_and_shapes", 6, "repeated tensorflow.ResourceHandleProto.DtypeAndShape"),
            ],
            [
                (
                    "DtypeAndShape",
                    [("dtype", 1, "enum tensorflow.DataType"), ("shape", 2, "tensorflow.TensorShapeProto")],
                )
            ],
        )
    ],
)
_add_file(
    _FRAMEWORK + "tensor.proto",
    [_FRAMEWORK + "resource_handle.proto", _FRAMEWORK + "tensor_shape.proto", _FRAMEWORK + "types.proto"],
    [
        (
            "TensorProto",
            [
                ("dtype", 1, "enum tensorflow.DataType"),
                ("tensor_shape", 2, "tensorflow.TensorShapeProto"),
                ("version_number", 3, "int32"),
                ("tensor_content", 4, "bytes"),
                ("half_val", 13, "repeated int32"),
                ("float_val", 5, "repeated float"),
                ("double_val", 6, "repeated double"),
                ("int_val", 7, "repeated int32"),
                ("string_val", 8, "repeated bytes"),
                ("scomplex_val", 9, "repeated float"),
                ("int64_val", 10, "repeated int64"),
                ("bool_val", 11, "repeated bool"),
                ("dcomplex_val", 12, "repeated double"),
                ("resource_handle_val", 14, "repeated tensorflow.ResourceHandleProto"),
                ("variant_val", 15, "repeated tensorflow.VariantTensorDataProto"),
                ("uint32_val", 16, "repeated uint32"),
                ("uint64_val", 17, "repeated uint64"),
                ("float8_val", 18, "bytes"),
            ],
        ),
        (
            "VariantTensorDataProto",
            [("type_name", 1, "string"), ("metadata", 2, "bytes"), ("tensors", 3, "repeated tensorflow.TensorProto")],
        ),
    ],
)
_add_file(
    _FRAMEWORK + "attr_value.proto",
    [_FRAMEWORK + "tensor.proto", _FRAMEWORK + "tensor_shape.proto", _FRAMEWORK + "types.proto"],
    [
        (
            "AttrValue",
            [
                ("s", 2, "bytes", "value"),
                ("i", 3, "int64", "value"),
                ("f", 4, "float", "value"),
                ("b", 5, "bool", "value"),
                ("type", 6, "enum tensorflow.DataType", "value"),
                ("shape", 7, "tensorflow.TensorShapeProto", "value"),
                ("tensor", 8, "tensorflow.TensorProto", "value"),
                ("list", 1, "tensorflow.AttrValue.ListValue", "value"),
                ("func", 10, "tensorflow.NameAttrList", "value"),
                ("placeholder", 9, "string", "value"),
            ],
            [
                (
                    "ListValue",
                    [
                        ("s", 2, "repeated bytes"),
                        ("i", 3, "repeated int64"),
                        ("f", 4, "repeated float"),
                        ("b", 5, "repeated bool"),
                        ("type", 6, "repeated enum tensorflow.DataType"),
                        ("shape", 7, "repeated tensorflow.TensorShapeProto"),
                        ("tensor", 8, "repeated tensorflow.TensorProto"),
                        ("func", 9, "repeated tensorflow.NameAttrList"),
                    ],
                )
            ],
        ),
        ("NameAttrList", [("name", 1, "string"), ("attr", 2, "map<string,tensorflow.AttrValue>")]),
    ],
)
_add_file(
    _FRAMEWORK + "node_def.proto",
    [_FRAMEWORK + "attr_value.proto"],
    [
        (
            "NodeDef",
            [
                ("name", 1, "string"),
                ("op", 2, "string"),
                ("input", 3, "repeated string"),
                ("device", 4, "string"),
                ("attr", 5, "map<string,tensorflow.AttrValue>"),
                ("experimental_debug_info", 6, "tensorflow.NodeDef.ExperimentalDebugInfo"),
            ],
            [
                (
                    "ExperimentalDebugInfo",
                    [("original_node_names", 1, "repeated string"), ("original_func_names", 2, "repeated string")],
                )
            ],
        )
    ],
)
_add_file(
    _FRAMEWORK + "versions.proto",
    [],
    [("VersionDef", [("producer", 1, "int32"), ("min_consumer", 2, "int32"), ("bad_consumers", 3, "repeated int32")])],
)
_add_file(
    _FRAMEWORK + "graph.proto",
    [_FRAMEWORK + "node_def.proto", _FRAMEWORK + "versions.proto"],
    [
        (
            "GraphDef",
            [
                ("node", 1, "repeated tensorflow.NodeDef"),
                ("versions", 4, "tensorflow.VersionDef"),
                ("version", 3, "int32"),
            ],
        )
    ],
)
_add_file(
    _FRAMEWORK + "graph_debug_info.proto",
    [],
    [
        (
            "GraphDebugInfo",
            [
                ("files", 1, "repeated string"),
                ("frames_by_id", 4, "map<fixed64,tensorflow.GraphDebugInfo.FileLineCol>"),
                ("traces_by_id", 6, "map<fixed64,tensorflow.GraphDebugInfo.StackTrace>"),
                ("traces", 2, "map<string,tensorflow.GraphDebugInfo.StackTrace>"),
                ("name_to_trace_id", 5, "map<string,fixed64>"),
            ],
            [
                (
                    "FileLineCol",
                    [
                        ("file_index", 1, "int32"),
                        ("line", 2, "int32"),
                        ("col", 3, "int32"),
                        ("func", 4, "string"),
                        ("code", 5, "string"),
                    ],
                ),
                (
                    "StackTrace",
                    [
                        ("file_line_cols", 1, "repeated tensorflow.GraphDebugInfo.FileLineCol"),
                        ("frame_id", 2, "repeated fixed64"),
                    ],
                ),
            ],
        )
    ],
)
_add_file(
    _FRAMEWORK + "op_def.proto",
    [_FRAMEWORK + "attr_value.proto", _FRAMEWORK + "resource_handle.proto", _FRAMEWORK + "types.proto"],
    [
        (
            "OpDef",
            [
                ("name", 1, "string"),
                ("input_arg", 2, "repeated tensorflow.OpDef.ArgDef"),
                ("output_arg", 3, "repeated tensorflow.OpDef.ArgDef"),
                ("control_output", 20, "repeated string"),
                ("attr", 4, "repeated tensorflow.OpDef.AttrDef"),
                ("deprecation", 8, "tensorflow.OpDeprecation"),
                ("summary", 5, "string"),
                ("description", 6, "string"),
                ("is_commutative", 18, "bool"),
                ("is_aggregate", 16, "bool"),
                ("is_stateful", 17, "bool"),
                ("allows_uninitialized_input", 19, "bool"),
                ("is_distributed_communication", 21, "bool"),
            ],
            [
                (
                    "ArgDef",
                    [
                        ("name", 1, "string"),
                        ("description", 2, "string"),
                        ("type", 3, "enum tensorflow.DataType"),
                        ("type_attr", 4, "string"),
                        ("number_attr", 5, "string"),
                        ("type_list_attr", 6, "string"),
                        ("handle_data", 7, "repeated tensorflow.ResourceHandleProto.DtypeAndShape"),
                        ("is_ref", 16, "bool"),
                    ],
                ),
                (
                    "AttrDef",
                    [
                        ("name", 1, "string"),
                        ("type", 2, "string"),
                        ("default_value", 3, "tensorflow.AttrValue"),
                        ("description", 4, "string"),
                        ("has_minimum", 5, "bool"),
                        ("minimum", 6, "int64"),
                        ("allowed_values", 7, "tensorflow.AttrValue"),
                    ],
                ),
            ],
        ),
        ("OpDeprecation", [("version", 1, "int32"), ("explanation", 2, "string")]),
        ("OpList", [("op", 1, "repeated tensorflow.OpDef")]),
    ],
)
_add_file(
    _FRAMEWORK + "variable.proto",
    [],
    [
        (
            "VariableDef",
            [
                ("variable_name", 1, "string"),
                ("initial_value_name", 6, "string"),
                ("initializer_name", 2, "string"),
                ("snapshot_name", 3, "string"),
                ("save_slice_info_def", 4, "tensorflow.SaveSliceInfoDef"),
                ("is_resource", 5, "bool"),
                ("trainable", 7, "bool"),
                ("synchronization", 8, "enum tensorflow.VariableSynchronization"),
                ("aggregation", 9, "enum tensorflow.VariableAggregation"),
            ],
        ),
        (
            "SaveSliceInfoDef",
            [
                ("full_name", 1, "string"),
                ("full_shape", 2, "repeated int64"),
                ("var_offset", 3, "repeated int64"),
                ("var_shape", 4, "repeated int64"),
            ],
        ),
    ],
    enums=(
        (
            "VariableSynchronization",
            [
                ("VARIABLE_SYNCHRONIZATION_AUTO", 0),
                ("VARIABLE_SYNCHRONIZATION_NONE", 1),
                ("VARIABLE_SYNCHRONIZATION_ON_WRITE", 2),
                ("VARIABLE_SYNCHRONIZATION_ON_READ", 3),
            ],
        ),
        (
            "VariableAggregation",
            [
                ("VARIABLE_AGGREGATION_NONE", 0),
                ("VARIABLE_AGGREGATION_SUM", 1),
                ("VARIABLE_AGGREGATION_MEAN", 2),
                ("VARIABLE_AGGREGATION_ONLY_FIRST_REPLICA", 3),
            ],
        ),
    ),
)
_add_file(
    "tensorflow/core/protobuf/saver.proto",
    [],
    [
        (
            "SaverDef",
            [
                ("filename_tensor_name", 1, "string"),
                ("save_tensor_name", 2, "string"),
                ("restore_op_name", 3, "string"),
                ("max_to_keep", 4, "int32"),
                ("sharded", 5, "bool"),
                ("keep_checkpoint_every_n_hours", 6, "float"),
                ("version", 7, "enum tensorflow.SaverDef.CheckpointFormatVersion"),
            ],
            [("enum", "CheckpointFormatVersion", [("LEGACY", 0), ("V1", 1), ("V2", 2)])],
        )
    ],
)
_add_file(
    "xla/tsl/protobuf/error_codes.proto",
    [],
    [],
    package="tensorflow.error",
    enums=(
        (
            "Code",
            [
                ("OK", 0),
                ("CANCELLED", 1),
                ("UNKNOWN", 2),
                ("INVALID_ARGUMENT", 3),
                ("DEADLINE_EXCEEDED", 4),
                ("NOT_FOUND", 5),
                ("ALREADY_EXISTS", 6),
                ("PERMISSION_DENIED", 7),
                ("UNAUTHENTICATED", 16),
                ("RESOURCE_EXHAUSTED", 8),
                ("FAILED_PRECONDITION", 9),
                ("ABORTED", 10),
                ("OUT_OF_RANGE", 11),
                ("UNIMPLEMENTED", 12),
                ("INTERNAL", 13),
                ("UNAVAILABLE", 14),
                ("DATA_LOSS", 15),
                ("DO_NOT_USE_RESERVED_FOR_FUTURE_EXPANSION_USE_DEFAULT_IN_SWITCH_INSTEAD_", 20),
            ],
        ),
    ),
)
_add_file(
    "tensorflow/core/protobuf/queue_runner.proto",
    ["xla/tsl/protobuf/error_codes.proto"],
    [
        (
            "QueueRunnerDef",
            [
                ("queue_name", 1, "string"),
                ("enqueue_op_name", 2, "repeated string"),
                ("close_op_name", 3, "string"),
                ("cancel_op_name", 4, "string"),
                ("queue_closed_exception_types", 5, "repeated enum tensorflow.error.Code"),
            ],
        )
    ],
)
_add_file(
    "tensorflow/core/protobuf/meta_graph.proto",
    [
        _FRAMEWORK + "graph.proto",
        _FRAMEWORK + "op_def.proto",
        _FRAMEWORK + "tensor.proto",
        _FRAMEWORK + "tensor_shape.proto",
        _FRAMEWORK + "types.proto",
        "tensorflow/core/protobuf/saver.proto",
    ],
    [
        (
            "MetaGraphDef",
            [
                ("meta_info_def", 1, "tensorflow.MetaGraphDef.MetaInfoDef"),
                ("graph_def", 2, "tensorflow.GraphDef"),
                ("saver_def", 3, "tensorflow.SaverDef"),
                ("collection_def", 4, "map<string,tensorflow.CollectionDef>"),
                ("signature_def", 5, "map<string,tensorflow.SignatureDef>"),
                ("asset_file_def", 6, "repeated tensorflow.AssetFileDef"),
            ],
            [
                (
                    "MetaInfoDef",
                    [
                        ("meta_graph_version", 1, "string"),
                        ("stripped_op_list", 2, "tensorflow.OpList"),
                        ("tags", 4, "repeated string"),
                        ("tensorflow_version", 5, "string"),
                        ("tensorflow_git_version", 6, "string"),
                        ("stripped_default_attrs", 7, "bool"),
                        ("function_aliases", 8, "map<string,string>"),
                    ],
                )
            ],
        ),
        (
            "CollectionDef",
            [
                ("node_list", 1, "tensorflow.CollectionDef.NodeList", "kind"),
                ("bytes_list", 2, "tensorflow.CollectionDef.BytesList", "kind"),
                ("int64_list", 3, "tensorflow.CollectionDef.Int64List", "kind"),
                ("float_list", 4, "tensorflow.CollectionDef.FloatList", "kind"),
            ],
            [
                ("NodeList", [("value", 1, "repeated string")]),
                ("BytesList", [("value", 1, "repeated bytes")]),
                ("Int64List", [("value", 1, "repeated int64")]),
                ("FloatList", [("value", 1, "repeated float")]),
            ],
        ),
        (
            "TensorInfo",
            [
                ("name", 1, "string", "encoding"),
                ("coo_sparse", 4, "tensorflow.TensorInfo.CooSparse", "encoding"),
                ("dtype", 2, "enum tensorflow.DataType"),
                ("tensor_shape", 3, "tensorflow.TensorShapeProto"),
            ],
            [
                (
                    "CooSparse",
                    [
                        ("values_tensor_name", 1, "string"),
                        ("indices_tensor_name", 2, "string"),
                        ("dense_shape_tensor_name", 3, "string"),
                    ],
                )
            ],
        ),
        (
            "SignatureDef",
            [
                ("inputs", 1, "map<string,tensorflow.TensorInfo>"),
                ("outputs", 2, "map<string,tensorflow.TensorInfo>"),
                ("method_name", 3, "string"),
                ("defaults", 4, "map<string,tensorflow.TensorProto>"),
            ],
        ),
        ("AssetFileDef", [("tensor_info", 1, "tensorflow.TensorInfo"), ("filename", 2, "string")]),
    ],
)

#: TF's ``DataType`` enum (``DataType.Value("DT_FLOAT") == 1``, ``DataType.Name(9) == "DT_INT64"``).
DataType: Any = EnumTypeWrapper(POOL.FindEnumTypeByName("tensorflow.DataType"))
#: TF's error codes (``tensorflow.error.Code``: ``ErrorCode.Value("OUT_OF_RANGE") == 11``), as a queue runner's
#: ``queue_closed_exception_types`` lists them.
ErrorCode: Any = EnumTypeWrapper(POOL.FindEnumTypeByName("tensorflow.error.Code"))
TensorShapeProto = message_class("tensorflow.TensorShapeProto", __name__)
ResourceHandleProto = message_class("tensorflow.ResourceHandleProto", __name__)
TensorProto = message_class("tensorflow.TensorProto", __name__)
AttrValue = message_class("tensorflow.AttrValue", __name__)
NameAttrList = message_class("tensorflow.NameAttrList", __name__)
NodeDef = message_class("tensorflow.NodeDef", __name__)
VersionDef = message_class("tensorflow.VersionDef", __name__)
GraphDef = message_class("tensorflow.GraphDef", __name__)
GraphDebugInfo = message_class("tensorflow.GraphDebugInfo", __name__)
OpDef = message_class("tensorflow.OpDef", __name__)
OpList = message_class("tensorflow.OpList", __name__)
VariableDef = message_class("tensorflow.VariableDef", __name__)
SaveSliceInfoDef = message_class("tensorflow.SaveSliceInfoDef", __name__)
SaverDef = message_class("tensorflow.SaverDef", __name__)
QueueRunnerDef = message_class("tensorflow.QueueRunnerDef", __name__)
MetaGraphDef = message_class("tensorflow.MetaGraphDef", __name__)
TensorInfo = message_class("tensorflow.TensorInfo", __name__)
SignatureDef = message_class("tensorflow.SignatureDef", __name__)
