"""A model cell run twice in one graph: get_variable fails with TF1's error and message (plus, under IPython, one
line on what to do); tf.Variable silently makes ``x_1``, as TF1 does. Checked against tensorflow.compat.v1."""

from __future__ import annotations

from typing import Any

import pytest

import dtf_notebook.compat.v1 as dtf
from dtf_notebook.ops import variable_store

TF1_MESSAGE = (
    "Variable w1 already exists, disallowed. Did you mean to set reuse=True or reuse=tf.AUTO_REUSE in VarScope?"
)
HINT = (
    "Re-running a cell adds its variables to the same graph again: build the graph inside "
    "`with tf.Graph().as_default():` in the cell, or call `tf.reset_default_graph()` at the top of the cell."
)


def _cell(tf: Any) -> str:
    """A model cell: a get_variable, a Variable; returns the Variable's name."""
    tf.get_variable("w1", [2])
    return tf.Variable(0.0, name="x").name


def _error_of_running_twice(tf: Any) -> ValueError:
    with tf.Graph().as_default():
        _cell(tf)
        with pytest.raises(ValueError) as raised:
            _cell(tf)
    return raised.value


def test_outside_ipython_the_message_is_tf1s(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(variable_store, "ipython_shell", lambda: False)  # another test may have made a shell
    message = str(_error_of_running_twice(dtf))
    assert message.startswith(TF1_MESSAGE + " Originally defined at:\n\n")
    assert "_cell" in message and HINT not in message


def test_under_ipython_one_line_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(variable_store, "ipython_shell", lambda: True)
    error = _error_of_running_twice(dtf)
    assert type(error) is ValueError
    assert str(error).startswith(TF1_MESSAGE) and str(error).endswith("\n" + HINT)
    with dtf.Graph().as_default():
        dtf.get_variable("v", [4, 2], partitioner=lambda shape, dtype: [2, 1])
        with pytest.raises(ValueError, match="Partitioned variable with name v already exists") as raised:
            dtf.get_variable("v", [4, 2], partitioner=lambda shape, dtype: [2, 1])
    assert str(raised.value).endswith(HINT)


def test_a_plain_variable_cell_run_twice_makes_x_1_as_in_tf1() -> None:
    with dtf.Graph().as_default():
        assert [dtf.Variable(0.0, name="x").name for _ in range(2)] == ["x:0", "x_1:0"]


@pytest.mark.tf_oracle
def test_tensorflow_says_the_same() -> None:
    tf1 = pytest.importorskip("tensorflow").compat.v1
    error = _error_of_running_twice(tf1)
    assert type(error) is ValueError and str(error).startswith(TF1_MESSAGE)
    with tf1.Graph().as_default():
        assert [tf1.Variable(0.0, name="x").name for _ in range(2)] == ["x:0", "x_1:0"]
