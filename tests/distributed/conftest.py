"""Fixtures of the cluster tests."""

from __future__ import annotations

import pytest

import dtf_notebook.compat.v1 as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    """Every test builds in a graph of its own (its default graph), passed to the tests that ask for it."""
    with tf.Graph().as_default() as g:
        yield g


@pytest.fixture(scope="module", autouse=True)
def cluster_files_apart(runtime_dir):
    """The local clusters of these tests keep their cluster files in a runtime directory of the module's own."""
    return runtime_dir
