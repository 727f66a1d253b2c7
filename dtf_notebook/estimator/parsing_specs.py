"""``tf.estimator.classifier_parse_example_spec`` and ``regressor_parse_example_spec``: the ``parse_example`` spec of
a canned estimator's features together with its label (and weight) column, for input pipelines that read
``tf.train.Example`` records.

Example:
    >>> from dtf_notebook.feature_column import numeric_column
    >>> spec = classifier_parse_example_spec([numeric_column("x")], label_key="y")
    >>> sorted(spec), spec["y"].shape
    (['x', 'y'], (1,))
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.feature_column import make_parse_example_spec, numeric_column
from dtf_notebook.feature_column.dense import _NumericColumn
from dtf_notebook.framework import dtypes
from dtf_notebook.ops.io.parsing_config import FixedLenFeature

__all__ = ["classifier_parse_example_spec", "regressor_parse_example_spec"]


def _with_label(
    feature_columns: Any, label_key: str, label: FixedLenFeature, weight_column: Any
) -> dict[str, FixedLenFeature]:
    spec = make_parse_example_spec(feature_columns)
    if label_key in spec:
        raise ValueError(f"label should not be used as feature. label_key: {label_key}, features: {spec.keys()}")
    spec[label_key] = label
    if weight_column is None:
        return spec
    if isinstance(weight_column, str):
        weight_column = numeric_column(weight_column)
    if not isinstance(weight_column, _NumericColumn):
        raise ValueError(
            "weight_column should be an instance of tf.feature_column.numeric_column. "
            f"Given type: {type(weight_column)} value: {weight_column}"
        )
    if weight_column.key in spec:
        raise ValueError(
            f"weight_column should not be used as feature. weight_column: {weight_column.key}, features: {spec.keys()}"
        )
    spec.update(weight_column._parse_example_spec)
    return spec


def classifier_parse_example_spec(
    feature_columns: Any,
    label_key: str,
    label_dtype: Any = dtypes.int64,
    label_default: Any = None,
    weight_column: Any = None,
) -> dict[str, Any]:
    """The features' spec with the label as a ``FixedLenFeature((1,), label_dtype, label_default)``.

    Raises:
        ValueError: the label or weight key is also a feature, or ``weight_column`` is not numeric.

    Example:
        >>> from dtf_notebook.feature_column import numeric_column
        >>> classifier_parse_example_spec([numeric_column("x")], "y", weight_column="w")["w"].dtype.name
        'float32'
    """
    label = FixedLenFeature((1,), dtypes.as_dtype(label_dtype), label_default)
    return _with_label(feature_columns, label_key, label, weight_column)


def regressor_parse_example_spec(
    feature_columns: Any,
    label_key: str,
    label_dtype: Any = dtypes.float32,
    label_default: Any = None,
    label_dimension: int = 1,
    weight_column: Any = None,
) -> dict[str, Any]:
    """The features' spec with the label as a ``FixedLenFeature((label_dimension,), label_dtype, label_default)``.

    Raises:
        ValueError: as :func:`classifier_parse_example_spec`.

    Example:
        >>> from dtf_notebook.feature_column import numeric_column
        >>> regressor_parse_example_spec([numeric_column("x")], "y", label_dimension=2)["y"].shape
        (2,)
    """
    label = FixedLenFeature((label_dimension,), dtypes.as_dtype(label_dtype), label_default)
    return _with_label(feature_columns, label_key, label, weight_column)
