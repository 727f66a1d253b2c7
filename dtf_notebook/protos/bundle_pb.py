"""TF's checkpoint (tensor bundle) messages as protobuf classes: ``BundleHeaderProto``, ``BundleEntryProto`` and
``TensorSliceProto``.

A TF V2 checkpoint's ``.index`` file is a table whose entry ``""`` holds a ``BundleHeaderProto`` and whose entry per
saved tensor holds a ``BundleEntryProto`` (dtype, shape, shard, offset, size and the masked CRC-32C of the bytes);
a partitioned variable's entry lists its ``slices``, each stored as an entry of its own. The schemas are TF's
``tensor_slice.proto`` and ``tensor_bundle.proto`` with TF's names and field numbers.

Example:
    >>> entry = BundleEntryProto(dtype=1, shard_id=0, offset=8, size=16)
    >>> entry.shape.dim.add(size=4)
    size: 4
    <BLANKLINE>
    >>> BundleEntryProto.FromString(entry.SerializeToString()).size
    16
"""

from __future__ import annotations

from dtf_notebook.protos import graph_pb as _graph_pb  # noqa: F401 - puts tensor_shape, types, versions in the pool
from dtf_notebook.protos import message_class
from dtf_notebook.protos.spec import add_spec_file

__all__ = ["BundleEntryProto", "BundleHeaderProto", "TensorSliceProto"]

_SLICE = "tensorflow/core/framework/tensor_slice.proto"
add_spec_file(
    _SLICE,
    [],
    [
        (
            "TensorSliceProto",
            [("extent", 1, "repeated tensorflow.TensorSliceProto.Extent")],
            [("Extent", [("start", 1, "int64"), ("length", 2, "int64", "has_length_hack")])],
        )
    ],
)
add_spec_file(
    "tensorflow/core/protobuf/tensor_bundle.proto",
    [
        "tensorflow/core/framework/tensor_shape.proto",
        _SLICE,
        "tensorflow/core/framework/types.proto",
        "tensorflow/core/framework/versions.proto",
    ],
    [
        (
            "BundleHeaderProto",
            [
                ("num_shards", 1, "int32"),
                ("endianness", 2, "enum tensorflow.BundleHeaderProto.Endianness"),
                ("version", 3, "tensorflow.VersionDef"),
            ],
            [("enum", "Endianness", [("LITTLE", 0), ("BIG", 1)])],
        ),
        (
            "BundleEntryProto",
            [
                ("dtype", 1, "enum tensorflow.DataType"),
                ("shape", 2, "tensorflow.TensorShapeProto"),
                ("shard_id", 3, "int32"),
                ("offset", 4, "int64"),
                ("size", 5, "int64"),
                ("crc32c", 6, "fixed32"),
                ("slices", 7, "repeated tensorflow.TensorSliceProto"),
            ],
        ),
    ],
)

TensorSliceProto = message_class("tensorflow.TensorSliceProto", __name__)
BundleHeaderProto = message_class("tensorflow.BundleHeaderProto", __name__)
BundleEntryProto = message_class("tensorflow.BundleEntryProto", __name__)
