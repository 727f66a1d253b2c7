"""``tf.test``: ``TestCase``, ``main``, ``get_temp_dir``, the gradient checker and the GPU queries of TF1."""

from unittest import mock

from dtf_notebook.testing import (
    TestCase,
    compute_gradient,
    compute_gradient_error,
    get_temp_dir,
    gpu_device_name,
    is_built_with_cuda,
    is_built_with_gpu_support,
    is_gpu_available,
    main,
)

__all__ = [
    "TestCase",
    "compute_gradient",
    "compute_gradient_error",
    "get_temp_dir",
    "gpu_device_name",
    "is_built_with_cuda",
    "is_built_with_gpu_support",
    "is_gpu_available",
    "main",
    "mock",
]
