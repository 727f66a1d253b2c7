"""Session creators: where a monitored session gets a ``Session`` whose model is ready to run.

The chief's :class:`ChiefSessionCreator` restores the latest checkpoint or initialises the model; another
worker's :class:`WorkerSessionCreator` waits until the chief has done so. Both run the ops of a
:class:`~dtf_notebook.train.scaffold.Scaffold` through a
:class:`~dtf_notebook.train.session_manager.SessionManager`. Their ``max_wait_secs`` and
``recovery_wait_secs`` also bound how long a monitored session keeps re-creating sessions after a task of
the cluster died.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     v = tf.Variable(3.0)
    ...     creator = tf.train.ChiefSessionCreator(scaffold=tf.train.Scaffold())
    ...     with tf.train.MonitoredSession(session_creator=creator) as sess:
    ...         print(sess.run(v))
    3.0
"""

from __future__ import annotations

import abc
from typing import Any

from dtf_notebook.framework.graph import get_default_graph
from dtf_notebook.runtime.config import ConfigProto
from dtf_notebook.train.scaffold import Scaffold
from dtf_notebook.train.session_manager import SessionManager

__all__ = ["ChiefSessionCreator", "SessionCreator", "WorkerSessionCreator"]


class SessionCreator(abc.ABC):
    """Makes the session a monitored session runs on (TF1's ``tf.train.SessionCreator``).

    Attributes:
        max_wait_secs: How long a monitored session keeps re-creating sessions while tasks are unreachable.
        recovery_wait_secs: Pause between those attempts.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> class PlainSessions(tf.train.SessionCreator):
        ...     def create_session(self):
        ...         return tf.Session()
        >>> with tf.Graph().as_default():
        ...     two = tf.constant(2)
        ...     with tf.train.MonitoredSession(PlainSessions()) as sess:
        ...         print(sess.run(two))
        2
    """

    max_wait_secs: float = 7200
    recovery_wait_secs: float = 1

    @abc.abstractmethod
    def create_session(self) -> Any:
        """A new session, ready to run the model."""


class _ScaffoldSessionCreator(SessionCreator):
    """What both creators hold: a scaffold, a target, a config, and the session manager made from them.

    The session manager is made on first use, once the scaffold has been finalized and its ops exist.
    """

    def __init__(
        self,
        scaffold: Scaffold | None,
        master: str,
        config: ConfigProto | None,
        max_wait_secs: float,
        recovery_wait_secs: float,
    ) -> None:
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config
        self.max_wait_secs = max_wait_secs
        self.recovery_wait_secs = recovery_wait_secs
        self._session_manager: SessionManager | None = None

    def _get_session_manager(self) -> SessionManager:
        if self._session_manager is None:
            self._session_manager = SessionManager(
                local_init_op=self._scaffold.local_init_op,
                local_init_feed_dict=self._scaffold.local_init_feed_dict,
                ready_op=self._scaffold.ready_op,
                ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
                graph=get_default_graph(),
                recovery_wait_secs=self.recovery_wait_secs,
            )
        return self._session_manager


class ChiefSessionCreator(_ScaffoldSessionCreator):
    """Creates the chief's session: restores the latest checkpoint, or initialises the model.

    Args:
        scaffold: The ops to use (a default Scaffold if None); finalized on the first creation.
        master: The session target (``""`` for this process, ``zmq://host:port`` for a cluster task).
        config: ConfigProto of the session.
        checkpoint_dir: Directory whose latest checkpoint is restored.
        checkpoint_filename_with_path: A checkpoint file to restore instead.
        max_wait_secs: How long to keep re-creating the session while tasks are unreachable (after a crash).
        recovery_wait_secs: Pause between those attempts.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable(4.0)
        ...     sess = tf.train.ChiefSessionCreator().create_session()
        ...     print(sess.run(v))
        ...     sess.close()
        4.0
    """

    def __init__(
        self,
        scaffold: Scaffold | None = None,
        master: str = "",
        config: ConfigProto | None = None,
        checkpoint_dir: str | None = None,
        checkpoint_filename_with_path: str | None = None,
        max_wait_secs: float = 7200,
        recovery_wait_secs: float = 1,
    ) -> None:
        super().__init__(scaffold, master, config, max_wait_secs, recovery_wait_secs)
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path

    def create_session(self) -> Any:
        """A session whose model is restored from ``checkpoint_dir`` or initialised."""
        self._scaffold.finalize()
        return self._get_session_manager().prepare_session(
            self._master,
            saver=self._scaffold.saver,
            checkpoint_dir=self._checkpoint_dir,
            checkpoint_filename_with_path=self._checkpoint_filename_with_path,
            config=self._config,
            init_op=self._scaffold.init_op,
            init_feed_dict=self._scaffold.init_feed_dict,
            init_fn=self._scaffold.init_fn,
        )


class WorkerSessionCreator(_ScaffoldSessionCreator):
    """Creates a non-chief worker's session: waits until the chief has made the model ready.

    Args:
        scaffold: The ops to use (a default Scaffold if None); finalized on the first creation.
        master: The session target.
        config: ConfigProto of the session.
        max_wait_secs: How long to wait for the model to be ready before DeadlineExceededError.
        recovery_wait_secs: Seconds between readiness checks (TF1 used 30; 1 here).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable(1.0, name="w")
        ...     creator = tf.train.WorkerSessionCreator(max_wait_secs=0.05, recovery_wait_secs=0.01)
        ...     try:
        ...         creator.create_session()
        ...     except tf.errors.DeadlineExceededError as e:
        ...         print(e)
        Session was not ready after waiting 0.05 secs. Variables not initialized: w
    """

    def __init__(
        self,
        scaffold: Scaffold | None = None,
        master: str = "",
        config: ConfigProto | None = None,
        max_wait_secs: float = 30 * 60,
        recovery_wait_secs: float = 1,
    ) -> None:
        super().__init__(scaffold, master, config, max_wait_secs, recovery_wait_secs)

    def create_session(self) -> Any:
        """A session on a model the chief has made ready (waits up to ``max_wait_secs``)."""
        self._scaffold.finalize()
        return self._get_session_manager().wait_for_session(
            self._master, config=self._config, max_wait_secs=self.max_wait_secs
        )
