"""``tf.estimator.WarmStartSettings`` and ``warm_start``: variables that start from another model's checkpoint.

Warm-starting replaces the initializers of the chosen variables by reads from the checkpoint
(``init_from_checkpoint``), so it only matters when training starts without a checkpoint of its own.

Example:
    >>> settings("/tmp/previous_model").vars_to_warm_start
    '.*'
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from dtf_notebook.framework import graph as ops
from dtf_notebook.ops.variables import Variable
from dtf_notebook.platform import tf_logging as logging
from dtf_notebook.train.checkpoint_init import init_from_checkpoint

__all__ = ["WarmStartSettings", "VocabInfo", "warm_start", "settings"]


class VocabInfo(NamedTuple):
    """A vocabulary change between checkpoints (``tf.estimator.VocabInfo``); remapping is not supported here.

    Example:
        >>> VocabInfo("new.txt", 3, 0, "old.txt").new_vocab_size
        3
    """

    new_vocab: str
    new_vocab_size: int
    num_oov_buckets: int
    old_vocab: str
    old_vocab_size: int = -1
    backup_initializer: Any = None
    axis: int = 0


class WarmStartSettings(NamedTuple):
    """Which variables start from which checkpoint (``tf.estimator.WarmStartSettings``).

    Args:
        ckpt_to_initialize_from: A checkpoint prefix or a directory holding checkpoints.
        vars_to_warm_start: A regular expression over the trainable variables' names (default all of them),
            a list of expressions over the global variables, a list of variables, or None.
        var_name_to_vocab_info: Vocabulary remapping; not supported here (must be empty).
        var_name_to_prev_var_name: Variables whose name in the checkpoint differs.

    Example:
        >>> WarmStartSettings("/tmp/m", vars_to_warm_start="dense/.*").vars_to_warm_start
        'dense/.*'
    """

    ckpt_to_initialize_from: str
    vars_to_warm_start: Any = ".*"
    var_name_to_vocab_info: Any = None
    var_name_to_prev_var_name: Any = None


def settings(warm_start_from: Any) -> WarmStartSettings | None:
    """The :class:`WarmStartSettings` an Estimator's ``warm_start_from`` means (a path means all trainables).

    Raises:
        ValueError: ``warm_start_from`` is neither a path nor WarmStartSettings.

    Example:
        >>> settings(None) is None
        True
    """
    if warm_start_from is None:
        return None
    if isinstance(warm_start_from, str | bytes):
        path = warm_start_from.decode() if isinstance(warm_start_from, bytes) else warm_start_from
        return WarmStartSettings(ckpt_to_initialize_from=path)
    if isinstance(warm_start_from, WarmStartSettings):
        return warm_start_from
    raise ValueError(f"warm_start_from must be a string or a WarmStartSettings, instead got {type(warm_start_from)}")


def _infer_var_name(var: Any) -> str:
    name = var[0].op.name if isinstance(var, list) else var.op.name
    return re.sub(r"/part_\d+$", "", name)


def _grouped_variables(vars_to_warm_start: Any) -> dict[str, list]:
    if isinstance(vars_to_warm_start, str):
        found = ops.get_collection(ops.GraphKeys.TRAINABLE_VARIABLES, scope=vars_to_warm_start)
    elif isinstance(vars_to_warm_start, list):
        if all(isinstance(v, str) for v in vars_to_warm_start):
            found = []
            for pattern in vars_to_warm_start:
                found += ops.get_collection(ops.GraphKeys.GLOBAL_VARIABLES, scope=pattern)
        elif all(isinstance(v, Variable) for v in vars_to_warm_start):
            found = list(vars_to_warm_start)
        else:
            raise ValueError(
                "If `vars_to_warm_start` is a list, it must be all `Variable` or all `str`.  Given types are "
                f"{[type(v) for v in vars_to_warm_start]}"
            )
    elif vars_to_warm_start is None:
        found = []
    else:
        raise ValueError(f"`vars_to_warm_start must be a `list` or `str`.  Given type is {type(vars_to_warm_start)}")
    grouped: dict[str, list] = {}
    for var in found:
        grouped.setdefault(_infer_var_name(var), []).append(var)
    return grouped


def warm_start(
    ckpt_to_initialize_from: Any,
    vars_to_warm_start: Any = ".*",
    var_name_to_vocab_info: Any = None,
    var_name_to_prev_var_name: Any = None,
) -> None:
    """Makes the chosen variables of the default graph start from ``ckpt_to_initialize_from``.

    Also takes a :class:`WarmStartSettings` as its only argument.

    Raises:
        ValueError: vocabulary remapping was asked for, or a renamed variable is not among those chosen.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.get_variable("v", initializer=3.0)
        ...     with tf.Session() as sess:
        ...         sess.run(v.initializer)
        ...         _ = tf.train.Saver().save(sess, "memory://doc/warm/model")
        >>> with tf.Graph().as_default():
        ...     v = tf.get_variable("v", initializer=0.0)
        ...     warm_start("memory://doc/warm/model")
        ...     with tf.Session() as sess:
        ...         sess.run(v.initializer)
        ...         print(sess.run(v))
        3.0
    """
    if isinstance(ckpt_to_initialize_from, WarmStartSettings):
        ckpt_to_initialize_from, vars_to_warm_start, var_name_to_vocab_info, var_name_to_prev_var_name = (
            ckpt_to_initialize_from
        )
    if var_name_to_vocab_info:
        raise ValueError(
            "var_name_to_vocab_info (vocabulary remapping when warm-starting) is not supported here: "
            f"{sorted(var_name_to_vocab_info)}"
        )
    logging.info("Warm-starting from: %s", ckpt_to_initialize_from)
    renames = dict(var_name_to_prev_var_name or {})
    grouped = _grouped_variables(vars_to_warm_start)
    for var_name in sorted(grouped):
        variables = grouped[var_name]
        target: Any = variables[0] if len(variables) == 1 else variables
        init_from_checkpoint(ckpt_to_initialize_from, {renames.pop(var_name, var_name): target})
    if renames:
        raise ValueError(
            "You provided the following variables in var_name_to_prev_var_name that were not used: "
            f"{sorted(renames)}.  Perhaps you misspelled them?  Here is the list of viable variable names: "
            f"{sorted(grouped)}"
        )
    logging.info("Warm-started %d variables.", len(grouped))
