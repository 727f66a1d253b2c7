"""``tf.estimator``: Estimator, EstimatorSpec, ModeKeys, RunConfig, train_and_evaluate and the canned models.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> tf.estimator.ModeKeys.TRAIN
    'train'
"""

from dtf_notebook.compat.v1.estimator import export, inputs
from dtf_notebook.estimator import *  # noqa: F403
