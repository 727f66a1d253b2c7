"""The canned estimators: DNN, linear and wide-and-deep classifiers and regressors over feature columns.

Example:
    >>> from dtf_notebook.estimator.canned import DNNRegressor
    >>> DNNRegressor.__name__
    'DNNRegressor'
"""

from dtf_notebook.estimator.canned.dnn import DNNClassifier, DNNRegressor
from dtf_notebook.estimator.canned.dnn_linear_combined import DNNLinearCombinedClassifier, DNNLinearCombinedRegressor
from dtf_notebook.estimator.canned.linear import LinearClassifier, LinearRegressor

__all__ = [
    "DNNClassifier",
    "DNNLinearCombinedClassifier",
    "DNNLinearCombinedRegressor",
    "DNNRegressor",
    "LinearClassifier",
    "LinearRegressor",
]
