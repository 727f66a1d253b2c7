"""``tf.test``: TF1's ``TestCase`` and the helpers TF1-style tests of user code call (gradient checks, GPUs, main).

Example:
    >>> from dtf_notebook.testing import TestCase, compute_gradient_error, gpu_device_name, is_gpu_available
    >>> issubclass(TestCase, __import__("unittest").TestCase)
    True
"""

from dtf_notebook.testing.environment import (
    get_temp_dir,
    gpu_device_name,
    is_built_with_cuda,
    is_built_with_gpu_support,
    is_gpu_available,
    main,
)
from dtf_notebook.testing.gradient_checker import compute_gradient, compute_gradient_error
from dtf_notebook.testing.testcase import TestCase

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
]
