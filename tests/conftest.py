"""Fixtures shared by every test package."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def runtime_dir(tmp_path_factory):
    """A Jupyter runtime directory of the test module's own, so cluster files stay out of the user's."""
    with pytest.MonkeyPatch.context() as m:
        path = tmp_path_factory.mktemp("runtime")
        m.setenv("JUPYTER_RUNTIME_DIR", str(path))
        yield path
