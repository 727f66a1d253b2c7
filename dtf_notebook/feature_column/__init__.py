"""TF1's feature columns (``tf.feature_column``): how raw features become a model's dense input or the ids of a
linear model, with TF's variable names, lookup tables and hashes.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> color = categorical_column_with_vocabulary_list("color", ["red", "green"])
    >>> with tf.Graph().as_default():
    ...     net = input_layer({"color": [["green"], ["blue"]]}, [indicator_column(color)])
    ...     with tf.Session() as sess:
    ...         sess.run(tf.tables_initializer())
    ...         print(sess.run(net))
    [[0. 1.]
     [0. 0.]]
"""

from dtf_notebook.feature_column.base import CategoricalColumn, DenseColumn, FeatureColumn, make_parse_example_spec
from dtf_notebook.feature_column.categorical import (
    categorical_column_with_hash_bucket,
    categorical_column_with_identity,
    categorical_column_with_vocabulary_file,
    categorical_column_with_vocabulary_list,
)
from dtf_notebook.feature_column.dense import bucketized_column, embedding_column, indicator_column, numeric_column
from dtf_notebook.feature_column.layers import input_layer, linear_model

__all__ = [
    "CategoricalColumn",
    "DenseColumn",
    "FeatureColumn",
    "bucketized_column",
    "categorical_column_with_hash_bucket",
    "categorical_column_with_identity",
    "categorical_column_with_vocabulary_file",
    "categorical_column_with_vocabulary_list",
    "embedding_column",
    "indicator_column",
    "input_layer",
    "linear_model",
    "make_parse_example_spec",
    "numeric_column",
]
