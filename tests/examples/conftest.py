"""Fixtures of the examples' tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module", autouse=True)
def cluster_files_apart(runtime_dir):
    """The examples' local clusters keep their cluster files in a runtime directory of the module's own."""
    return runtime_dir
