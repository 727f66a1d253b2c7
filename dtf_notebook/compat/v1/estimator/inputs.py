"""``tf.estimator.inputs``: ``numpy_input_fn`` and ``pandas_input_fn``.

Example:
    >>> import numpy as np
    >>> import dtf_notebook.compat.v1 as tf
    >>> callable(tf.estimator.inputs.numpy_input_fn({"x": np.zeros(2)}, shuffle=False))
    True
"""

from dtf_notebook.estimator.inputs import numpy_input_fn, pandas_input_fn

__all__ = ["numpy_input_fn", "pandas_input_fn"]
