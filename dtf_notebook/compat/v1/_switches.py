"""TF's behavior switches (``tf.disable_v2_behavior()``, ``tf.disable_eager_execution()``, ...), as seen from a
runtime that only has TF1's graph mode.

Scripts written for TF1 under TF2 begin by switching the TF2 behaviors off; here those calls are accepted and
change nothing, and the queries answer as TF1 graph mode does. Switching eager execution or the whole of TF2's
behavior on is an error that says so. Switching on one of TF2's finer behaviors (resource variables, control flow
v2, tensor equality, the v2 ``TensorShape``) is accepted with a warning, since the program then still runs with
TF1's semantics for it.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> tf.disable_v2_behavior()
    >>> tf.executing_eagerly(), tf.resource_variables_enabled(), tf.control_flow_v2_enabled()
    (False, False, False)
"""

from __future__ import annotations

import warnings
from typing import Any

__all__ = [
    "disable_v2_behavior",
    "enable_v2_behavior",
    "disable_eager_execution",
    "enable_eager_execution",
    "executing_eagerly",
    "executing_eagerly_outside_functions",
    "disable_resource_variables",
    "enable_resource_variables",
    "resource_variables_enabled",
    "disable_control_flow_v2",
    "enable_control_flow_v2",
    "control_flow_v2_enabled",
    "disable_tensor_equality",
    "enable_tensor_equality",
    "disable_v2_tensorshape",
    "enable_v2_tensorshape",
]

_GRAPH_ONLY = (
    "dtf_notebook runs TensorFlow 1's graph mode only (graphs run by tf.Session); {what} is not available. "
    "Build a graph and run it in a session, as TF1 programs do."
)


def _keeps_tf1(what: str) -> None:
    warnings.warn(f"{what} has no effect: dtf_notebook keeps TensorFlow 1's graph-mode semantics for it.", stacklevel=3)


def disable_v2_behavior() -> None:
    """Switches TF2's behaviors off: accepted, since only TF1's graph mode exists here.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> tf.disable_v2_behavior()
    """


def enable_v2_behavior() -> None:
    """TF2's behavior (eager execution first of all) does not exist here.

    Raises:
        RuntimeError: always, saying that only graph mode is available.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> tf.enable_v2_behavior()
        Traceback (most recent call last):
            ...
        RuntimeError: dtf_notebook runs TensorFlow 1's graph mode only (graphs run by tf.Session); TF2 behavior (tf.enable_v2_behavior) is not available. Build a graph and run it in a session, as TF1 programs do.
    """  # noqa: E501 - the doctest must show the whole message
    raise RuntimeError(_GRAPH_ONLY.format(what="TF2 behavior (tf.enable_v2_behavior)"))


def disable_eager_execution() -> None:
    """Switches eager execution off: accepted, since graphs are the only mode here.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> tf.disable_eager_execution()
    """


def enable_eager_execution(config: Any = None, device_policy: Any = None, execution_mode: Any = None) -> None:
    """Eager execution does not exist here.

    Raises:
        RuntimeError: always, saying that only graph mode is available.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> try:
        ...     tf.enable_eager_execution()
        ... except RuntimeError as e:
        ...     print(str(e).split(";")[0])
        dtf_notebook runs TensorFlow 1's graph mode only (graphs run by tf.Session)
    """
    raise RuntimeError(_GRAPH_ONLY.format(what="eager execution (tf.enable_eager_execution)"))


def executing_eagerly() -> bool:
    """False: ops are always added to a graph.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> tf.executing_eagerly()
        False
    """
    return False


def executing_eagerly_outside_functions() -> bool:
    """False: there is no eager context outside functions either.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> tf.executing_eagerly_outside_functions()
        False
    """
    return False


def disable_resource_variables() -> None:
    """Makes ``tf.Variable`` a TF1 ref variable: accepted, since variables here always are.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> tf.disable_resource_variables()
    """


def enable_resource_variables() -> None:
    """Accepted with a warning: variables stay TF1 ref variables.

    Example:
        >>> import warnings
        >>> import dtf_notebook.compat.v1 as tf
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     tf.enable_resource_variables()
        >>> "no effect" in str(caught[0].message)
        True
    """
    _keeps_tf1("tf.enable_resource_variables()")


def resource_variables_enabled() -> bool:
    """False: ``tf.Variable`` makes TF1 ref variables.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> tf.resource_variables_enabled()
        False
    """
    return False


def disable_control_flow_v2() -> None:
    """Selects TF1's control flow (Switch/Merge, Enter/Exit frames): accepted, since it is the only one here.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> tf.disable_control_flow_v2()
    """


def enable_control_flow_v2() -> None:
    """Accepted with a warning: ``tf.cond`` and ``tf.while_loop`` keep building TF1's control-flow ops.

    Example:
        >>> import warnings
        >>> import dtf_notebook.compat.v1 as tf
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     tf.enable_control_flow_v2()
    """
    _keeps_tf1("tf.enable_control_flow_v2()")


def control_flow_v2_enabled() -> bool:
    """False: control flow is TF1's.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> tf.control_flow_v2_enabled()
        False
    """
    return False


def disable_tensor_equality() -> None:
    """Keeps TF1's ``==`` on tensors (identity, so tensors can be dict keys): accepted, it is the only one here.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> tf.disable_tensor_equality()
    """


def enable_tensor_equality() -> None:
    """Accepted with a warning: ``==`` on tensors keeps TF1's meaning (identity).

    Example:
        >>> import warnings
        >>> import dtf_notebook.compat.v1 as tf
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     tf.enable_tensor_equality()
    """
    _keeps_tf1("tf.enable_tensor_equality()")


def disable_v2_tensorshape() -> None:
    """Keeps TF1's ``TensorShape`` (indexing gives ``Dimension``s): accepted, it is the only one here.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> tf.disable_v2_tensorshape()
    """


def enable_v2_tensorshape() -> None:
    """Accepted with a warning: ``TensorShape`` keeps TF1's behavior.

    Example:
        >>> import warnings
        >>> import dtf_notebook.compat.v1 as tf
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     tf.enable_v2_tensorshape()
    """
    _keeps_tf1("tf.enable_v2_tensorshape()")
