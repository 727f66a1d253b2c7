"""TF1's high-level training API: ``tf.estimator`` (Estimator, RunConfig, train_and_evaluate, canned models) and
``tf.contrib.learn``'s Experiment, built on ``train/``'s MonitoredTrainingSession and hooks.

Example:
    >>> from dtf_notebook.estimator import ModeKeys
    >>> ModeKeys.PREDICT
    'infer'
"""

from dtf_notebook.estimator.canned import (
    DNNClassifier,
    DNNLinearCombinedClassifier,
    DNNLinearCombinedRegressor,
    DNNRegressor,
    LinearClassifier,
    LinearRegressor,
)
from dtf_notebook.estimator.estimator import Estimator
from dtf_notebook.estimator.exporter import BestExporter, Exporter, FinalExporter, LatestExporter
from dtf_notebook.estimator.model_fn import EstimatorSpec, ModeKeys
from dtf_notebook.estimator.parsing_specs import classifier_parse_example_spec, regressor_parse_example_spec
from dtf_notebook.estimator.run_config import RunConfig, TaskType
from dtf_notebook.estimator.training import EvalSpec, TrainSpec, train_and_evaluate
from dtf_notebook.estimator.warm_starting import VocabInfo, WarmStartSettings

__all__ = [
    "DNNClassifier",
    "DNNLinearCombinedClassifier",
    "DNNLinearCombinedRegressor",
    "DNNRegressor",
    "LinearClassifier",
    "LinearRegressor",
    "BestExporter",
    "Estimator",
    "Exporter",
    "FinalExporter",
    "LatestExporter",
    "EstimatorSpec",
    "EvalSpec",
    "ModeKeys",
    "RunConfig",
    "TaskType",
    "TrainSpec",
    "VocabInfo",
    "WarmStartSettings",
    "classifier_parse_example_spec",
    "regressor_parse_example_spec",
    "train_and_evaluate",
]
