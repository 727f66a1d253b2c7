"""The allocator tuning every transport end applies (``distributed.allocator``), each case in a fresh process."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

CHECK = (
    "from dtf_notebook.distributed.allocator import tune_for_streams; "
    "from dtf_notebook.distributed.client import Client; "
    "import dtf_notebook.distributed.allocator as a; "
    "c = Client(); print(a._result, tune_for_streams()); c.close()"
)


def run_check(**env: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", CHECK], env={**os.environ, **env}, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the tuning is for glibc's allocator")
def test_a_client_tunes_glibc_once_per_process():
    assert run_check(DTF_MALLOC_TUNING="1") == "True True"  # done by the Client, reported again after


def test_the_tuning_can_be_turned_off():
    assert run_check(DTF_MALLOC_TUNING="0") == "False False"
