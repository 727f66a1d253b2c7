"""``tf.test``: ``TestCase``, ``main``, ``Benchmark``, ``create_local_cluster``, ``get_temp_dir``, the gradient
checker and the build and GPU queries of TF1."""

from unittest import mock

from dtf_notebook.testing import (
    Benchmark,
    TestCase,
    benchmark_config,
    compute_gradient,
    compute_gradient_error,
    create_local_cluster,
    get_temp_dir,
    gpu_device_name,
    is_built_with_cuda,
    is_built_with_gpu_support,
    is_built_with_rocm,
    is_built_with_xla,
    is_gpu_available,
    main,
)

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
    "mock",
]
