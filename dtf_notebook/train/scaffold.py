"""``tf.train.Scaffold``: the ops a monitored session needs to initialise, check readiness, summarise and save.

A :class:`Scaffold` is given to the session creators of :mod:`dtf_notebook.train.session_creators` (and to
the summary and checkpoint hooks); :meth:`Scaffold.finalize` fills every piece not given from the graph's
collections, creating the TF1 defaults, then finalizes the graph.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     v = tf.Variable(1.0, name="v")
    ...     scaffold = tf.train.Scaffold(init_fn=lambda scaffold, sess: print("init_fn ran")).finalize()
    ...     with tf.Session() as sess:
    ...         _ = sess.run(scaffold.init_op)
    ...         scaffold.init_fn(sess)
    ...         print(sess.run(scaffold.ready_op))
    init_fn ran
    []
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from dtf_notebook.framework.graph import GraphKeys, add_to_collection, get_collection, get_default_graph
from dtf_notebook.ops import identity_ops, lookup_ops, resources, variables
from dtf_notebook.ops.array.concat_split import concat
from dtf_notebook.summary.summary_ops import merge_all
from dtf_notebook.train.saver import Saver

__all__ = ["Scaffold"]

_log = logging.getLogger(__name__)


class Scaffold:
    """The ops a training session needs -- init, readiness checks, summaries, saver -- taken or made.

    Pieces not given are picked from the graph's collections (``INIT_OP``, ``READY_OP``, ``SAVERS``, ...)
    by :meth:`finalize`, which creates and stores the defaults when a collection is empty, then finalizes
    the graph (no op can be added afterwards).

    Args:
        init_op: Initialises the model (default: the global variables' and shared resources' initializers).
        init_feed_dict: Feeds for ``init_op``.
        init_fn: Called as ``init_fn(scaffold, session)`` after ``init_op``.
        ready_op: 1-D string tensor naming what is uninitialised (default: the uninitialised variables and
            resources, concatenated).
        ready_for_local_init_op: Like ``ready_op``, over global variables and shared resources only: checked
            before ``local_init_op``.
        local_init_op: Initialises local variables, tables and local resources (default
            :meth:`default_local_init_op`).
        summary_op: Merged summaries (default ``tf.summary.merge_all()``).
        saver: Saves and restores the model (default a sharded ``Saver`` of all saveable variables).
        copy_from_scaffold: A scaffold whose pieces fill those not given here.
        local_init_feed_dict: Feeds for ``local_init_op``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default() as g:
        ...     v = tf.Variable(1.0, name="v")
        ...     scaffold = tf.train.Scaffold().finalize()
        >>> scaffold.init_op.type, g.get_collection(tf.GraphKeys.READY_OP) == [scaffold.ready_op], g.finalized
        ('NoOp', True, True)
    """

    def __init__(
        self,
        init_op: Any = None,
        init_feed_dict: dict | None = None,
        init_fn: Callable[[Scaffold, Any], Any] | None = None,
        ready_op: Any = None,
        ready_for_local_init_op: Any = None,
        local_init_op: Any = None,
        summary_op: Any = None,
        saver: Any = None,
        copy_from_scaffold: Scaffold | None = None,
        local_init_feed_dict: dict | None = None,
    ) -> None:
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")
            base = copy_from_scaffold
            init_op = _coalesce(init_op, base.init_op)
            init_feed_dict = _coalesce(init_feed_dict, base.init_feed_dict)
            init_fn = _coalesce(init_fn, base._user_init_fn)
            ready_op = _coalesce(ready_op, base.ready_op)
            ready_for_local_init_op = _coalesce(ready_for_local_init_op, base.ready_for_local_init_op)
            local_init_op = _coalesce(local_init_op, base.local_init_op)
            local_init_feed_dict = _coalesce(local_init_feed_dict, base.local_init_feed_dict)
            summary_op = _coalesce(summary_op, base.summary_op)
            saver = _coalesce(saver, base.saver)
        self._user_init_fn = init_fn
        self._init_fn = (lambda sess: init_fn(self, sess)) if init_fn else None
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._local_init_op = local_init_op
        self._local_init_feed_dict = local_init_feed_dict
        self._summary_op = summary_op
        self._saver = saver

    def finalize(self) -> Scaffold:
        """Fills every missing piece from the graph's collections (creating defaults) and finalizes the graph."""
        if self._init_op is None:
            self._init_op = Scaffold.get_or_default("init_op", GraphKeys.INIT_OP, _default_init_op)
        if self._ready_op is None:
            self._ready_op = Scaffold.get_or_default("ready_op", GraphKeys.READY_OP, _default_ready_op)
        if self._ready_for_local_init_op is None:
            self._ready_for_local_init_op = Scaffold.get_or_default(
                "ready_for_local_init_op", GraphKeys.READY_FOR_LOCAL_INIT_OP, _default_ready_for_local_init_op
            )
        if self._local_init_op is None:
            self._local_init_op = Scaffold.get_or_default(
                "local_init_op", GraphKeys.LOCAL_INIT_OP, Scaffold.default_local_init_op
            )
        if self._summary_op is None:
            self._summary_op = Scaffold.get_or_default("summary_op", GraphKeys.SUMMARY_OP, merge_all)
        if self._saver is None:
            self._saver = Scaffold.get_or_default(
                "saver", GraphKeys.SAVERS, lambda: Saver(sharded=True, allow_empty=True)
            )
        self._saver.build()
        get_default_graph().finalize()
        _log.info("Graph was finalized.")
        return self

    @property
    def init_fn(self) -> Callable[[Any], Any] | None:
        """``init_fn`` bound to this scaffold: called as ``init_fn(session)``."""
        return self._init_fn

    @property
    def init_op(self) -> Any:
        return self._init_op

    @property
    def ready_op(self) -> Any:
        return self._ready_op

    @property
    def ready_for_local_init_op(self) -> Any:
        return self._ready_for_local_init_op

    @property
    def local_init_op(self) -> Any:
        return self._local_init_op

    @property
    def local_init_feed_dict(self) -> dict | None:
        return self._local_init_feed_dict

    @property
    def summary_op(self) -> Any:
        return self._summary_op

    @property
    def saver(self) -> Any:
        return self._saver

    @property
    def init_feed_dict(self) -> dict | None:
        return self._init_feed_dict

    @staticmethod
    def get_or_default(arg_name: str, collection_key: str, default_constructor: Callable[[], Any]) -> Any:
        """The one item of ``collection_key``, or a new one from ``default_constructor`` (stored there).

        Raises:
            RuntimeError: the collection holds more than one item.

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     op = tf.train.Scaffold.get_or_default("init_op", "init_op", tf.no_op)
            ...     again = tf.train.Scaffold.get_or_default("init_op", "init_op", tf.no_op)
            >>> op is again
            True
        """
        elements = get_collection(collection_key)
        if elements:
            if len(elements) > 1:
                raise RuntimeError(
                    f'More than one item in the collection "{collection_key}". Please indicate which one to use '
                    f"by passing it to the tf.Scaffold constructor as:  tf.Scaffold({arg_name}=item to use)"
                )
            return elements[0]
        made = default_constructor()
        if made is not None:
            add_to_collection(collection_key, made)
        return made

    @staticmethod
    def default_local_init_op() -> Any:
        """Groups the initializers of the local variables, the tables and the local resources (as TF does).

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     op = tf.train.Scaffold.default_local_init_op()
            >>> op.type, sorted(i.name for i in op.control_inputs)
            ('NoOp', ['init', 'init_1', 'init_all_tables'])
        """
        return identity_ops.group(
            variables.local_variables_initializer(),
            lookup_ops.tables_initializer(),
            resources.initialize_resources(resources.local_resources()),
        )


def _default_init_op() -> Any:
    return identity_ops.group(
        variables.global_variables_initializer(),
        resources.initialize_resources(resources.shared_resources()),
        *get_collection("saved_model_initializers"),
    )


def _default_ready_op() -> Any:
    report = [variables.report_uninitialized_variables(), resources.report_uninitialized_resources()]
    return concat(report, 0)


def _default_ready_for_local_init_op() -> Any:
    report = [
        variables.report_uninitialized_variables(variables.global_variables()),
        resources.report_uninitialized_resources(resources.shared_resources()),
    ]
    return concat(report, 0)


def _coalesce(a: Any, b: Any) -> Any:
    return a if a is not None else b
