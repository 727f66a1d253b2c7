"""``tf.contrib.learn``: Experiment, learn_runner and RunConfig (the rest of contrib.learn is not built here).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> tf.contrib.learn.learn_runner.run.__name__
    'run'
"""

from dtf_notebook.estimator.learn import Environment, Experiment, RunConfig, learn_runner

__all__ = ["Environment", "Experiment", "RunConfig", "learn_runner"]
