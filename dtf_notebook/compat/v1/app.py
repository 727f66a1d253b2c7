"""``tf.app``: ``run`` and ``flags``, as TF1 scripts use them.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> tf.app.flags is tf.flags
    True
"""

from dtf_notebook.compat.v1 import flags
from dtf_notebook.platform.app import run

__all__ = ["flags", "run"]
