"""Moving averages: ``tf.train.ExponentialMovingAverage`` and TF1's ``assign_moving_average``.

Built from graph ops exactly as TF1's ``moving_averages.py`` builds them, so the averages, their variable
names (``<var>/ExponentialMovingAverage``), the ``MOVING_AVERAGE_VARIABLES`` collection and the values after
each update are TF's: ``avg -= (avg - value) * (1 - decay)``, with ``decay = min(decay, (1 + n) / (10 + n))``
when ``num_updates`` is given, and the zero-debiased form (Adam's bias correction) for tensors averaged with
``zero_debias=True``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable(0.0, name="w")
    ...     ema = tf.train.ExponentialMovingAverage(decay=0.5)
    ...     with tf.control_dependencies([w.assign(4.0)]):
    ...         update = ema.apply([w])
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         sess.run(update)
    ...         print(ema.average(w).op.name, sess.run(ema.average(w)))
    w/ExponentialMovingAverage 2.0
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import GraphKeys, add_to_collection, get_default_graph, name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import array_ops, identity_ops, init_ops, math_ops, state_ops, variable_scope
from dtf_notebook.ops.control_flow.cond import cond
from dtf_notebook.ops.variables import (
    Variable,
    global_variables,
    is_variable_initialized,
    moving_average_variables,
    trainable_variables,
)
from dtf_notebook.train.optimizer import _create_slot

__all__ = ["ExponentialMovingAverage", "assign_moving_average", "weighted_moving_average"]

_FLOAT_TYPES = (dtypes.bfloat16, dtypes.float16, dtypes.float32, dtypes.float64)
_VARIABLE_OPS = ("Variable", "VariableV2", "VarHandleOp")


def assign_moving_average(
    variable: Variable, value: Any, decay: Any, zero_debias: bool = True, name: str | None = None
) -> Tensor:
    """``variable -= (variable - value) * (1 - decay)``; returns the updated value.

    With ``zero_debias`` the average is kept in a ``biased`` variable next to ``variable`` and divided by
    ``1 - decay^t`` (``t`` counted in ``local_step``), so that an average starting at zero is not biased
    towards zero.

    Args:
        variable: The float variable holding the average.
        value: The new value, of ``variable``'s shape.
        decay: A float or scalar tensor, usually close to 1.
        zero_debias: Correct the bias of an average started at zero.
        name: Name scope of the ops (default ``AssignMovingAvg``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     avg = tf.Variable(0.0, name="avg")
        ...     update = assign_moving_average(avg, 2.0, 0.9, zero_debias=True)
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print(round(float(sess.run(update)), 6))
        2.0
    """
    with name_scope(name, "AssignMovingAvg", [variable, value, decay]) as scope:
        decay = convert_to_tensor(1.0 - decay, name="decay")
        if decay.dtype is not variable.dtype.base_dtype:
            decay = math_ops.cast(decay, variable.dtype.base_dtype)
        if zero_debias:
            return _zero_debias(variable, value, decay)
        return state_ops.assign_sub(variable, (variable - value) * decay, name=scope)


def _unique_in_scope(name: str) -> str:
    """``name``, or ``name_1``, ``name_2`` ... when a global variable of the current variable scope has it."""
    scope = variable_scope.get_variable_scope()
    if scope.reuse:
        return name
    taken = {v.op.name for v in global_variables(scope.name)}
    full = f"{scope.name}/{name}"
    if full not in taken:
        return name
    i = 1
    while f"{full}_{i}" in taken:
        i += 1
    return f"{name}_{i}"


def _zero_debias(unbiased: Variable, value: Any, decay: Tensor) -> Tensor:
    """TF1's zero-debiased update: ``biased`` and ``local_step`` variables next to ``unbiased``."""
    graph = get_default_graph()
    with variable_scope.variable_scope(unbiased.op.name, values=[unbiased, value, decay]):
        with graph.control_dependencies(None), graph.colocate_with(unbiased):
            biased = variable_scope.get_variable(
                _unique_in_scope("biased"),
                initializer=init_ops.zeros_initializer(),
                shape=unbiased.get_shape(),
                dtype=unbiased.dtype.base_dtype,
                trainable=False,
            )
            local_step = variable_scope.get_variable(
                _unique_in_scope("local_step"),
                shape=[],
                dtype=unbiased.dtype.base_dtype,
                initializer=init_ops.zeros_initializer(),
                trainable=False,
            )
    update_biased = state_ops.assign_sub(biased, (biased - value) * decay)
    update_local_step = local_step.assign_add(1)
    bias_factor = 1 - math_ops.pow(1.0 - decay, update_local_step)
    return state_ops.assign(unbiased, update_biased / bias_factor, name=graph.get_name_scope() + "/")


def weighted_moving_average(
    value: Any, decay: Any, weight: Any, truediv: bool = True, collections: Any = None, name: str | None = None
) -> Tensor:
    """The moving average of ``value * weight`` over that of ``weight`` (variables ``value_x_weight``, ``weight``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     avg = weighted_moving_average(tf.constant(3.0), 0.5, tf.constant(2.0))
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print(sess.run(avg))
        3.0
    """
    if collections is None:
        collections = [GraphKeys.GLOBAL_VARIABLES]
    value, weight = convert_to_tensor(value), convert_to_tensor(weight)
    with variable_scope.variable_scope(name, "WeightedMovingAvg", [value, weight, decay]) as scope:
        value_x_weight_var = variable_scope.get_variable(
            "value_x_weight",
            shape=value.get_shape(),
            dtype=value.dtype,
            initializer=init_ops.zeros_initializer(),
            trainable=False,
            collections=collections,
        )
        weight_var = variable_scope.get_variable(
            "weight",
            shape=weight.get_shape(),
            dtype=weight.dtype,
            initializer=init_ops.zeros_initializer(),
            trainable=False,
            collections=collections,
        )
        numerator = assign_moving_average(value_x_weight_var, value * weight, decay, zero_debias=False)
        denominator = assign_moving_average(weight_var, weight, decay, zero_debias=False)
        if truediv:
            return math_ops.truediv(numerator, denominator, name=scope.name)
        return math_ops.divide(numerator, denominator, name=scope.name)


class ExponentialMovingAverage:
    """Keeps a moving average of variables (or tensors), updated by the op :meth:`apply` returns.

    Args:
        decay: The decay (a float or scalar tensor, e.g. 0.999).
        num_updates: Optional step count; the decay is then ``min(decay, (1 + n) / (10 + n))``.
        zero_debias: Debias the averages of tensors (not variables), which start at zero.
        name: Suffix of the average variables and name scope of the update op.

    Example:
        >>> import dtf_notebook as tf
        >>> tf.train.ExponentialMovingAverage(0.99, name="EMA").name
        'EMA'
    """

    def __init__(
        self,
        decay: Any,
        num_updates: Any = None,
        zero_debias: bool = False,
        name: str = "ExponentialMovingAverage",
    ) -> None:
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages: dict[Any, Variable] = {}

    @property
    def name(self) -> str:
        """The name of the averages (``<var>/<name>``) and of the update op.

        Example:
            >>> ExponentialMovingAverage(0.9).name
            'ExponentialMovingAverage'
        """
        return self._name

    def apply(self, var_list: Any = None) -> Any:
        """Creates the averages of ``var_list`` (default: the trainable variables) and returns the op updating them.

        A variable's average starts at the variable's value (its initial value when it is not initialized yet)
        and the variable joins ``MOVING_AVERAGE_VARIABLES``; a tensor's average starts at zero. Calling
        ``apply`` again for the same variable reuses its average.

        Raises:
            TypeError: a variable is not of a float type.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     w = tf.Variable([1.0, 2.0], name="w")
            ...     update = tf.train.ExponentialMovingAverage(0.9).apply([w])
            ...     update.name, [v.op.name for v in tf.moving_average_variables()]
            ('ExponentialMovingAverage', ['w'])
        """
        if var_list is None:
            var_list = trainable_variables()
        var_list = list(var_list)
        graph = get_default_graph()
        zero_debias_true: set[int] = set()
        for var in var_list:
            if var.dtype.base_dtype not in _FLOAT_TYPES:
                raise TypeError(f"The variables must be half, float, or double: {var.name}")
            if var in self._averages:
                continue
            with graph.control_dependencies(None):
                if isinstance(var, Variable):
                    with graph.device(var.device):
                        initialized_value = cond(
                            is_variable_initialized(var), var.read_value, lambda v=var: v.initial_value
                        )
                    avg = _create_slot(var, lambda value=initialized_value: value, self.name)
                    add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, var)
                else:
                    avg = _create_slot(
                        var,
                        lambda t=var: _zeros_like_static(t),
                        self.name,
                        colocate=var.op.type in _VARIABLE_OPS,
                    )
                    if self._zero_debias:
                        zero_debias_true.add(id(avg))
            self._averages[var] = avg
        with name_scope(self.name) as scope:
            decay = convert_to_tensor(self._decay, dtype=dtypes.float32, name="decay")
            if self._num_updates is not None:
                num_updates = math_ops.cast(self._num_updates, dtypes.float32, name="num_updates")
                decay = math_ops.minimum(decay, (1.0 + num_updates) / (10.0 + num_updates))
            updates = []
            for var in var_list:
                avg = self._averages[var]
                updates.append(assign_moving_average(avg, var, decay, id(avg) in zero_debias_true))
            return identity_ops.group(*updates, name=scope)

    def average(self, var: Any) -> Variable | None:
        """The variable holding the average of ``var``, or None when :meth:`apply` has not seen ``var``.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     w = tf.Variable(1.0, name="w")
            ...     ExponentialMovingAverage(0.9).average(w) is None
            True
        """
        return self._averages.get(var)

    def average_name(self, var: Any) -> str:
        """The name of ``var``'s average: its op name when it exists, else the name :meth:`apply` would give it.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     w = tf.Variable(1.0, name="w")
            ...     tf.train.ExponentialMovingAverage(0.9).average_name(w)
            'w/ExponentialMovingAverage'
        """
        if var in self._averages:
            return self._averages[var].name[: -len(":0")]
        return get_default_graph().unique_name(var.name[: -len(":0")] + "/" + self.name, mark_as_used=False)

    def variables_to_restore(self, moving_avg_variables: Any = None) -> dict[str, Any]:
        """A name-to-variable map for a ``Saver`` that restores averages into the variables they average.

        Each averaged variable (default: trainable and ``MOVING_AVERAGE_VARIABLES``) is restored from its
        average's name; every other global variable from its own name.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     w = tf.Variable(1.0, name="w")
            ...     step = tf.Variable(0, trainable=False, name="step")
            ...     sorted(tf.train.ExponentialMovingAverage(0.9).variables_to_restore())
            ['step', 'w/ExponentialMovingAverage']
        """
        name_map: dict[str, Any] = {}
        if moving_avg_variables is None:
            moving_avg_variables = trainable_variables() + moving_average_variables()
        averaged = list(dict.fromkeys(moving_avg_variables))
        for v in averaged:
            name_map[self.average_name(v)] = v
        averaged_names = {v.name for v in averaged}
        for v in dict.fromkeys(global_variables()):
            if v.name not in averaged_names and v.op.name not in name_map:
                name_map[v.op.name] = v
        return name_map


def _zeros_like_static(t: Tensor) -> Tensor:
    """Zeros of ``t``'s shape (its dynamic shape when the static one is partial) and dtype."""
    if t.shape.is_fully_defined():
        return array_ops.zeros(t.shape.as_list(), dtype=t.dtype.base_dtype)
    return array_ops.zeros(array_ops.shape(t), dtype=t.dtype.base_dtype)
