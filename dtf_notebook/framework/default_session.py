"""The default session stack: which session ``Tensor.eval`` and ``Operation.run`` use in this thread.

It lives with the graph API, as TF keeps it in ``framework/ops.py``: ``eval()`` and ``reset_default_graph()`` need
it, and a session (``dtf_notebook.runtime.session``, a higher layer) pushes itself here when it becomes the
default. The graph API never imports the session: it only calls ``run`` on what was pushed.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     get_default_session() is sess, run_in_default_session(tf.constant(2.0) * 3.0, None, None)
    (True, np.float32(6.0))
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["clear_default_session_stack", "default_session", "get_default_session", "run_in_default_session"]


class _SessionStack(threading.local):
    def __init__(self) -> None:
        self.stack: list[Any] = []


_sessions = _SessionStack()


def get_default_session() -> Any:
    """The innermost session entered with ``with sess:``/``as_default()`` in this thread (or None).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Session() as sess:
        ...     tf.get_default_session() is sess
        True
    """
    return _sessions.stack[-1] if _sessions.stack else None


@contextlib.contextmanager
def default_session(session: Any) -> Iterator[Any]:
    """Makes ``session`` the default session of this thread inside the block (``Session.as_default``).

    Example:
        >>> marker = object()
        >>> with default_session(marker):
        ...     get_default_session() is marker
        True
        >>> get_default_session() is marker
        False
    """
    _sessions.stack.append(session)
    try:
        yield session
    finally:
        if session in _sessions.stack:  # the innermost entry goes, when one session is entered twice
            _sessions.stack.reverse()
            _sessions.stack.remove(session)
            _sessions.stack.reverse()


def clear_default_session_stack() -> None:
    """Forgets every default session of this thread (``reset_default_graph`` does this).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess, sess.as_default():
        ...     clear_default_session_stack()
        ...     tf.get_default_session() is None
        True
    """
    _sessions.stack.clear()


def run_in_default_session(fetch: Any, feed_dict: Any, session: Any) -> Any:
    """Runs ``fetch`` in ``session`` or the default session (``Tensor.eval`` / ``Operation.run``).

    Raises:
        ValueError: there is no session to use, or it belongs to another graph.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     y = tf.constant(2.0) * 3.0
        ...     with sess.as_default():
        ...         print(run_in_default_session(y, None, None))
        6.0
    """
    session = session or get_default_session()
    if session is None:
        raise ValueError(
            "Cannot evaluate tensor using `eval()`: No default session is registered. Use `with "
            "sess.as_default()` or pass an explicit session to `eval(session=sess)`"
        )
    if fetch.graph is not session.graph:
        raise ValueError(
            "Cannot use the given session to evaluate tensor: the tensor's graph is different from the session's graph."
        )
    return session.run(fetch, feed_dict)
