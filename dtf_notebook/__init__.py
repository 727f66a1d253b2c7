"""dtf_notebook: TensorFlow 1.x's graph API and distributed runtime, executed by PyTorch.

``import dtf_notebook as dtf`` gives the same names as ``import dtf_notebook.compat.v1 as tf``.

Example:
    >>> import dtf_notebook as dtf
    >>> with dtf.Graph().as_default():
    ...     with dtf.Session() as sess:
    ...         print(sess.run(dtf.constant(1.5)))
    1.5
"""

from dtf_notebook import ops as _ops  # noqa: F401 - registers every op
from dtf_notebook.compat.v1 import *  # noqa: F403
from dtf_notebook.compat.v1 import errors, nn, train

__version__ = "0.1.0"
