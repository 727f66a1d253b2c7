"""The line a notebook learner gets when a MonitoredTrainingSession without checkpoint_dir starts again from the
initial values a graph an earlier one trained (a re-run cell); training itself is TF1's. The kernel test is in
tests/notebook/test_notebook_training.py; here a kernel is pretended."""

from __future__ import annotations

from typing import Any

import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.train import rerun_notice
from dtf_notebook.train.progress_hook import enable_progress_bars


@pytest.fixture(autouse=True)
def _forget() -> None:
    rerun_notice._by_names.clear()  # what earlier tests trained in this process


@pytest.fixture
def kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rerun_notice, "jupyter_kernel", lambda: True)
    enable_progress_bars(False)
    yield
    enable_progress_bars(None)


def _build(with_step: bool = True) -> Any:
    step = tf.train.get_or_create_global_step() if with_step else None
    w = tf.Variable(4.0, name="w")
    return w, tf.train.GradientDescentOptimizer(0.25).minimize(tf.square(w), global_step=step)


def _train(train_op: Any, runs: int, **kwargs: Any) -> list[float]:
    """Runs ``train_op`` ``runs`` times in a MonitoredTrainingSession; returns w after each run."""
    w = tf.get_default_graph().get_tensor_by_name("w:0")
    with tf.train.MonitoredTrainingSession(**kwargs) as sess:
        return [float(sess.run([train_op, w])[1]) for _ in range(runs)]


def test_a_second_session_for_the_same_graph_says_it_starts_again(kernel: None, capsys: Any) -> None:
    with tf.Graph().as_default():
        _, train_op = _build()
        first = _train(train_op, 3)
        assert capsys.readouterr().err == ""
        again = _train(train_op, 3)
    assert again == first  # TF1's behaviour, unchanged: from the initial values
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(
        "dtf_notebook: an earlier MonitoredTrainingSession in this kernel trained this graph to global step 3; "
        "this one has no checkpoint_dir, so it starts again from the variables' initial values (as TF1 does)."
    )
    assert "checkpoint_dir=" in err and "sess.run again" in err


def test_a_rebuilt_graph_with_the_same_variables_is_recognised(kernel: None, capsys: Any) -> None:
    with tf.Graph().as_default():
        _train(_build(with_step=False)[1], 2)
    with tf.Graph().as_default():
        _train(_build(with_step=False)[1], 1)
    assert "trained a graph with these variables for 2 runs;" in capsys.readouterr().err
    with tf.Graph().as_default():
        tf.Variable(1.0, name="other")
        _train(_build(with_step=False)[1], 1)
    assert capsys.readouterr().err == ""  # other variables: another model


def test_a_checkpoint_dir_continues_and_says_nothing(kernel: None, capsys: Any, tmp_path: Any) -> None:
    with tf.Graph().as_default():
        _, train_op = _build()
        first = _train(train_op, 2, checkpoint_dir=str(tmp_path))
        later = _train(train_op, 1, checkpoint_dir=str(tmp_path))
    assert later[0] < first[-1]  # restored, then one more step
    assert capsys.readouterr().err == ""


def test_outside_a_kernel_nothing_is_recorded_or_said(capsys: Any) -> None:
    with tf.Graph().as_default() as g:
        _, train_op = _build()
        _train(train_op, 2)
        _train(train_op, 2)
        assert rerun_notice.restart_notice(g) is None
    assert capsys.readouterr().err == ""
