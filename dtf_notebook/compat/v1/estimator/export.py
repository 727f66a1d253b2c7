"""``tf.estimator.export``: serving input receivers and export outputs (see :mod:`dtf_notebook.estimator.export`)."""

from dtf_notebook.estimator.export import *  # noqa: F403
from dtf_notebook.estimator.export import __all__  # noqa: F401
