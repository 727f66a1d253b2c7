"""Fixtures of the image op tests: real TensorFlow (TF1 graph mode) as the oracle."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="module")
def tf1() -> Any:
    """``tensorflow.compat.v1`` in graph mode (skips the module when TensorFlow is not installed)."""
    real = pytest.importorskip("tensorflow")
    real.compat.v1.disable_eager_execution()
    real.compat.v1.disable_control_flow_v2()
    return real.compat.v1
