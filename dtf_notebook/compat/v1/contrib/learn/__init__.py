"""``tf.contrib.learn``: Experiment, learn_runner, RunConfig and export strategies (the rest of contrib.learn is not
built here).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> tf.contrib.learn.learn_runner.run.__name__
    'run'
"""

from dtf_notebook.estimator.learn import (
    Environment,
    Experiment,
    ExportStrategy,
    RunConfig,
    learn_runner,
    make_export_strategy,
)

__all__ = ["Environment", "Experiment", "ExportStrategy", "RunConfig", "learn_runner", "make_export_strategy"]
