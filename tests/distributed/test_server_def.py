"""``tf.train.ServerDef``: TF's protobuf (and the runtime's ServerDef and its dict form) accepted by
``tf.train.Server`` with TF1's override rules."""

from __future__ import annotations

from typing import Any

import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.distributed.server_def import ServerDef, is_server_def_dict, merge_config
from dtf_notebook.protos import config_pb
from dtf_notebook.runtime.config import ConfigProto

CLUSTER = {"ps": ["127.0.0.1:0"], "worker": ["127.0.0.1:0", "127.0.0.1:0"]}


def _server(*args: Any, **kwargs: Any) -> tf.train.Server:
    return tf.train.Server(*args, start=False, **kwargs)


def _def(cluster: Any = None, **fields: Any) -> Any:
    """A ``tf.train.ServerDef`` protobuf of ``cluster`` (a dict of jobs; CLUSTER by default)."""
    return tf.train.ServerDef(cluster=tf.train.ClusterSpec(cluster or CLUSTER).as_cluster_def(), **fields)


def test_exported_and_defaults_like_the_protocol_buffer():
    assert tf.train.ServerDef is config_pb.ServerDef
    empty = tf.train.ServerDef()
    assert (empty.job_name, empty.task_index, empty.protocol) == ("", 0, "")
    assert not ServerDef.from_proto(empty).cluster_spec
    assert ServerDef.from_proto(empty).default_session_config.cluster_wait_secs == 30.0


def test_server_takes_job_task_protocol_and_config_from_the_server_def():
    config = tf.ConfigProto(log_device_placement=True, virtual_gpus=2)
    server_def = tf.train.ServerDef(
        cluster=tf.train.ClusterSpec(CLUSTER).as_cluster_def(),
        job_name="worker",
        task_index=1,
        protocol="grpc",
        default_session_config=config,
    )
    server = _server(server_def)
    assert (server.job_name, server.task_index, server.protocol) == ("worker", 1, "grpc")
    assert server.config.log_device_placement and server.config.virtual_gpus == 2
    assert server.server_def == server_def
    assert ServerDef.from_proto(server_def).to_proto() == server_def


def test_explicit_arguments_override_the_server_def():
    server_def = _def(job_name="worker", task_index=1, protocol="grpc")
    server = _server(server_def, job_name="ps", task_index=0, protocol="zmq", config=tf.ConfigProto(virtual_gpus=1))
    assert (server.job_name, server.task_index, server.protocol, server.config.virtual_gpus) == ("ps", 0, "zmq", 1)
    assert _server(server_def, task_index=0).server_def.task_index == 0
    assert server_def.task_index == 1  # the given ServerDef is not changed


def test_unset_task_index_is_zero_and_unset_job_is_refused():
    assert _server(_def(job_name="worker")).task_index == 0
    # As in TF, a ServerDef's empty job_name is not inferred, even for a one-job cluster.
    with pytest.raises(ValueError, match="No such job in cluster: ''"):
        _server(_def({"local": ["127.0.0.1:0"]}))
    with pytest.raises(ValueError, match="No task with index 5 in job 'worker'"):
        _server(_def(job_name="worker", task_index=5))


def test_dict_form_round_trips_and_is_told_apart_from_a_cluster_dict():
    server_def = ServerDef(cluster=CLUSTER, job_name="worker", task_index=1, protocol="grpc")
    plain = server_def.to_dict()
    assert ServerDef.from_dict(plain) == server_def
    server = _server(plain)
    assert (server.job_name, server.task_index) == ("worker", 1)
    assert _server({"cluster": CLUSTER, "job_name": "ps"}).job_name == "ps"
    # A job that happens to be named "cluster" is still a cluster.
    assert not is_server_def_dict({"cluster": ["127.0.0.1:0"]})
    assert _server({"cluster": ["127.0.0.1:0"]}).job_name == "cluster"


def test_bad_fields_name_the_bad_value():
    with pytest.raises(TypeError, match="task_index must be an int, not '1'"):
        ServerDef(cluster=CLUSTER, job_name="ps", task_index="1")
    with pytest.raises(ValueError, match="Unknown ServerDef field.*: replicas"):
        ServerDef.from_dict({"cluster": CLUSTER, "replicas": 2})
    with pytest.raises(TypeError, match="tasks for job 'ps'.* Got 5"):
        ServerDef(cluster={"ps": 5})
    with pytest.raises(ValueError, match="Unknown protocol 'udp'"):
        _server(_def(job_name="ps", protocol="udp"))


def test_server_def_of_a_started_server_names_its_real_port_and_starts_the_same_task():
    with tf.train.Server.create_local_server() as server:
        server_def = server.server_def
        assert tf.train.ClusterSpec(server_def.cluster).task_address("localhost", 0) == server.address
    with tf.train.Server(server_def) as again:  # the port is free again: the same task serves there
        assert again.address == server.address
        with tf.Session(again.target) as sess:
            assert sess.run(tf.constant(2.0)) == 2.0


def test_merge_config_merges_like_protocol_buffers():
    base = tf.ConfigProto(log_device_placement=True, device_filters=["/job:ps"], device_count={"GPU": 1})
    base.gpu_options.per_process_gpu_memory_fraction = 0.5
    extra = tf.ConfigProto(allow_soft_placement=True, device_filters=["/job:worker"], device_count={"CPU": 2})
    extra.gpu_options.allow_growth = True
    merged = merge_config(ConfigProto.from_proto(base), extra)
    assert merged.log_device_placement and merged.allow_soft_placement
    assert merged.device_filters == ["/job:ps", "/job:worker"]
    assert merged.device_count == {"GPU": 1, "CPU": 2}
    assert merged.gpu_options.per_process_gpu_memory_fraction == 0.5 and merged.gpu_options.allow_growth
    assert list(base.device_filters) == ["/job:ps"] and not base.gpu_options.allow_growth  # inputs untouched
    assert list(extra.device_filters) == ["/job:worker"]


@pytest.fixture(scope="module")
def real_tf():
    return pytest.importorskip("tensorflow").compat.v1


@pytest.mark.tf_oracle
@pytest.mark.parametrize(
    "fields, overrides",
    [
        ({"job_name": "worker", "task_index": 1, "protocol": "grpc"}, {}),
        ({"job_name": "worker", "task_index": 1, "protocol": "grpc"}, {"task_index": 0}),
        ({"job_name": "worker", "task_index": 1, "protocol": "grpc"}, {"job_name": "ps", "task_index": 0}),
        ({"job_name": "worker", "task_index": 1, "protocol": "grpc"}, {"protocol": "grpc+verbs"}),
        ({"job_name": "worker", "protocol": "grpc"}, {}),
        ({"job_name": "ps", "protocol": "grpc"}, {"job_name": "worker", "task_index": 1}),
    ],
)
def test_override_rules_match_tensorflow(real_tf: Any, fields: dict[str, Any], overrides: dict[str, Any]):
    from tensorflow.python.training import server_lib

    theirs_def = real_tf.train.ServerDef(cluster=real_tf.train.ClusterSpec(CLUSTER).as_cluster_def(), **fields)
    args = {k: overrides.get(k) for k in ("job_name", "task_index", "protocol")}
    theirs = server_lib._make_server_def(theirs_def, config=None, **args)
    ours = _server(_def(**fields), **overrides).server_def
    assert (ours.job_name, ours.task_index, ours.protocol) == (theirs.job_name, theirs.task_index, theirs.protocol)
    assert tf.train.ClusterSpec(ours.cluster).as_dict() == real_tf.train.ClusterSpec(theirs.cluster).as_dict()
    # TF's bytes drive our server the same way.
    from_bytes = _server(tf.train.ServerDef.FromString(theirs_def.SerializeToString()), **overrides).server_def
    assert from_bytes == ours


@pytest.mark.tf_oracle
def test_config_merge_matches_tensorflow(real_tf: Any):
    from tensorflow.python.training import server_lib

    theirs_def = real_tf.train.ServerDef(
        cluster=real_tf.train.ClusterSpec(CLUSTER).as_cluster_def(),
        job_name="ps",
        protocol="grpc",
        default_session_config=real_tf.ConfigProto(log_device_placement=True, device_filters=["/job:ps"]),
    )
    extra = real_tf.ConfigProto(allow_soft_placement=True, device_filters=["/job:worker"])
    theirs = server_lib._make_server_def(theirs_def, None, None, None, extra).default_session_config
    ours_def = _def(
        job_name="ps",
        default_session_config=tf.ConfigProto(log_device_placement=True, device_filters=["/job:ps"]),
    )
    ours = _server(ours_def, config=tf.ConfigProto(allow_soft_placement=True, device_filters=["/job:worker"])).config
    assert (ours.log_device_placement, ours.allow_soft_placement) == (
        theirs.log_device_placement,
        theirs.allow_soft_placement,
    )
    assert ours.device_filters == list(theirs.device_filters)


@pytest.mark.tf_oracle
def test_tensorflow_server_def_bytes_start_the_same_task(real_tf: Any):
    config = real_tf.ConfigProto(log_device_placement=True, device_filters=["/job:worker/task:1"])
    config.gpu_options.visible_device_list = "0"
    theirs = real_tf.train.ServerDef(
        cluster=real_tf.train.ClusterSpec(CLUSTER).as_cluster_def(),
        job_name="worker",
        task_index=1,
        protocol="grpc",
        default_session_config=config,
    )
    server = _server(tf.train.ServerDef.FromString(theirs.SerializeToString()))
    assert (server.job_name, server.task_index, server.protocol) == ("worker", 1, "grpc")
    assert server.config.log_device_placement and server.config.device_filters == ["/job:worker/task:1"]
    assert server.config.gpu_options.visible_device_list == "0" and server.config.cluster_wait_secs == 30.0
    # And ours goes back to TF as the same message.
    assert real_tf.train.ServerDef.FromString(server.server_def.SerializeToString()) == theirs
