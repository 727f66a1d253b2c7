"""``tf.data`` (TF1, graph mode): ``Dataset``, the file datasets, ``Iterator`` and ``experimental``.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     ds = tf.data.TFRecordDataset("train.tfrecord").map(lambda r: tf.strings.length(r)).batch(32)
    ...     tf.data.get_output_types(ds), tf.data.get_output_shapes(ds)
    (tf.int32, TensorShape([None]))
"""

from typing import Any

from dtf_notebook.data import experimental
from dtf_notebook.data.dataset_ops import AUTOTUNE, Dataset, DatasetV1
from dtf_notebook.data.iterator_ops import Iterator, make_initializable_iterator, make_one_shot_iterator
from dtf_notebook.data.readers import FixedLengthRecordDataset, TextLineDataset, TFRecordDataset
from dtf_notebook.data.structure import TensorSpec

__all__ = [
    "AUTOTUNE",
    "Dataset",
    "DatasetV1",
    "Iterator",
    "TextLineDataset",
    "TFRecordDataset",
    "FixedLengthRecordDataset",
    "TensorSpec",
    "experimental",
    "make_one_shot_iterator",
    "make_initializable_iterator",
    "get_output_types",
    "get_output_shapes",
    "get_output_classes",
]


def get_output_types(dataset_or_iterator: Any) -> Any:
    """The dtype structure of a dataset's or iterator's elements.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     get_output_types(tf.data.Dataset.from_tensors((1, "a")))
        (tf.int32, tf.string)
    """
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator: Any) -> Any:
    """The static shape structure of a dataset's or iterator's elements.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     get_output_shapes(tf.data.Dataset.range(3).batch(2))
        TensorShape([None])
    """
    return dataset_or_iterator.output_shapes


def get_output_classes(dataset_or_iterator: Any) -> Any:
    """The class structure of a dataset's or iterator's elements (``Tensor`` for each component).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     get_output_classes(tf.data.Dataset.range(3)).__name__
        'Tensor'
    """
    return dataset_or_iterator.output_classes
