"""TF1's RNN cell wrappers: ``DropoutWrapper``, ``ResidualWrapper`` and ``DeviceWrapper``.

A wrapper is an RNN cell around another one; it makes no variables and no scope of its own, so the wrapped
cell's variables keep the names they would have unwrapped.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.GRUCell(3), output_keep_prob=0.5)
    ...     out, _ = cell(tf.ones([2, 3]), cell.zero_state(2, tf.float32))
    ...     first = tf.trainable_variables()[0].name
    >>> out.op.type, first
    ('Mul', 'gru_cell/gates/kernel:0')
"""

from __future__ import annotations

import hashlib
import numbers
from collections.abc import Callable, Mapping
from typing import Any

from dtf_notebook.framework import nest
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import device, name_scope
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.ops import array_ops, math_ops, random_ops
from dtf_notebook.ops.nn.statistics import dropout
from dtf_notebook.ops.op_helpers import constant_value
from dtf_notebook.ops.tensor_array.array import TensorArray
from dtf_notebook.rnn.cells import LSTMStateTuple, RNNCell, assert_like_rnncell

__all__ = ["DropoutWrapper", "ResidualWrapper", "DeviceWrapper"]


# ---- structures walked up to a shallow structure (TF's nest.map_structure_up_to) -----------------------------
def _nested(value: Any) -> bool:
    return nest.is_nested(value) and not isinstance(value, TensorArray)


def _children(value: Any) -> list[Any]:
    return [value[k] for k in sorted(value)] if isinstance(value, Mapping) else list(value)


def _like(template: Any, children: list[Any]) -> Any:
    if isinstance(template, Mapping):
        keys = sorted(template)
        return type(template)((k, children[keys.index(k)]) for k in template)
    if isinstance(template, tuple) and hasattr(template, "_fields"):
        return type(template)(*children)
    return type(template)(children)


def _map_up_to(shallow: Any, fn: Callable[..., Any], *structures: Any) -> Any:
    """``fn(index, *parts)`` for each leaf of ``shallow``, the parts being what ``structures`` hold there."""
    counter = [0]

    def walk(level: Any, *parts: Any) -> Any:
        if not _nested(level):
            index = counter[0]
            counter[0] += 1
            return fn(index, *parts)
        split = [_children(p) for p in parts]
        for p, kids in zip(parts, split):
            if not _nested(p) or len(kids) != len(_children(level)):
                raise ValueError(f"The structure {p} does not match the shallow structure {level}")
        return _like(level, [walk(*kids) for kids in zip(_children(level), *split)])

    return walk(shallow, *structures)


def _default_dropout_state_filter_visitor(substate: Any) -> Any:
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)
    if isinstance(substate, TensorArray):
        return False
    return True


def _traverse_shallow(traverse_fn: Callable[[Any], Any], structure: Any) -> Any:
    """TF's ``nest.get_traverse_shallow_structure``: which parts of ``structure`` ``traverse_fn`` selects (bools)."""
    to_traverse = traverse_fn(structure)
    if not _nested(structure):
        if not isinstance(to_traverse, bool):
            raise TypeError(f"traverse_fn returned structure: {to_traverse} for non-structure: {structure}")
        return to_traverse
    if isinstance(to_traverse, bool):
        if not to_traverse:
            return False
        return _like(structure, [_traverse_shallow(traverse_fn, b) for b in _children(structure)])
    if not _nested(to_traverse):
        raise TypeError(f"traverse_fn returned a non-bool scalar: {to_traverse} for input: {structure}")
    level = []
    for t, branch in zip(_children(to_traverse), _children(structure)):
        if not isinstance(t, bool):
            raise TypeError(f"traverse_fn didn't return a depth=1 structure of bools.  saw: {to_traverse}")
        level.append(_traverse_shallow(traverse_fn, branch) if t else False)
    return _like(structure, level)


class _RNNCellWrapper(RNNCell):
    """An RNN cell that calls ``cell`` (in the caller's scope) from ``_call_wrapped_cell``."""

    def __init__(self, cell: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        assert_like_rnncell("cell", cell)
        self.cell = cell

    def _call_wrapped_cell(self, inputs: Any, state: Any, cell_call_fn: Callable[..., Any], **kwargs: Any) -> Any:
        raise NotImplementedError

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> Any:
        """Runs the wrapped cell through this wrapper; ``scope`` goes to the wrapped cell."""
        return self._call_wrapped_cell(inputs, state, cell_call_fn=self.cell.__call__, scope=scope)

    @property
    def wrapped_cell(self) -> Any:
        """The cell inside."""
        return self.cell

    @property
    def state_size(self) -> Any:
        return self.cell.state_size

    @property
    def output_size(self) -> Any:
        return self.cell.output_size

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        with name_scope(type(self).__name__ + "ZeroState"):
            return self.cell.zero_state(batch_size, dtype)


class DropoutWrapper(_RNNCellWrapper):
    """Dropout on a cell's inputs, outputs and/or new state (an LSTM's ``c`` is never dropped by default).

    Args:
        cell: The wrapped cell.
        input_keep_prob, output_keep_prob, state_keep_prob: Keep probabilities (floats in [0, 1] or scalar
            tensors); 1.0 leaves that part alone.
        variational_recurrent: One dropout mask per sequence (made when the wrapper is built) instead of one
            per step (Gal & Ghahramani); needs ``dtype``, and ``input_size`` when inputs are dropped.
        input_size: The (nested) depth of the inputs, for variational input dropout.
        dtype: Dtype of the variational masks.
        seed: Seed of the masks (each part derives its own from it).
        dropout_state_filter_visitor: ``fn(substate) -> bool or structure of bools``: which parts of the state
            to drop (default: all but an LSTM's ``c``).

    Raises:
        ValueError: a constant keep probability outside [0, 1], or missing ``dtype``/``input_size`` for
            variational dropout.
        TypeError: a non-callable ``dropout_state_filter_visitor``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicRNNCell(3), input_keep_prob=1.0)
        ...     out, state = cell(tf.ones([1, 2]), cell.zero_state(1, tf.float32))
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         a, b = sess.run([out, state])
        >>> bool((a == b).all())
        True
    """

    def __init__(
        self,
        cell: Any,
        input_keep_prob: Any = 1.0,
        output_keep_prob: Any = 1.0,
        state_keep_prob: Any = 1.0,
        variational_recurrent: bool = False,
        input_size: Any = None,
        dtype: Any = None,
        seed: int | None = None,
        dropout_state_filter_visitor: Callable[[Any], Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(cell, dtype=dtype, **kwargs)
        if dropout_state_filter_visitor is not None and not callable(dropout_state_filter_visitor):
            raise TypeError("dropout_state_filter_visitor must be callable")
        self._dropout_state_filter = dropout_state_filter_visitor or _default_dropout_state_filter_visitor
        with name_scope("DropoutWrapperInit"):
            for prob, attr in (
                (input_keep_prob, "input_keep_prob"),
                (state_keep_prob, "state_keep_prob"),
                (output_keep_prob, "output_keep_prob"),
            ):
                tensor_prob = convert_to_tensor(prob)
                const_prob = constant_value(tensor_prob)
                if const_prob is not None:
                    if const_prob < 0 or const_prob > 1:
                        raise ValueError(f"Parameter {attr} must be between 0 and 1: {const_prob}")
                    setattr(self, f"_{attr}", float(const_prob))
                else:
                    setattr(self, f"_{attr}", tensor_prob)
        self._variational_recurrent = variational_recurrent
        self._input_size = input_size
        self._seed = seed
        self._recurrent_input_noise = None
        self._recurrent_state_noise = None
        self._recurrent_output_noise = None
        if variational_recurrent:
            if dtype is None:
                raise ValueError("When variational_recurrent=True, dtype must be provided")

            def batch_noise(size: Any, inner_seed: int | None) -> Any:
                shape = array_ops.concat(([1], TensorShape(size).as_list()), 0)
                return random_ops.random_uniform(shape, seed=inner_seed, dtype=dtype)

            if not isinstance(self._input_keep_prob, numbers.Real) or self._input_keep_prob < 1.0:
                if input_size is None:
                    raise ValueError(
                        "When variational_recurrent=True and input_keep_prob < 1.0 or is unknown, input_size must "
                        "be provided"
                    )
                self._recurrent_input_noise = _map_up_to(
                    input_size, lambda i, s: batch_noise(s, self._gen_seed("input", i)), input_size
                )
            self._recurrent_state_noise = _map_up_to(
                cell.state_size, lambda i, s: batch_noise(s, self._gen_seed("state", i)), cell.state_size
            )
            self._recurrent_output_noise = _map_up_to(
                cell.output_size, lambda i, s: batch_noise(s, self._gen_seed("output", i)), cell.output_size
            )

    def _gen_seed(self, salt_prefix: str, index: int) -> int | None:
        if self._seed is None:
            return None
        salted = (str(self._seed) + f"{salt_prefix}_{index}").encode("utf-8")
        return int(hashlib.md5(salted).hexdigest()[:8], 16) & 0x7FFFFFFF

    def build(self, inputs_shape: Any) -> None:
        self.cell.build(inputs_shape)
        self.built = True

    def _variational_value(self, value: Any, noise: Any, keep_prob: Any) -> Any:
        # floor(keep_prob + U[0, 1)) is 1 with probability keep_prob: one mask for every step of the sequence.
        binary = math_ops.floor(keep_prob + noise)
        ret = math_ops.divide(value, keep_prob) * binary
        ret.set_shape(value.shape)
        return ret

    def _dropout(self, values: Any, salt_prefix: str, noise: Any, keep_prob: Any, shallow: Any = None) -> Any:
        shallow = values if shallow is None else shallow
        if not self._variational_recurrent:

            def drop(i: int, do_dropout: Any, v: Any) -> Any:
                if not isinstance(do_dropout, bool) or do_dropout:
                    return dropout(v, rate=1.0 - keep_prob, seed=self._gen_seed(salt_prefix, i))
                return v

            return _map_up_to(shallow, drop, shallow, values)

        def drop_variational(i: int, do_dropout: Any, v: Any, n: Any) -> Any:
            if not isinstance(do_dropout, bool) or do_dropout:
                return self._variational_value(v, n, keep_prob)
            return v

        return _map_up_to(shallow, drop_variational, shallow, values, noise)

    def _call_wrapped_cell(self, inputs: Any, state: Any, cell_call_fn: Callable[..., Any], **kwargs: Any) -> Any:
        def should_dropout(p: Any) -> bool:
            return (not isinstance(p, float)) or p < 1

        if should_dropout(self._input_keep_prob):
            inputs = self._dropout(inputs, "input", self._recurrent_input_noise, self._input_keep_prob)
        output, new_state = cell_call_fn(inputs, state, **kwargs)
        if should_dropout(self._state_keep_prob):
            shallow = _traverse_shallow(self._dropout_state_filter, new_state)
            new_state = self._dropout(new_state, "state", self._recurrent_state_noise, self._state_keep_prob, shallow)
        if should_dropout(self._output_keep_prob):
            output = self._dropout(output, "output", self._recurrent_output_noise, self._output_keep_prob)
        return output, new_state


class ResidualWrapper(_RNNCellWrapper):
    """Adds the cell's inputs to its outputs (``residual_fn(inputs, outputs)`` when given).

    Args:
        cell: The wrapped cell (its output must have the inputs' structure and shape).
        residual_fn: ``fn(inputs, outputs) -> outputs`` (default: element-wise sum).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     cell = tf.nn.rnn_cell.ResidualWrapper(tf.nn.rnn_cell.BasicRNNCell(3))
        ...     out, _ = cell(tf.ones([1, 3]), cell.zero_state(1, tf.float32))
        >>> out.op.type
        'Add'
    """

    def __init__(self, cell: Any, residual_fn: Callable[[Any, Any], Any] | None = None, **kwargs: Any) -> None:
        super().__init__(cell, **kwargs)
        self._residual_fn = residual_fn

    def _call_wrapped_cell(self, inputs: Any, state: Any, cell_call_fn: Callable[..., Any], **kwargs: Any) -> Any:
        outputs, new_state = cell_call_fn(inputs, state, **kwargs)

        def default_residual_fn(inputs: Any, outputs: Any) -> Any:
            nest.assert_same_structure(inputs, outputs)
            for inp, out in zip(nest.flatten(inputs), nest.flatten(outputs)):
                inp.shape.assert_is_compatible_with(out.shape)
            return nest.map_structure(lambda inp, out: inp + out, inputs, outputs)

        return (self._residual_fn or default_residual_fn)(inputs, outputs), new_state


class DeviceWrapper(_RNNCellWrapper):
    """Runs the cell (and makes its zero state) on ``device``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     cell = tf.nn.rnn_cell.DeviceWrapper(tf.nn.rnn_cell.BasicRNNCell(3), "/cpu:0")
        ...     out, _ = cell(tf.ones([1, 3]), cell.zero_state(1, tf.float32))
        >>> out.device
        '/device:CPU:0'
    """

    def __init__(self, cell: Any, device: Any, **kwargs: Any) -> None:
        super().__init__(cell, **kwargs)
        self._device = device

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        with name_scope(type(self).__name__ + "ZeroState"), device(self._device):
            return self.cell.zero_state(batch_size, dtype)

    def _call_wrapped_cell(self, inputs: Any, state: Any, cell_call_fn: Callable[..., Any], **kwargs: Any) -> Any:
        with device(self._device):
            return cell_call_fn(inputs, state, **kwargs)
