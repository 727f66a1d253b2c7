"""Bytes and text written by real TensorFlow parse into this package's protobuf classes, and ours parse in TF.

Covers the graph messages (a TF-built ``GraphDef`` and ``MetaGraphDef``), the session messages (``ConfigProto`` in
text format both ways, ``RunOptions``, a traced ``RunMetadata``), the cluster messages (``ClusterDef``,
``ServerDef``) and the event messages. Fields TF has and we leave out travel as unknown fields: a message TF wrote
and we re-serialized parses in TF back to the message TF wrote.
"""

from __future__ import annotations

import pytest
from google.protobuf import text_format

from dtf_notebook.protos import config_pb, graph_pb, summary_pb

pytestmark = pytest.mark.tf_oracle


@pytest.fixture(scope="module")
def tf1():
    return pytest.importorskip("tensorflow").compat.v1


def _crosses(ours_cls, theirs):
    """``theirs`` (a TF message) parsed here, written again and parsed by TF is ``theirs``; returns ours."""
    ours = ours_cls.FromString(theirs.SerializeToString())
    assert type(theirs).FromString(ours.SerializeToString()) == theirs
    return ours


def _tf_graph(tf1):
    graph = tf1.Graph()
    with graph.as_default():
        x = tf1.placeholder(tf1.float32, [None, 3], name="x")
        w = tf1.Variable(tf1.ones([3, 2]), name="w")
        y = tf1.nn.relu(tf1.matmul(x, w), name="y")
        tf1.summary.scalar("mean_y", tf1.reduce_mean(y))
        saver = tf1.train.Saver()
    return graph, saver


def test_a_tf_graph_def_parses_here(tf1):
    graph, _ = _tf_graph(tf1)
    ours = _crosses(graph_pb.GraphDef, graph.as_graph_def())
    nodes = {n.name: n for n in ours.node}
    assert nodes["y"].op == "Relu" and list(nodes["y"].input) == ["MatMul"]
    assert nodes["x"].attr["dtype"].type == graph_pb.DataType.Value("DT_FLOAT")
    assert [d.size for d in nodes["x"].attr["shape"].shape.dim] == [-1, 3]
    assert ours.versions.producer == graph.as_graph_def().versions.producer


def test_a_tf_meta_graph_def_parses_here(tf1):
    graph, saver = _tf_graph(tf1)
    with graph.as_default():
        theirs = tf1.train.export_meta_graph(saver_def=saver.as_saver_def())
    ours = _crosses(graph_pb.MetaGraphDef, theirs)
    assert ours.saver_def.version == graph_pb.SaverDef.V2
    assert ours.saver_def.filename_tensor_name == theirs.saver_def.filename_tensor_name
    assert set(ours.collection_def) == set(theirs.collection_def)
    assert list(ours.collection_def["summaries"].node_list.value) == ["mean_y:0"]
    assert ours.meta_info_def.tensorflow_version == theirs.meta_info_def.tensorflow_version


def test_config_proto_text_format_round_trips(tf1):
    theirs = tf1.ConfigProto(
        allow_soft_placement=True,
        log_device_placement=True,
        device_count={"GPU": 0, "CPU": 4},
        inter_op_parallelism_threads=2,
        device_filters=["/job:ps", "/job:worker/task:1"],
        operation_timeout_in_ms=60000,
        gpu_options=tf1.GPUOptions(per_process_gpu_memory_fraction=0.4, allow_growth=True, visible_device_list="1,0"),
        graph_options=tf1.GraphOptions(
            optimizer_options=tf1.OptimizerOptions(
                opt_level=tf1.OptimizerOptions.L0, global_jit_level=tf1.OptimizerOptions.ON_1
            ),
            infer_shapes=True,
        ),
    )
    theirs.experimental.collective_group_leader = "/job:worker/replica:0/task:0"
    theirs.cluster_def.job.add(name="worker", tasks={0: "w0:2222", 1: "w1:2222"})
    ours = text_format.Parse(str(theirs), config_pb.ConfigProto())
    assert ours.gpu_options.per_process_gpu_memory_fraction == 0.4 and dict(ours.device_count) == {"GPU": 0, "CPU": 4}
    assert ours.graph_options.optimizer_options.global_jit_level == config_pb.OptimizerOptions.ON_1
    assert text_format.Parse(text_format.MessageToString(ours), tf1.ConfigProto()) == theirs
    assert str(ours) == str(theirs)
    assert _crosses(config_pb.ConfigProto, theirs) == ours


def test_our_config_bytes_parse_in_tf_and_project_fields_are_skipped(tf1):
    ours = config_pb.ConfigProto(allow_soft_placement=True, virtual_gpus=2, cluster_wait_secs=5.0)
    theirs = tf1.ConfigProto.FromString(ours.SerializeToString())
    assert theirs.allow_soft_placement and theirs.ByteSize() > 0
    assert config_pb.ConfigProto.FromString(theirs.SerializeToString()).virtual_gpus == 2  # kept as unknown fields
    assert not config_pb.ConfigProto().HasField("cluster_wait_secs")


def test_run_options_and_a_traced_run_metadata(tf1):
    options = tf1.RunOptions(trace_level=tf1.RunOptions.FULL_TRACE, timeout_in_ms=500, output_partition_graphs=True)
    assert _crosses(config_pb.RunOptions, options).trace_level == config_pb.RunOptions.FULL_TRACE
    graph, _ = _tf_graph(tf1)
    metadata = tf1.RunMetadata()
    with graph.as_default(), tf1.Session() as sess:
        sess.run(tf1.global_variables_initializer())
        sess.run("y:0", {"x:0": [[1.0, 2.0, 3.0]]}, options=options, run_metadata=metadata)
    ours = _crosses(config_pb.RunMetadata, metadata)
    names = {s.node_name for d in ours.step_stats.dev_stats for s in d.node_stats}
    assert "y" in names and len(ours.partition_graphs) == len(metadata.partition_graphs) > 0


def test_cluster_and_server_defs(tf1):
    cluster = tf1.train.ClusterSpec({"ps": ["p0:2222"], "worker": ["w0:2222", "w1:2222"]}).as_cluster_def()
    ours = _crosses(config_pb.ClusterDef, cluster)
    assert [(j.name, dict(j.tasks)) for j in ours.job] == [(j.name, dict(j.tasks)) for j in cluster.job]
    server = tf1.train.ServerDef(cluster=cluster, job_name="worker", task_index=1, protocol="grpc")
    server.default_session_config.allow_soft_placement = True
    ours = _crosses(config_pb.ServerDef, server)
    assert (ours.job_name, ours.task_index, ours.default_session_config.allow_soft_placement) == ("worker", 1, True)
    assert text_format.Parse(str(ours), tf1.train.ServerDef()) == server


def test_event_messages_cross_both_ways(tf1):
    theirs = tf1.Event(wall_time=1.5, step=3)
    theirs.summary.value.add(tag="loss", simple_value=0.25)
    theirs.summary.value.add(tag="h", histo=tf1.HistogramProto(num=2, bucket_limit=[1.0, 2.0], bucket=[1, 1]))
    ours = _crosses(summary_pb.Event, theirs)
    assert ours.summary.value[1].histo.bucket_limit[:] == [1.0, 2.0]
    log = summary_pb.Event(session_log=summary_pb.SessionLog(status=summary_pb.SessionLog.CHECKPOINT, msg="m"))
    assert tf1.Event.FromString(log.SerializeToString()).session_log.status == tf1.SessionLog.CHECKPOINT
