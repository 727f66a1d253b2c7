"""``tf.contrib.learn``'s Experiment workflow: ``Experiment``, ``learn_runner.run`` and its ``RunConfig``.

Example:
    >>> from dtf_notebook.estimator.learn import learn_runner
    >>> callable(learn_runner.run)
    True
"""

from dtf_notebook.estimator.learn import learn_runner
from dtf_notebook.estimator.learn.experiment import Experiment
from dtf_notebook.estimator.learn.export_strategy import ExportStrategy, make_export_strategy
from dtf_notebook.estimator.learn.run_config import Environment, RunConfig

__all__ = ["Environment", "Experiment", "ExportStrategy", "RunConfig", "learn_runner", "make_export_strategy"]
