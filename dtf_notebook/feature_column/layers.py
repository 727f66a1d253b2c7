"""``tf.feature_column.input_layer`` and ``linear_model``: a batch of features through a list of columns.

``input_layer`` concatenates the dense columns' tensors (``[batch, sum of sizes]``); ``linear_model`` sums a
weight per column entry (a ``weights`` variable per column, zero-initialised, sparse columns by
``safe_embedding_lookup_sparse``) plus ``bias_weights``. Both take the columns in the order of their names and
scope each column's variables under its name, as TF1 does, so checkpoints and variable names match TF's.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> from dtf_notebook.feature_column.dense import numeric_column
    >>> with tf.Graph().as_default():
    ...     net = input_layer({"b": [[1.0, 2.0]], "a": [3.0]}, [numeric_column("b", shape=[2]), numeric_column("a")])
    ...     with tf.Session() as sess:
    ...         print(sess.run(net))
    [[3. 1. 2.]]
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.feature_column.base import (
    CategoricalColumn,
    DenseColumn,
    LazyBuilder,
    normalize_feature_columns,
)
from dtf_notebook.framework import dtypes
from dtf_notebook.framework.graph import GraphKeys, get_collection
from dtf_notebook.ops.array.concat_split import concat
from dtf_notebook.ops.array.pack import stack
from dtf_notebook.ops.array.reshape import reshape
from dtf_notebook.ops.array.shape_ops import shape
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.init_ops import zeros_initializer
from dtf_notebook.ops.math.matmul import matmul
from dtf_notebook.ops.math.sums import add_n
from dtf_notebook.ops.nn.bias_add import bias_add
from dtf_notebook.ops.nn.embedding_safe import safe_embedding_lookup_sparse
from dtf_notebook.ops.partitioned_variables import PartitionedVariable
from dtf_notebook.ops.pure_variable_scope import get_variable_scope
from dtf_notebook.ops.sparse.structure import sparse_reshape
from dtf_notebook.ops.variable_scope import get_variable, variable_scope

__all__ = ["input_layer", "linear_model"]


def _weight_collections(weight_collections: Any) -> list[str]:
    collections = list(weight_collections or [])
    for key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES):
        if key not in collections:
            collections.append(key)
    return collections


def _check_batch_sizes(tensors: list, columns: list) -> None:
    expected, first = None, None
    for tensor, column in zip(tensors, columns, strict=True):
        size = tensor.shape.dims[0].value if tensor.shape.ndims else None
        if size is None:
            continue
        if expected is None:
            expected, first = size, column
        elif size != expected:
            raise ValueError(
                "Batch size (first dimension) of each feature must be same. Batch size of columns "
                f"({first.name}, {column.name}): ({expected}, {size})"
            )


def input_layer(
    features: dict[str, Any],
    feature_columns: Any,
    weight_collections: Any = None,
    trainable: bool = True,
    cols_to_vars: dict | None = None,
    cols_to_output_tensors: dict | None = None,
) -> Any:
    """The dense columns of ``features`` side by side: a float32 ``[batch, total size]`` tensor.

    Raises:
        ValueError: a column that is not dense (wrap a categorical column in ``embedding_column`` or
            ``indicator_column``), columns of one name, or features of different batch sizes.

    Example:
        >>> from dtf_notebook.feature_column.categorical import categorical_column_with_identity
        >>> input_layer({}, [categorical_column_with_identity("x", 2)])
        Traceback (most recent call last):
        ValueError: Items of feature_columns must be a _DenseColumn. You can wrap a categorical column with ...
    """
    feature_columns = normalize_feature_columns(feature_columns)
    for column in feature_columns:
        if not isinstance(column, DenseColumn):
            raise ValueError(
                "Items of feature_columns must be a _DenseColumn. You can wrap a categorical column with an "
                f"embedding_column or indicator_column. Given: {column}"
            )
    collections = _weight_collections(weight_collections)
    with variable_scope(None, default_name="input_layer", values=list(features.values())):
        builder = LazyBuilder(features)
        outputs, ordered = [], []
        for column in sorted(feature_columns, key=lambda c: c.name):
            ordered.append(column)
            with variable_scope(None, default_name=column._var_scope_name):
                tensor = column._get_dense_tensor(builder, weight_collections=collections, trainable=trainable)
                num_elements = column._variable_shape.num_elements()
                output = reshape(tensor, shape=(shape(tensor)[0], num_elements))
                outputs.append(output)
                if cols_to_vars is not None:
                    cols_to_vars[column] = get_collection(GraphKeys.GLOBAL_VARIABLES, scope=get_variable_scope().name)
                if cols_to_output_tensors is not None:
                    cols_to_output_tensors[column] = output
        _check_batch_sizes(outputs, ordered)
        return concat(outputs, 1)


def _rows(sparse: Any) -> Any:
    """``[batch, -1]`` for a SparseTensor: its entries per example flattened into one row."""
    return stack([sparse.dense_shape[0], constant(-1, dtypes.int64)])


def _weighted_sum(column: Any, builder: LazyBuilder, units: int, combiner: str, collections: list, trainable: bool):
    if isinstance(column, CategoricalColumn):
        pair = column._get_sparse_tensors(builder, weight_collections=collections, trainable=trainable)
        ids = sparse_reshape(pair.id_tensor, _rows(pair.id_tensor))
        weights = pair.weight_tensor
        if weights is not None:
            weights = sparse_reshape(weights, _rows(weights))
        variable = get_variable(
            name="weights",
            shape=(column._num_buckets, units),
            initializer=zeros_initializer(),
            trainable=trainable,
            collections=collections,
        )
        return safe_embedding_lookup_sparse(
            variable, ids, sparse_weights=weights, combiner=combiner, name="weighted_sum"
        )
    tensor = column._get_dense_tensor(builder, weight_collections=collections, trainable=trainable)
    num_elements = column._variable_shape.num_elements()
    tensor = reshape(tensor, shape=(shape(tensor)[0], num_elements))
    variable = get_variable(
        name="weights",
        shape=[num_elements, units],
        initializer=zeros_initializer(),
        trainable=trainable,
        collections=collections,
    )
    return matmul(tensor, variable, name="weighted_sum")


def linear_model(
    features: dict[str, Any],
    feature_columns: Any,
    units: int = 1,
    sparse_combiner: str = "sum",
    weight_collections: Any = None,
    trainable: bool = True,
    cols_to_vars: dict | None = None,
) -> Any:
    """A linear prediction ``[batch, units]`` from dense and categorical columns, with a bias.

    Raises:
        ValueError: a column neither dense nor categorical, an unknown ``sparse_combiner``, or columns of one
            name.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> from dtf_notebook.feature_column.dense import numeric_column
        >>> with tf.Graph().as_default():
        ...     _ = linear_model({"x": [1.0]}, [numeric_column("x")])
        ...     [v.op.name for v in tf.global_variables()]
        ['linear_model/x/weights', 'linear_model/bias_weights']
    """
    feature_columns = normalize_feature_columns(feature_columns)
    for column in feature_columns:
        if not isinstance(column, DenseColumn | CategoricalColumn):
            raise ValueError(
                f"Items of feature_columns must be either a _DenseColumn or _CategoricalColumn. Given: {column}"
            )
    if sparse_combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"sparse_combiner must be one of 'mean', 'sqrtn', 'sum'. Given: {sparse_combiner}")
    collections = _weight_collections(weight_collections)
    with variable_scope(None, default_name="linear_model", values=list(features.values())):
        builder = LazyBuilder(features)
        sums, ordered = [], []
        for column in sorted(feature_columns, key=lambda c: c.name):
            with variable_scope(None, default_name=column._var_scope_name):
                ordered.append(column)
                sums.append(_weighted_sum(column, builder, units, sparse_combiner, collections, trainable))
                if cols_to_vars is not None:
                    cols_to_vars[column] = get_collection(GraphKeys.GLOBAL_VARIABLES, scope=get_variable_scope().name)
        _check_batch_sizes(sums, ordered)
        no_bias = add_n(sums, name="weighted_sum_no_bias")
        bias = get_variable(
            "bias_weights", shape=[units], initializer=zeros_initializer(), trainable=trainable, collections=collections
        )
        if cols_to_vars is not None:
            cols_to_vars["bias"] = list(bias) if isinstance(bias, PartitionedVariable) else [bias]
        return bias_add(no_bias, bias, name="weighted_sum")
