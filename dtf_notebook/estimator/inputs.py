"""``tf.estimator.inputs``: input functions over numpy arrays and pandas frames.

The returned ``input_fn`` builds a ``tf.data`` pipeline over the arrays (shuffled with a buffer of
``queue_capacity`` rows when asked, repeated ``num_epochs`` times, None = forever, batched with a smaller
last batch) and returns ``(features, labels)`` tensors from a one-shot iterator, so the input ends with
``OutOfRangeError`` after the last epoch, as TF1's queue-fed version does.

Example:
    >>> import numpy as np
    >>> import dtf_notebook.compat.v1 as tf
    >>> input_fn = numpy_input_fn({"x": np.arange(5.0)}, np.arange(5), batch_size=2, shuffle=False)
    >>> with tf.Graph().as_default():
    ...     features, labels = input_fn()
    ...     with tf.Session() as sess:
    ...         print(sess.run(features["x"]), sess.run(labels))
    [0. 1.] [2 3]
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook.data.dataset_ops import DatasetV1

__all__ = ["numpy_input_fn", "pandas_input_fn"]

_TARGET_KEY = "__target_key__"


def _length(name: str, value: Any) -> int:
    value = np.asarray(value)
    if value.ndim == 0:
        raise ValueError(f"{name} must have at least one dimension (a row per example), got a scalar")
    return int(value.shape[0])


def numpy_input_fn(
    x: Any,
    y: Any = None,
    batch_size: int = 128,
    num_epochs: int | None = 1,
    shuffle: bool | None = None,
    queue_capacity: int = 1000,
    num_threads: int = 1,
) -> Callable[[], Any]:
    """An ``input_fn`` giving batches of ``x`` (a dict of arrays, or one array) and ``y`` (array or dict).

    Args:
        x: Features: a dict of numpy arrays with the same first dimension, or one array.
        y: Labels: an array, a dict of arrays, or None.
        batch_size: Rows per batch (the last batch may be smaller).
        num_epochs: Passes over the data; None repeats forever.
        shuffle: Whether to shuffle rows (must be given).
        queue_capacity: The shuffle buffer's size in rows.
        num_threads: Accepted for TF's signature; the pipeline decides its own parallelism.

    Raises:
        ValueError: ``shuffle`` not a bool, mismatched lengths, or keys of ``x`` and ``y`` that collide.
        TypeError: ``x`` is neither a dict nor an array.

    Example:
        >>> import numpy as np
        >>> numpy_input_fn({"x": np.zeros(3)}, shuffle=None)
        Traceback (most recent call last):
        ValueError: shuffle must be provided explicitly as a bool, not None
    """
    if not isinstance(shuffle, bool):
        raise ValueError(f"shuffle must be provided explicitly as a bool, not {shuffle}")
    if isinstance(x, dict):
        features = collections.OrderedDict((k, np.asarray(v)) for k, v in x.items())
    elif isinstance(x, np.ndarray | list):
        features = np.asarray(x)
    else:
        raise TypeError(f"x must be a dict or array; got {type(x).__name__}")
    if isinstance(y, dict):
        labels: Any = collections.OrderedDict((k, np.asarray(v)) for k, v in y.items())
        if isinstance(x, dict):
            shared = sorted(set(features) & set(labels))
            if shared:
                raise ValueError(
                    f"{shared} duplicate keys are found in both x and y: {sorted(features)}, {sorted(labels)}"
                )
    else:
        labels = None if y is None else np.asarray(y)
    arrays = list(features.values()) if isinstance(features, dict) else [features]
    if isinstance(labels, dict):
        arrays += list(labels.values())
    elif labels is not None:
        arrays.append(labels)
    lengths = {_length("x" if i == 0 else "y", a) for i, a in enumerate(arrays)}
    if len(lengths) > 1:
        raise ValueError(
            "Length of tensors in x and y is mismatched. All elements in x and y must have the same "
            f"length. Lengths: {sorted(lengths)}"
        )
    if num_epochs is not None and num_epochs <= 0:
        raise ValueError(f"num_epochs must be None or positive, got {num_epochs}")

    def input_fn() -> Any:
        element = (features, labels) if labels is not None else features
        dataset = DatasetV1.from_tensor_slices(element)
        if shuffle:
            dataset = dataset.shuffle(queue_capacity)
        dataset = dataset.repeat(num_epochs).batch(batch_size)
        return dataset.make_one_shot_iterator().get_next()

    return input_fn


def pandas_input_fn(
    x: Any,
    y: Any = None,
    batch_size: int = 128,
    num_epochs: int | None = 1,
    shuffle: bool | None = None,
    queue_capacity: int = 1000,
    num_threads: int = 1,
    target_column: str = "target",
) -> Callable[[], Any]:
    """An ``input_fn`` over a pandas DataFrame ``x`` (a feature per column) and a Series ``y``.

    Raises:
        ValueError: ``shuffle`` not a bool, ``x`` and ``y`` with different indexes, or ``target_column``
            already a column of ``x``.

    Example (with pandas installed: ``pandas_input_fn(pd.DataFrame({"a": [1.0]}), pd.Series([0]), shuffle=False)``):
        >>> pandas_input_fn(None, shuffle=None)
        Traceback (most recent call last):
        ValueError: shuffle must be provided explicitly as a bool, not None
    """
    if not isinstance(shuffle, bool):
        raise ValueError(f"shuffle must be provided explicitly as a bool, not {shuffle}")
    if y is not None:
        if target_column in x:
            raise ValueError(
                f"Cannot use name {target_column} for target column: DataFrame already has a column "
                "with that name: {list(x.columns)}"
            )
        if not np.array_equal(np.asarray(x.index), np.asarray(y.index)):
            raise ValueError(f"Index for x and y are mismatched.\nIndex for x: {x.index}\nIndex for y: {y.index}\n")
    features = {str(column): x[column].to_numpy() for column in x.columns}
    labels = None if y is None else y.to_numpy()
    return numpy_input_fn(features, labels, batch_size, num_epochs, shuffle, queue_capacity, num_threads)
