"""``tf.logging``: TF1's logging functions and levels on the ``"tensorflow"`` Python logger.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> tf.logging.set_verbosity(tf.logging.INFO); tf.logging.get_verbosity()
    20
    >>> tf.logging.set_verbosity(tf.logging.WARN)
"""

from dtf_notebook.platform.tf_logging import (
    DEBUG,
    ERROR,
    FATAL,
    INFO,
    WARN,
    TaskLevelStatusMessage,
    debug,
    error,
    fatal,
    flush,
    get_verbosity,
    info,
    log,
    log_every_n,
    log_first_n,
    log_if,
    set_verbosity,
    vlog,
    warn,
    warning,
)

__all__ = [
    "DEBUG",
    "ERROR",
    "FATAL",
    "INFO",
    "WARN",
    "TaskLevelStatusMessage",
    "debug",
    "error",
    "fatal",
    "flush",
    "get_verbosity",
    "info",
    "log",
    "log_every_n",
    "log_first_n",
    "log_if",
    "set_verbosity",
    "vlog",
    "warn",
    "warning",
]
