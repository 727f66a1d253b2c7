"""Training in a real kernel, as a learner's notebook does it, executed and saved by nbclient: the progress bar's
saved output is its final static copy (with the loss the optimizer minimizes, though nothing is in LOSSES),
also after an error; re-running the training cell says in one line that it starts again from step 0; re-running
the model cell fails with TF1's error plus one line on what to do. No ``%load_ext``: importing is enough."""

from __future__ import annotations

import os
import re

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("ipywidgets")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

MODEL = """
import dtf_notebook.compat.v1 as tf
step = tf.train.get_or_create_global_step()
w1 = tf.get_variable("w1", initializer=4.0)
loss = tf.square(w1, name="loss")
train_op = tf.train.GradientDescentOptimizer(0.25).minimize(loss, global_step=step)
"""

TRAIN = """
with tf.train.MonitoredTrainingSession(hooks=[tf.train.StopAtStepHook(last_step=3)]) as sess:
    while not sess.should_stop():
        sess.run(train_op)
"""

FAILING = """
with tf.Graph().as_default():
    step = tf.train.get_or_create_global_step()
    w = tf.Variable(4.0, name="w")
    train_op = tf.train.GradientDescentOptimizer(0.25).minimize(tf.square(w), global_step=step)
    with tf.train.MonitoredTrainingSession(hooks=[tf.train.StopAtStepHook(last_step=10)]) as sess:
        sess.run(train_op)
        sess.run(train_op)
        raise RuntimeError("the learner's bug")
"""


@pytest.fixture(scope="module")
def saved(runtime_dir) -> list:
    """The cells' outputs of the notebook MODEL, TRAIN, TRAIN, MODEL, FAILING, as nbclient saves them."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in (MODEL, TRAIN, TRAIN, MODEL, FAILING)])
    client = nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": ROOT}}, allow_errors=True
    )
    with pytest.MonkeyPatch.context() as m:
        m.setenv("JUPYTER_RUNTIME_DIR", str(runtime_dir))
        m.setenv("PYTHONPATH", ROOT)
        client.execute()
    return [cell.outputs for cell in nb.cells]


def bars(outputs: list) -> list[dict]:
    return [o["data"] for o in outputs if o["output_type"] == "display_data" and "text/plain" in o["data"]]


def stderr(outputs: list) -> str:
    return "".join(o["text"] for o in outputs if o["output_type"] == "stream" and o["name"] == "stderr")


def test_the_saved_bar_is_its_final_static_copy_with_the_minimized_loss(saved) -> None:
    (bar,) = bars(saved[1])
    assert WIDGET_VIEW not in bar  # the widget is gone: what is saved reads without a kernel
    # w: 4 -> 2 -> 1 -> 0.5; the loss fetched with the last step is 1.
    assert re.match(r"training: 100%\|█+\| 3/3 \[.*step/s, loss=1\]$", bar["text/plain"]), bar["text/plain"]
    assert "3/3" in bar["text/html"] and "loss=1" in bar["text/html"]
    assert "width:100.0%" in bar["text/html"] and "#4caf50" in bar["text/html"]  # a full, green bar
    assert stderr(saved[1]) == ""


def test_rerunning_the_training_cell_says_it_starts_again(saved) -> None:
    (bar,) = bars(saved[2])
    assert "3/3" in bar["text/plain"]  # TF1's behaviour: trained again from step 0
    assert stderr(saved[2]) == (
        "dtf_notebook: an earlier MonitoredTrainingSession in this kernel trained this graph to global step 3; "
        "this one has no checkpoint_dir, so it starts again from the variables' initial values (as TF1 does). To "
        "continue where training stopped, give both sessions checkpoint_dir=..., or keep one tf.Session and call "
        "sess.run again.\n"
    )


def test_rerunning_the_model_cell_fails_as_tf1_and_says_what_to_do(saved) -> None:
    (error,) = [o for o in saved[3] if o["output_type"] == "error"]
    assert error["ename"] == "ValueError"
    assert error["evalue"].startswith(
        "Variable w1 already exists, disallowed. Did you mean to set reuse=True or reuse=tf.AUTO_REUSE in VarScope?"
    )
    assert error["evalue"].endswith(
        "build the graph inside `with tf.Graph().as_default():` in the cell, or call `tf.reset_default_graph()` "
        "at the top of the cell."
    )


def test_a_bar_stopped_by_an_error_is_saved_where_it_stopped(saved) -> None:
    (error,) = [o for o in saved[4] if o["output_type"] == "error"]
    assert error["ename"] == "RuntimeError"
    (bar,) = bars(saved[4])
    assert WIDGET_VIEW not in bar
    assert " 2/10 " in bar["text/plain"] and "loss=4" in bar["text/plain"]
    assert "width:20.0%" in bar["text/html"] and "#f44336" in bar["text/html"]  # red, a fifth full
