"""One line for a notebook learner whose re-run ``MonitoredTrainingSession`` cell starts training again from 0.

A ``MonitoredTrainingSession`` without ``checkpoint_dir`` initialises every variable, as in TF1: running its
cell again trains from the initial values, not from where the last run stopped, and nothing says so. In a
Jupyter kernel, each chief session records how far it trained its graph (the global step, else the number
of runs) on the graph and under the names of the graph's variables; a later chief session without
``checkpoint_dir`` (and no ``Scaffold(init_fn=...)``) for the same graph, or for a new graph with the same
variables (a cell that builds its graph and trains it), prints one line on standard error saying so and
what to do instead. Training itself is unchanged. Outside a kernel nothing is recorded or printed.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default() as g:
    ...     step = tf.train.get_or_create_global_step()
    ...     train_op = tf.assign_add(step, 1)
    ...     with tf.train.MonitoredTrainingSession(hooks=[TrainingRecordHook(), tf.train.StopAtStepHook(5)]) as s:
    ...         while not s.should_stop():
    ...             _ = s.run(train_op)
    ...     print(restart_notice(g).split(";")[0])
    dtf_notebook: an earlier MonitoredTrainingSession in this kernel trained this graph to global step 5
"""

from __future__ import annotations

import collections
import sys
import threading
from typing import Any

from dtf_notebook.framework.graph import Graph, GraphKeys, get_default_graph
from dtf_notebook.frontend import jupyter_kernel
from dtf_notebook.train import training_util
from dtf_notebook.train.session_run_hook import SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues

__all__ = ["TrainingRecordHook", "restart_notice", "watch_reruns"]

_KEY = "trained_by_monitored_session"  # in graph._extra: how far chief sessions trained the graph
_MAX_NAMED = 64  # variable-name sets remembered (a kernel may build many graphs)
_by_names: collections.OrderedDict[frozenset[str], str] = collections.OrderedDict()
_lock = threading.Lock()


def _variable_names(graph: Graph) -> frozenset[str]:
    return frozenset(v.op.name for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES))


class TrainingRecordHook(SessionRunHook):
    """Records, after each run, how far this session trained its graph (read by :func:`restart_notice`).

    Example:
        >>> TrainingRecordHook().runs
        0
    """

    def __init__(self) -> None:
        self.runs = 0

    def begin(self) -> None:
        self._graph = get_default_graph()
        self._step = training_util.get_global_step(self._graph)
        self._names = _variable_names(self._graph)
        self.runs = 0

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        return None if self._step is None else SessionRunArgs(self._step)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        self.runs += 1
        if self._step is None:
            how_far = f"for {self.runs} run{'s' if self.runs != 1 else ''}"
        else:
            how_far = f"to global step {int(run_values.results)}"
        self._graph._extra[_KEY] = how_far
        if self._names:
            with _lock:
                _by_names[self._names] = how_far
                _by_names.move_to_end(self._names)
                while len(_by_names) > _MAX_NAMED:
                    _by_names.popitem(last=False)


def restart_notice(graph: Graph) -> str | None:
    """The line telling that a new session for ``graph`` starts from the initial values although an earlier
    one trained it (or a graph with the same variables), or None when none did.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> restart_notice(tf.Graph()) is None
        True
    """
    how_far = graph._extra.get(_KEY)
    what = "this graph"
    if how_far is None:
        names = _variable_names(graph)
        with _lock:
            how_far = _by_names.get(names) if names else None
        what = "a graph with these variables"
    if how_far is None:
        return None
    return (
        f"dtf_notebook: an earlier MonitoredTrainingSession in this kernel trained {what} {how_far}; this one has "
        "no checkpoint_dir, so it starts again from the variables' initial values (as TF1 does). To continue "
        "where training stopped, give both sessions checkpoint_dir=..., or keep one tf.Session and call "
        "sess.run again."
    )


def watch_reruns(checkpoint_dir: str | None, scaffold: Any) -> list[SessionRunHook]:
    """What a chief ``MonitoredTrainingSession`` does about re-runs: in a Jupyter kernel, prints
    :func:`restart_notice` when the session will start from the initial values (no ``checkpoint_dir``, no
    ``scaffold.init_fn``) and returns a :class:`TrainingRecordHook` to add; elsewhere nothing.

    Example:
        >>> watch_reruns(None, None)  # no kernel here
        []
    """
    if not jupyter_kernel():
        return []
    if not checkpoint_dir and getattr(scaffold, "init_fn", None) is None:
        notice = restart_notice(get_default_graph())
        if notice is not None:
            print(notice, file=sys.stderr)
    return [TrainingRecordHook()]
