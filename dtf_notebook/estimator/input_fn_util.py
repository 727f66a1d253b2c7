"""What an Estimator makes of an ``input_fn``'s result: ``(features, labels)``, features alone, or a
``tf.data`` Dataset of either (read through an initializable iterator that a hook initialises).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     features, labels, hooks = features_and_labels(tf.data.Dataset.from_tensors(({"x": 1.0}, 2.0)))
    ...     sorted(features), labels.dtype.name, len(hooks)
    (['x'], 'float32', 1)
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.data.dataset_ops import DatasetV1
from dtf_notebook.train.session_run_hook import SessionRunHook

__all__ = ["features_and_labels", "DatasetInitializerHook"]


class DatasetInitializerHook(SessionRunHook):
    """Runs a Dataset iterator's initializer when the session is created (TF's ``_DatasetInitializerHook``).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> from dtf_notebook.train.monitored_session import MonitoredSession
        >>> with tf.Graph().as_default():
        ...     hook = DatasetInitializerHook(tf.data.Dataset.range(3).make_initializable_iterator())
        ...     element = hook.iterator.get_next()
        ...     with MonitoredSession(hooks=[hook]) as sess:
        ...         print(sess.run(element))
        0
    """

    def __init__(self, iterator: Any) -> None:
        self.iterator = iterator

    def begin(self) -> None:
        self._initializer = self.iterator.initializer

    def after_create_session(self, session: Any, coord: Any) -> None:
        session.run(self._initializer)


def features_and_labels(result: Any) -> tuple[Any, Any, list]:
    """``(features, labels, hooks)`` from what ``input_fn`` returned; labels None when it gave features only.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     features_and_labels(({"x": tf.constant(1.0)}, None))[2]
        []
    """
    hooks: list = []
    if isinstance(result, DatasetV1):
        iterator = result.make_initializable_iterator()
        hooks.append(DatasetInitializerHook(iterator))
        result = iterator.get_next()
    if isinstance(result, tuple | list):
        if len(result) != 2:
            raise ValueError(
                f"input_fn should return (features, labels) as a len 2 tuple, got a {len(result)}-tuple: {result!r}"
            )
        return result[0], result[1], hooks
    return result, None, hooks
