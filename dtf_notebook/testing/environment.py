"""``tf.test.main``, ``get_temp_dir`` and what a test asks of its machine: GPUs and a CUDA build.

GPUs are the devices a local session gets (:func:`dtf_notebook.runtime.devices.local_devices`): CUDA GPUs, and the
CPU-backed virtual GPUs of ``DTF_VIRTUAL_GPUS`` unless ``cuda_only``.

Example:
    >>> isinstance(is_gpu_available(), bool), gpu_device_name() in ("", "/device:GPU:0")
    (True, True)
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from typing import Any

__all__ = [
    "get_temp_dir",
    "gpu_device_name",
    "is_built_with_cuda",
    "is_built_with_gpu_support",
    "is_built_with_rocm",
    "is_built_with_xla",
    "is_gpu_available",
    "main",
]

_temp_dir: str | None = None


def main(argv: Sequence[str] | None = None) -> Any:
    """Runs the tests of ``__main__`` (absl's test runner, as TF's ``tf.test.main``) and exits with their status;
    with ``--benchmark_filter=REGEX`` (or TF1's ``--benchmarks=REGEX``) it runs the matching benchmarks of the
    registered ``tf.test.Benchmark`` classes instead (see :mod:`dtf_notebook.testing.benchmark`).

    Example (at the end of a test file)::

        if __name__ == "__main__":
            tf.test.main()
    """
    from absl.testing import absltest  # the runner TF's googletest.main uses

    from dtf_notebook.testing.benchmark import benchmarks_main

    args = list(argv) if argv is not None else list(sys.argv)
    return benchmarks_main(lambda: absltest.main(argv=args), args)


def get_temp_dir() -> str:
    """A temporary directory for this test program (under ``TEST_TMPDIR`` if set), removed when it exits.

    Example:
        >>> os.path.isdir(get_temp_dir()), get_temp_dir() == get_temp_dir()
        (True, True)
    """
    global _temp_dir
    if _temp_dir is None:
        base = os.environ.get("TEST_TMPDIR") or tempfile.gettempdir()
        os.makedirs(base, exist_ok=True)
        prefix = os.path.splitext(os.path.basename(sys.argv[0] or "test"))[0] or "test"
        _temp_dir = tempfile.mkdtemp(prefix=prefix, dir=base)
        atexit.register(shutil.rmtree, _temp_dir, ignore_errors=True)
    return _temp_dir


def _gpus(cuda_only: bool) -> list[Any]:
    from dtf_notebook.runtime.devices import local_devices  # loads torch: only when a test asks

    return [d for d in local_devices() if d.device_type == "GPU" and not (cuda_only and d.virtual)]


def is_gpu_available(cuda_only: bool = False, min_cuda_compute_capability: tuple[int, int] | None = None) -> bool:
    """Whether a local session has a GPU (with ``min_cuda_compute_capability``: a CUDA GPU at least that recent).

    Example:
        >>> is_gpu_available(cuda_only=True) == bool(__import__("torch").cuda.device_count())
        True
    """
    gpus = _gpus(cuda_only or min_cuda_compute_capability is not None)
    if min_cuda_compute_capability is None:
        return bool(gpus)
    import torch

    wanted = tuple(min_cuda_compute_capability)
    return any(tuple(torch.cuda.get_device_capability(d.index)) >= wanted for d in gpus)


def gpu_device_name() -> str:
    """``"/device:GPU:0"`` when a GPU is available, else ``""``.

    Example:
        >>> gpu_device_name() == ("/device:GPU:0" if is_gpu_available() else "")
        True
    """
    gpus = _gpus(cuda_only=False)
    return f"/device:GPU:{gpus[0].index}" if gpus else ""


def is_built_with_cuda() -> bool:
    """Whether the torch this runs on was built with CUDA.

    Example:
        >>> isinstance(is_built_with_cuda(), bool)
        True
    """
    import torch

    return torch.version.cuda is not None


def is_built_with_gpu_support() -> bool:
    """Whether the torch this runs on was built with CUDA or ROCm.

    Example:
        >>> is_built_with_gpu_support() >= is_built_with_cuda()
        True
    """
    import torch

    return torch.version.cuda is not None or getattr(torch.version, "hip", None) is not None


def is_built_with_rocm() -> bool:
    """Whether the torch this runs on was built with ROCm.

    Example:
        >>> isinstance(is_built_with_rocm(), bool)
        True
    """
    import torch

    return getattr(torch.version, "hip", None) is not None


def is_built_with_xla() -> bool:
    """Whether ops can be compiled with XLA: never here (ops run as torch kernels).

    Example:
        >>> is_built_with_xla()
        False
    """
    return False
