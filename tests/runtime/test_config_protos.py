"""``tf.ConfigProto``, ``tf.RunOptions`` and ``tf.RunMetadata`` are TF's protobufs: TF's bytes drive a session here,
text format round trips, a traced run fills a protobuf RunMetadata, and the cluster key never travels."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from google.protobuf import text_format

import dtf_notebook.compat.v1 as tf
from dtf_notebook.distributed.remote_session import RemoteBackend
from dtf_notebook.protos import config_pb
from dtf_notebook.runtime.config import ConfigProto, RunOptions, as_config, as_run_options


@pytest.fixture(scope="module")
def real_tf():
    return pytest.importorskip("tensorflow").compat.v1


def test_the_names_are_the_protobuf_classes():
    assert tf.ConfigProto is config_pb.ConfigProto and tf.GPUOptions is config_pb.GPUOptions
    assert tf.GraphOptions is config_pb.GraphOptions and tf.RunOptions is config_pb.RunOptions
    assert tf.RunMetadata is config_pb.RunMetadata and tf.train.ServerDef is config_pb.ServerDef


def test_project_fields_unset_keep_their_defaults_and_round_trip():
    assert as_config(tf.ConfigProto()) == ConfigProto()
    assert as_config(tf.ConfigProto()).cluster_wait_secs == 30.0
    config = tf.ConfigProto(virtual_gpus=2, cluster_wait_secs=0.5, session_gc_secs=9, device_filters=["/job:ps"])
    config.gpu_options.visible_device_list = "1,0"
    runtime = as_config(config)
    assert (runtime.virtual_gpus, runtime.cluster_wait_secs, runtime.session_gc_secs) == (2, 0.5, 9.0)
    assert runtime.gpu_options.visible_device_list == "1,0" and runtime.device_filters == ["/job:ps"]
    assert runtime.to_proto() == config
    assert ConfigProto().to_proto().ByteSize() == 0
    with pytest.raises(TypeError, match="config must be a tf.ConfigProto"):
        as_config(tf.RunOptions())
    with pytest.raises(TypeError, match="options must be a tf.RunOptions"):
        as_run_options(tf.ConfigProto())


def test_text_format_round_trips():
    config = tf.ConfigProto(allow_soft_placement=True, virtual_gpus=1, device_count={"GPU": 1})
    config.graph_options.infer_shapes = True
    text = text_format.MessageToString(config)
    assert text_format.Parse(text, tf.ConfigProto()) == config
    options = text_format.Parse("trace_level: FULL_TRACE timeout_in_ms: 1000", tf.RunOptions())
    assert as_run_options(options) == RunOptions(trace_level=3, timeout_in_ms=1000)


def test_a_traced_run_fills_a_protobuf_run_metadata_per_device():
    with tf.Graph().as_default():
        with tf.device("/gpu:0"):
            a = tf.constant([1.0, 2.0], name="a")
        with tf.device("/cpu:0"):
            b = tf.identity(a * 2.0, name="b")
        metadata = tf.RunMetadata()
        metadata.partition_graphs.add()  # replaced, as TF's session parses over it
        options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True)
        with tf.Session(config=tf.ConfigProto(virtual_gpus=1)) as sess:
            np.testing.assert_array_equal(sess.run(b, options=options, run_metadata=metadata), [2.0, 4.0])
    devices = {dev.device: {s.node_name for s in dev.node_stats} for dev in metadata.step_stats.dev_stats}
    assert devices["/job:localhost/replica:0/task:0/device:GPU:0"] >= {"a"}
    assert devices["/job:localhost/replica:0/task:0/device:CPU:0"] >= {"b"}
    assert all(s.all_end_rel_micros >= 0 for dev in metadata.step_stats.dev_stats for s in dev.node_stats)
    assert config_pb.RunMetadata.FromString(metadata.SerializeToString()) == metadata
    with tf.Graph().as_default(), tf.Session() as sess, pytest.raises(TypeError, match="tf.RunMetadata"):
        sess.run(tf.constant(1), run_metadata=tf.RunOptions())


@pytest.mark.tf_oracle
def test_tensorflow_config_and_run_options_bytes_drive_the_session(real_tf: Any):
    theirs = real_tf.ConfigProto(allow_soft_placement=True, device_count={"GPU": 0}, operation_timeout_in_ms=5000)
    theirs.gpu_options.allow_growth = True
    config = tf.ConfigProto.FromString(theirs.SerializeToString())
    assert str(config) == str(theirs)
    options = tf.RunOptions.FromString(
        real_tf.RunOptions(trace_level=real_tf.RunOptions.FULL_TRACE, timeout_in_ms=2000).SerializeToString()
    )
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        with tf.Session(config=config) as sess:
            assert [d.device_type for d in sess.list_devices()] == ["CPU"]  # device_count hides GPUs
            assert sess._config.allow_soft_placement and sess._config.operation_timeout_in_ms == 5000
            metadata = tf.RunMetadata()
            out = sess.run(x * 3.0, {x: [1.0, 2.0]}, options=options, run_metadata=metadata)
    np.testing.assert_array_equal(out, [3.0, 6.0])
    # TF reads the metadata we filled.
    again = real_tf.RunMetadata.FromString(metadata.SerializeToString())
    assert [d.device for d in again.step_stats.dev_stats] == ["/job:localhost/replica:0/task:0/device:CPU:0"]
    assert len(again.step_stats.dev_stats[0].node_stats) >= 2


def test_cluster_session_config_travels_without_the_key():
    config = tf.ConfigProto(cluster_key="open sesame", cluster_key_salt="exp42", log_device_placement=True)
    backend = RemoteBackend("zmq://127.0.0.1:1", tf.Graph(), as_config(config))
    assert backend._wire_config["log_device_placement"] is True
    assert "cluster_key" not in backend._wire_config and "cluster_key_salt" not in backend._wire_config
    assert "open sesame" not in repr(backend._wire_config) and "open sesame" not in repr(as_config(config))
    # The protobuf itself shows its fields, the key included (README says so).
    assert "open sesame" in str(config)


def test_output_partition_graphs_fills_the_run_metadata_of_a_local_run():
    with tf.Graph().as_default():
        total = tf.add(tf.constant(1.0, name="a"), 2.0, name="total")
        with tf.Session() as sess:
            plain, asked = tf.RunMetadata(), tf.RunMetadata()
            sess.run(total, run_metadata=plain)
            sess.run(total, options=tf.RunOptions(output_partition_graphs=True), run_metadata=asked)
    assert len(plain.partition_graphs) == 0
    (graph,) = asked.partition_graphs
    assert {n.name for n in graph.node} == {"a", "total/y", "total"}
    assert all(n.device.endswith("/device:CPU:0") for n in graph.node)
