"""SessionManager: prepare (init or restore), recover, and wait for a model another session makes ready."""

from __future__ import annotations

import threading
import time

import pytest

import dtf_notebook.compat.v1 as tf
from tests.distributed.cluster_util import free_port


def test_prepare_session_initialises_and_checks_readiness():
    v = tf.Variable(3.0, name="v")
    w = tf.Variable(4.0, name="w")
    sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables())
    sess = sm.prepare_session("", init_op=tf.global_variables_initializer())
    assert sess.run([v, w]) == [3.0, 4.0]
    sess.close()
    with pytest.raises(RuntimeError, match="did not make model ready.*Variables not initialized: w"):
        sm.prepare_session("", init_op=v.initializer)
    with pytest.raises(RuntimeError, match="no init_op or init_fn or local_init_op"):
        sm.prepare_session("")


def test_prepare_session_restores_instead_of_initialising(tmp_path):
    v = tf.Variable(1.0, name="v")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.assign(v, 42.0))
        saver.save(sess, str(tmp_path / "model.ckpt"), global_step=7)
    sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables())
    init_ran = []
    sess = sm.prepare_session(
        "", init_op=v.initializer, init_fn=init_ran.append, saver=saver, checkpoint_dir=str(tmp_path)
    )
    assert sess.run(v) == 42.0 and init_ran == []
    sess.close()
    with pytest.raises(ValueError, match="both checkpoint_dir and checkpoint_filename_with_path"):
        sm.prepare_session("", saver=saver, checkpoint_dir=str(tmp_path), checkpoint_filename_with_path="x")


def test_recover_session_reports_whether_it_restored(tmp_path):
    v = tf.Variable(1.0, name="v")
    saver = tf.train.Saver()
    sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables())
    sess, restored = sm.recover_session("", saver=saver, checkpoint_dir=str(tmp_path))
    assert not restored
    sess.run(tf.assign(v, 5.0))
    path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=1)
    sess.close()
    sess, restored = sm.recover_session("", saver=saver, checkpoint_dir=str(tmp_path))
    assert restored and sess.run(v) == 5.0
    sess.close()
    sess, restored = sm.recover_session("", saver=saver, checkpoint_filename_with_path=path)
    assert restored
    sess.close()


def test_local_init_op_runs_once_global_state_is_ready():
    g = tf.Variable(2.0, name="g")
    local = tf.Variable(0.0, name="local", collections=[tf.GraphKeys.LOCAL_VARIABLES])
    local_init = tf.assign(local, g * 10.0).op
    with pytest.raises(ValueError, match="ready_for_local_init_op"):
        tf.train.SessionManager(ready_for_local_init_op=tf.report_uninitialized_variables([g]))
    sm = tf.train.SessionManager(
        local_init_op=local_init,
        ready_op=tf.report_uninitialized_variables(),
        ready_for_local_init_op=tf.report_uninitialized_variables([g]),
    )
    sess = sm.prepare_session("", init_op=g.initializer)
    assert sess.run(local) == 20.0
    sess.close()
    with pytest.raises(RuntimeError, match="ready for local_init.*Variables not initialized: g"):
        sm.prepare_session("", init_fn=lambda sess: None)


def test_ready_op_that_fails_on_uninitialized_reads_counts_as_not_ready():
    v = tf.Variable(1.0, name="v")
    # Reading v fails until it is initialised; then the report is empty (v is not negative).
    ready = tf.boolean_mask(tf.constant(["v is negative"]), tf.reshape(v < 0.0, [1]))
    sm = tf.train.SessionManager(ready_op=ready)
    sess = sm.prepare_session("", init_op=v.initializer)
    sess.close()
    with pytest.raises(RuntimeError, match="uninitialized value v"):
        sm.prepare_session("", init_fn=lambda sess: None)


def test_wait_for_session_returns_once_another_session_initialised_the_model():
    server = tf.train.Server.create_local_server()
    try:
        v = tf.Variable(7.0, name="shared")

        def chief():
            time.sleep(0.5)
            with tf.Session(server.target, graph=v.graph) as sess:
                sess.run(v.initializer)

        thread = threading.Thread(target=chief)
        thread.start()
        sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables(), recovery_wait_secs=0.1)
        start = time.monotonic()
        sess = sm.wait_for_session(server.target, max_wait_secs=30)
        assert time.monotonic() - start >= 0.4
        assert sess.run(v) == 7.0
        sess.close()
        thread.join()
    finally:
        server.stop()


def test_wait_for_session_deadline_names_the_uninitialized_variables():
    tf.Variable(1.0, name="weights")
    tf.Variable(1.0, name="biases")
    sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables(), recovery_wait_secs=0.05)
    start = time.monotonic()
    with pytest.raises(tf.errors.DeadlineExceededError, match="after waiting 0.3 secs.*weights, biases"):
        sm.wait_for_session("", max_wait_secs=0.3)
    assert time.monotonic() - start < 5


def test_wait_for_session_keeps_waiting_while_a_task_is_unreachable():
    spec = {"ps": [f"127.0.0.1:{free_port()}"], "worker": [f"127.0.0.1:{free_port()}"]}
    worker = tf.train.Server(spec, job_name="worker", task_index=0)
    servers = [worker]
    try:
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(3.0, name="on_late_ps")
        config = tf.ConfigProto(cluster_wait_secs=0.3)

        def late_chief():
            time.sleep(1.0)
            servers.append(tf.train.Server(spec, job_name="ps", task_index=0))
            with tf.Session(worker.target, graph=v.graph) as sess:
                sess.run(v.initializer)

        thread = threading.Thread(target=late_chief)
        thread.start()
        sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables(), recovery_wait_secs=0.1)
        sess = sm.wait_for_session(worker.target, config=config, max_wait_secs=60)
        assert sess.run(v) == 3.0
        sess.close()
        thread.join()
    finally:
        for server in servers:
            server.stop()
