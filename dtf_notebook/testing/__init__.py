"""``tf.test``: TF1's ``TestCase`` and the helpers TF1-style tests of user code call (gradient checks, GPUs, main,
benchmarks, in-process local clusters).

Example:
    >>> from dtf_notebook.testing import TestCase, compute_gradient_error, gpu_device_name, is_gpu_available
    >>> issubclass(TestCase, __import__("unittest").TestCase)
    True
"""

from dtf_notebook.testing.benchmark import Benchmark, benchmark_config
from dtf_notebook.testing.environment import (
    get_temp_dir,
    gpu_device_name,
    is_built_with_cuda,
    is_built_with_gpu_support,
    is_built_with_rocm,
    is_built_with_xla,
    is_gpu_available,
    main,
)
from dtf_notebook.testing.gradient_checker import compute_gradient, compute_gradient_error
from dtf_notebook.testing.local_cluster import create_local_cluster, stop_local_cluster
from dtf_notebook.testing.testcase import TestCase

__all__ = [
    "Benchmark",
    "TestCase",
    "benchmark_config",
    "compute_gradient",
    "compute_gradient_error",
    "create_local_cluster",
    "get_temp_dir",
    "gpu_device_name",
    "is_built_with_cuda",
    "is_built_with_gpu_support",
    "is_built_with_rocm",
    "is_built_with_xla",
    "is_gpu_available",
    "main",
    "stop_local_cluster",
]
