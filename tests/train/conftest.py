"""Fixtures of the training tests."""

from __future__ import annotations

import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.train.progress_hook import enable_progress_bars


@pytest.fixture(autouse=True)
def no_automatic_progress_bar():
    """Sessions get exactly TF1's hooks, also when the tests' standard error is a terminal (`pytest -s`)."""
    enable_progress_bars(False)
    yield
    enable_progress_bars(None)


@pytest.fixture(autouse=True)
def fresh_graph():
    """Every test builds in a graph of its own (its default graph), passed to the tests that ask for it."""
    with tf.Graph().as_default() as g:
        yield g
