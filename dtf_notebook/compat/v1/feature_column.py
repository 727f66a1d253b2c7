"""``tf.feature_column``: TF1's feature columns, ``input_layer`` and ``linear_model``.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> tf.feature_column.numeric_column("x").name
    'x'
"""

from dtf_notebook.feature_column import *  # noqa: F403
