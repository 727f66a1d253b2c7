"""Every message of ``dtf_notebook.protos`` has TF's name, and each of its fields TF's number, type and label.

TF's own descriptors (from the installed ``tensorflow`` package) are the oracle: a field written here must exist
in TF's message with the same number, type, label, message or enum type and oneof; enums must have TF's values.
Fields TF has and we leave out are allowed (protobuf keeps them as unknown fields); this project's own
``ConfigProto`` fields (numbers from 10001) must not collide with any of TF's.
"""

from __future__ import annotations

import pytest

from dtf_notebook.protos import POOL, bundle_pb, config_pb, example_pb, graph_pb, saved_model_pb, summary_pb

_MODULES = (bundle_pb, config_pb, example_pb, graph_pb, saved_model_pb, summary_pb)
_PROJECT_FIELDS = {"virtual_gpus", "cluster_wait_secs", "cluster_key", "cluster_key_salt", "session_gc_secs"}


def _our_messages():
    seen = []

    def walk(descriptor):
        if descriptor.GetOptions().map_entry:
            return
        seen.append(descriptor)
        for nested in descriptor.nested_types:
            walk(nested)

    for module in _MODULES:
        for name in module.__all__:
            value = getattr(module, name)
            if hasattr(value, "DESCRIPTOR") and hasattr(value.DESCRIPTOR, "fields"):
                walk(value.DESCRIPTOR)
    return {d.full_name: d for d in seen}


def _tf_pool():
    pytest.importorskip("tensorflow")
    from google.protobuf import descriptor_pool
    from tensorflow.core.framework import summary_pb2  # noqa: F401
    from tensorflow.core.protobuf import (  # noqa: F401
        config_pb2,
        meta_graph_pb2,
        saved_model_pb2,
        tensor_bundle_pb2,
        tensorflow_server_pb2,
    )
    from tensorflow.core.util import event_pb2  # noqa: F401

    return descriptor_pool.Default()


def _kind(field):
    if field.message_type is not None:
        if field.message_type.GetOptions().map_entry:
            key, value = field.message_type.fields
            return ("map", key.type, _kind(value))
        return field.message_type.full_name
    if field.enum_type is not None:
        return field.enum_type.full_name
    return field.type


def _oneof(field):
    oneof = field.containing_oneof
    return None if oneof is None or oneof.name.startswith("_") else oneof.name


@pytest.mark.tf_oracle
@pytest.mark.parametrize("name", sorted(_our_messages()))
def test_message_fields_are_tfs(name):
    ours = _our_messages()[name]
    theirs = _tf_pool().FindMessageTypeByName(name)
    assert ours.full_name == theirs.full_name
    for field in ours.fields:
        if name == "tensorflow.ConfigProto" and field.name in _PROJECT_FIELDS:
            assert field.number > 10000 and field.number not in theirs.fields_by_number
            continue
        assert field.name in theirs.fields_by_name, f"{name}.{field.name} is not a field of TF's {name}"
        tf_field = theirs.fields_by_name[field.name]
        got = (field.number, field.type, field.is_repeated, _kind(field), _oneof(field))
        expected = (tf_field.number, tf_field.type, tf_field.is_repeated, _kind(tf_field), _oneof(tf_field))
        assert got == expected, f"{name}.{field.name}"
    for enum in ours.enum_types:
        tf_enum = theirs.enum_types_by_name[enum.name]
        assert [(v.name, v.number) for v in enum.values] == [(v.name, v.number) for v in tf_enum.values]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("name", ["tensorflow.DataType", "tensorflow.DataClass"])
def test_top_level_enums_hold_tfs_values(name):
    ours = POOL.FindEnumTypeByName(name)
    theirs = {v.name: v.number for v in _tf_pool().FindEnumTypeByName(name).values}
    assert all(theirs.get(v.name) == v.number for v in ours.values)


def test_every_message_is_covered():
    names = _our_messages()
    for expected in (
        "tensorflow.ConfigProto",
        "tensorflow.GPUOptions",
        "tensorflow.GraphOptions",
        "tensorflow.OptimizerOptions",
        "tensorflow.RunOptions",
        "tensorflow.RunMetadata",
        "tensorflow.ClusterDef",
        "tensorflow.JobDef",
        "tensorflow.ServerDef",
        "tensorflow.GraphDef",
        "tensorflow.NodeDef",
        "tensorflow.MetaGraphDef",
        "tensorflow.SaverDef",
        "tensorflow.Event",
        "tensorflow.Summary",
        "tensorflow.HistogramProto",
    ):
        assert expected in names
