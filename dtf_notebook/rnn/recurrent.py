"""TF1's RNN drivers: ``dynamic_rnn``, ``bidirectional_dynamic_rnn``, ``raw_rnn``, ``static_rnn``,
``static_bidirectional_rnn`` and ``static_state_saving_rnn``.

``dynamic_rnn`` is TF's ``_dynamic_rnn_loop``: the inputs are unstacked into a ``TensorArray``, a
``while_loop`` calls the cell once per time step and writes each output to another ``TensorArray``; past a
batch entry's ``sequence_length`` its output is zero and its state is copied through (``where``). Static
RNNs unroll the cell in Python, one call per input, reusing its variables.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 7, 3])
    ...     cell = tf.nn.rnn_cell.BasicLSTMCell(4)
    ...     outputs, state = tf.nn.dynamic_rnn(cell, x, sequence_length=[7, 5], dtype=tf.float32)
    ...     names = [v.name for v in tf.global_variables()]
    >>> outputs.shape.as_list(), names
    ([None, 7, 4], ['rnn/basic_lstm_cell/kernel:0', 'rnn/basic_lstm_cell/bias:0'])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook.framework import dtypes, nest
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import colocate_with, control_dependencies, get_default_graph, name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, as_shape, dimension_value
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.array.reverse_roll import reverse, reverse_sequence
from dtf_notebook.ops.assert_op import Assert
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.control_flow.cond import cond
from dtf_notebook.ops.control_flow.contexts import WhileContext
from dtf_notebook.ops.control_flow.while_loop import while_loop
from dtf_notebook.ops.identity_ops import identity
from dtf_notebook.ops.math.select import where
from dtf_notebook.ops.op_helpers import constant_value
from dtf_notebook.ops.pure_variable_scope import VariableScope
from dtf_notebook.ops.tensor_array.array import TensorArray
from dtf_notebook.ops.variable_scope import variable_scope
from dtf_notebook.rnn.cells import assert_like_rnncell, concat_shapes

__all__ = [
    "dynamic_rnn",
    "bidirectional_dynamic_rnn",
    "raw_rnn",
    "static_rnn",
    "static_bidirectional_rnn",
    "static_state_saving_rnn",
    "stack_bidirectional_dynamic_rnn",
    "stack_bidirectional_rnn",
]


# ---- helpers ----------------------------------------------------------------------------------------------
def _transpose_batch_time(x: Tensor) -> Tensor:
    """``x`` with its first two axes swapped (rank < 2 unchanged), keeping what is known of its shape."""
    static = x.shape
    if static.ndims is not None and static.ndims < 2:
        return x
    perm = array_ops.concat(([1, 0], math_ops.range(2, array_ops.rank(x))), axis=0)
    x_t = array_ops.transpose(x, perm)
    if static.ndims is not None:
        x_t.set_shape(TensorShape([static[1].value, static[0].value]).concatenate(static[2:]))
    return x_t


def _best_effort_input_batch_size(flat_input: Any) -> Any:
    """The static batch size of time-major inputs if any input knows it, else the first input's dynamic one."""
    for input_ in flat_input:
        shape = input_.shape
        if shape.ndims is None:
            continue
        if shape.ndims < 2:
            raise ValueError(f"Input tensor should have rank >= 2. Received input={input_} of rank {shape.ndims}")
        if shape[1].value is not None:
            return shape[1].value
    return array_ops.shape(flat_input[0])[1]


def _infer_state_dtype(explicit_dtype: Any, state: Any) -> Any:
    if explicit_dtype is not None:
        return explicit_dtype
    if nest.is_nested(state):
        inferred = [element.dtype for element in nest.flatten(state)]
        if not inferred:
            raise ValueError(f"Unable to infer dtype from argument state={state}.")
        if not all(d == inferred[0] for d in inferred):
            raise ValueError(
                f"Argument state={state} has tensors of different inferred dtypes. Unable to infer a single "
                f"representative dtype. Dtypes received: {inferred}"
            )
        return inferred[0]
    return state.dtype


def _maybe_tensor_shape_from_tensor(shape: Any) -> Any:
    if isinstance(shape, Tensor):
        return as_shape(constant_value(shape))
    return shape


def _assert_dims_compatible(a: Any, b: Any) -> None:
    if not a.is_compatible_with(b):
        raise ValueError(f"Dimensions {a} and {b} are not compatible")


def _in_while_loop() -> bool:
    context = get_default_graph()._get_control_flow_context()
    while context is not None:
        if isinstance(context, WhileContext):
            return True
        context = context.outer_context
    return False


def _cache_variables_locally(varscope: VariableScope) -> None:
    # TF reads RNN weights through a snapshot made where the reading op runs (not on the variable's device)
    # so a loop on a worker does not fetch them from the ps at every step; not inside another while loop.
    if not _in_while_loop() and varscope.caching_device is None:
        varscope.set_caching_device(lambda op: op.device)


def _initial_state(cell: Any, batch_size: Any, initial_state: Any, dtype: Any) -> Any:
    if initial_state is not None:
        return initial_state
    if not dtype:
        raise ValueError("If no initial_state is provided, argument `dtype` must be specified")
    if getattr(cell, "get_initial_state", None) is not None:
        return cell.get_initial_state(inputs=None, batch_size=batch_size, dtype=dtype)
    return cell.zero_state(batch_size, dtype)


def _rnn_step(
    time: Any,
    sequence_length: Tensor,
    min_sequence_length: Tensor,
    max_sequence_length: Tensor,
    zero_output: Any,
    state: Any,
    call_cell: Callable[[], tuple[Any, Any]],
    state_size: Any,
    skip_conditionals: bool = False,
) -> tuple[Any, Any]:
    """One step of an RNN over a batch of sequences: zero output and the old state past each sequence's end.

    With ``skip_conditionals`` the cell always runs and ``where`` picks per batch entry (``dynamic_rnn``);
    otherwise conds skip the cell past the longest sequence and the selection before the shortest one ends.
    """
    flat_state = nest.flatten(state)
    flat_zero_output = nest.flatten(zero_output)
    copy_cond = math_ops.greater_equal(time, sequence_length)

    def copy_one_through(output: Any, new_output: Any) -> Any:
        if isinstance(output, TensorArray) or output.shape.ndims == 0:
            return new_output
        with colocate_with(new_output):
            return where(copy_cond, output, new_output)

    def copy_some_through(flat_new_output: list[Any], flat_new_state: list[Any]) -> list[Any]:
        outs = [copy_one_through(z, o) for z, o in zip(flat_zero_output, flat_new_output)]
        states = [copy_one_through(s, n) for s, n in zip(flat_state, flat_new_state)]
        return outs + states

    def maybe_copy_some_through() -> list[Any]:
        new_output, new_state = call_cell()
        nest.assert_same_structure(zero_output, new_output)
        nest.assert_same_structure(state, new_state)
        flat_new_state, flat_new_output = nest.flatten(new_state), nest.flatten(new_output)
        return cond(
            math_ops.less(time, min_sequence_length),
            lambda: flat_new_output + flat_new_state,
            lambda: copy_some_through(flat_new_output, flat_new_state),
        )

    if skip_conditionals:
        new_output, new_state = call_cell()
        nest.assert_same_structure(zero_output, new_output)
        nest.assert_same_structure(state, new_state)
        final = copy_some_through(nest.flatten(new_output), nest.flatten(new_state))
    else:
        final = cond(
            math_ops.greater_equal(time, max_sequence_length),
            lambda: flat_zero_output + flat_state,
            maybe_copy_some_through,
        )
    final = list(final) if isinstance(final, list | tuple) else [final]
    final_output, final_state = final[: len(flat_zero_output)], final[len(flat_zero_output) :]
    for output, zero in zip(final_output, flat_zero_output):
        output.set_shape(zero.shape)
    for substate, old in zip(final_state, flat_state):
        if not isinstance(substate, TensorArray):
            substate.set_shape(old.shape)
    return (
        nest.pack_sequence_as(zero_output, final_output),
        nest.pack_sequence_as(state, final_state),
    )


# ---- dynamic RNNs ---------------------------------------------------------------------------------------------
def dynamic_rnn(
    cell: Any,
    inputs: Any,
    sequence_length: Any = None,
    initial_state: Any = None,
    dtype: Any = None,
    parallel_iterations: int | None = None,
    swap_memory: bool = False,
    time_major: bool = False,
    scope: Any = None,
) -> tuple[Any, Any]:
    """Runs ``cell`` over the time steps of ``inputs`` in a ``while_loop``; returns ``(outputs, final_state)``.

    Args:
        cell: An RNN cell.
        inputs: ``[batch, time, ...]`` (or ``[time, batch, ...]`` if ``time_major``), or a nested structure of
            such tensors (the cell then gets the structure at each step).
        sequence_length: int ``[batch]``: past its length a batch entry's output is zero and its state is
            copied through, so the final state is the state at the sequence's end.
        initial_state: The cell's initial state (default: its zero state, which needs ``dtype``).
        dtype: The state's dtype when ``initial_state`` is not given.
        parallel_iterations: Loop iterations that may run at once (default 32).
        swap_memory: Accepted as in TF.
        time_major: ``inputs`` and ``outputs`` are ``[time, batch, ...]``.
        scope: Variable scope (default ``"rnn"``).

    Returns:
        ``outputs`` with the structure of ``cell.output_size`` (``[batch, time, size]`` each, or time-major),
        and the final state with the structure of ``cell.state_size``.

    Raises:
        TypeError: ``cell`` is not an RNN cell.
        ValueError: no ``initial_state`` and no ``dtype``, a ``sequence_length`` that is not a vector, inputs of
            unknown depth, or inputs disagreeing on time steps or batch size.

    Example:
        >>> import numpy as np
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     cell = tf.nn.rnn_cell.BasicRNNCell(2, activation=tf.identity)
        ...     x = np.ones([2, 3, 1], np.float32)
        ...     outputs, state = tf.nn.dynamic_rnn(cell, x, sequence_length=[3, 1], dtype=tf.float32)
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         out, final = sess.run([outputs, state])
        >>> bool((out[1, 1:] == 0).all()), bool((final[1] == out[1, 0]).all())
        (True, True)
    """
    assert_like_rnncell("cell", cell)
    with variable_scope(scope or "rnn") as varscope:
        _cache_variables_locally(varscope)
        flat_input = nest.flatten(inputs)
        if not time_major:
            flat_input = [convert_to_tensor(input_) for input_ in flat_input]
            flat_input = tuple(_transpose_batch_time(input_) for input_ in flat_input)
        parallel_iterations = parallel_iterations or 32
        if sequence_length is not None:
            sequence_length = math_ops.cast(sequence_length, dtypes.int32)
            if sequence_length.shape.ndims not in (None, 1):
                raise ValueError(
                    "Argument sequence_length must be a vector of length batch_size. Received "
                    f"sequence_length={sequence_length} of shape: {sequence_length.shape}"
                )
            sequence_length = identity(sequence_length, name="sequence_length")
        batch_size = _best_effort_input_batch_size(flat_input)
        state = _initial_state(cell, batch_size, initial_state, dtype)
        if sequence_length is not None:
            x_shape = array_ops.shape(sequence_length)
            packed_shape = array_ops.stack([batch_size])
            check = Assert(
                math_ops.reduce_all(math_ops.equal(x_shape, packed_shape)),
                [f"Expected shape for Tensor {sequence_length.name} is ", packed_shape, " but saw shape: ", x_shape],
            )
            with control_dependencies([check]):
                sequence_length = identity(sequence_length, name="CheckSeqLen")
        inputs = nest.pack_sequence_as(inputs, list(flat_input))
        outputs, final_state = _dynamic_rnn_loop(
            cell,
            inputs,
            state,
            parallel_iterations=parallel_iterations,
            swap_memory=swap_memory,
            sequence_length=sequence_length,
            dtype=dtype,
        )
        if not time_major:
            outputs = nest.map_structure(_transpose_batch_time, outputs)
        return outputs, final_state


def _dynamic_rnn_loop(
    cell: Any,
    inputs: Any,
    initial_state: Any,
    parallel_iterations: int,
    swap_memory: bool,
    sequence_length: Tensor | None = None,
    dtype: Any = None,
) -> tuple[Any, Any]:
    """TF's ``_dynamic_rnn_loop``: the time-major loop of :func:`dynamic_rnn` over TensorArrays."""
    state = initial_state
    state_size = cell.state_size
    flat_input = nest.flatten(inputs)
    flat_output_size = nest.flatten(cell.output_size)
    time_steps = array_ops.shape(flat_input[0])[0]
    batch_size = _best_effort_input_batch_size(flat_input)
    inputs_got_shape = tuple(input_.shape.with_rank_at_least(3) for input_ in flat_input)
    const_time_steps, const_batch_size = inputs_got_shape[0].as_list()[:2]
    for i, shape in enumerate(inputs_got_shape):
        if not shape[2:].is_fully_defined():
            raise ValueError(
                "Input size (depth of inputs) must be accessible via shape inference, but saw value None for "
                f"input={flat_input[i]}."
            )
        if const_time_steps != shape[0].value:
            raise ValueError(
                "Time steps is not the same for all the elements in the input in a batch. Received time "
                f"steps={shape[0].value} for input={flat_input[i]}."
            )
        if const_batch_size != shape[1].value:
            raise ValueError(
                "Batch_size is not the same for all the elements in the input. Received batch "
                f"size={shape[1].value} for input={flat_input[i]}."
            )

    state_dtype = _infer_state_dtype(dtype, state)

    def create_zero_arrays(size: Any) -> Tensor:
        return array_ops.zeros(array_ops.stack(concat_shapes(batch_size, size)), state_dtype)

    flat_zero_output = tuple(create_zero_arrays(output) for output in flat_output_size)
    zero_output = nest.pack_sequence_as(cell.output_size, list(flat_zero_output))
    min_sequence_length = max_sequence_length = None
    if sequence_length is not None:
        min_sequence_length = math_ops.reduce_min(sequence_length)
        max_sequence_length = math_ops.reduce_max(sequence_length)
    else:
        max_sequence_length = time_steps
    time = constant(0, dtype=dtypes.int32, name="time")
    with name_scope("dynamic_rnn") as base_name:
        pass

    def create_ta(name: str, element_shape: Any, dtype: Any) -> TensorArray:
        return TensorArray(
            dtype=dtype, size=time_steps, element_shape=element_shape, tensor_array_name=base_name + name
        )

    output_ta = tuple(
        create_ta(
            f"output_{i}",
            TensorShape([const_batch_size]).concatenate(as_shape(_maybe_tensor_shape_from_tensor(size))),
            state_dtype,
        )
        for i, size in enumerate(flat_output_size)
    )
    input_ta = tuple(
        create_ta(f"input_{i}", element_shape=flat_input_i.shape[1:], dtype=flat_input_i.dtype)
        for i, flat_input_i in enumerate(flat_input)
    )
    input_ta = tuple(ta.unstack(input_) for ta, input_ in zip(input_ta, flat_input))

    def time_step(time: Tensor, output_ta_t: tuple[TensorArray, ...], state: Any) -> tuple[Any, ...]:
        input_t = tuple(ta.read(time) for ta in input_ta)
        for input_, shape in zip(input_t, inputs_got_shape):
            input_.set_shape(shape[1:])
        input_t = nest.pack_sequence_as(inputs, list(input_t))

        def call_cell() -> tuple[Any, Any]:
            return cell(input_t, state)

        if sequence_length is not None:
            output, new_state = _rnn_step(
                time=time,
                sequence_length=sequence_length,
                min_sequence_length=min_sequence_length,
                max_sequence_length=max_sequence_length,
                zero_output=zero_output,
                state=state,
                call_cell=call_cell,
                state_size=state_size,
                skip_conditionals=True,
            )
        else:
            output, new_state = call_cell()
        output = nest.flatten(output)
        output_ta_t = tuple(ta.write(time, out) for ta, out in zip(output_ta_t, output))
        return time + 1, output_ta_t, new_state

    loop_bound = math_ops.minimum(time_steps, math_ops.maximum(1, max_sequence_length))
    _, output_final_ta, final_state = while_loop(
        cond=lambda time, *_: math_ops.less(time, loop_bound),
        body=time_step,
        loop_vars=(time, output_ta, state),
        parallel_iterations=parallel_iterations,
        maximum_iterations=time_steps,
        swap_memory=swap_memory,
    )
    final_outputs = tuple(ta.stack() for ta in output_final_ta)
    for output, output_size in zip(final_outputs, flat_output_size):
        output.set_shape(concat_shapes([const_time_steps, const_batch_size], output_size, static=True))
    return nest.pack_sequence_as(cell.output_size, list(final_outputs)), final_state


def _reverse(input_: Tensor, seq_lengths: Any, seq_axis: int, batch_axis: int) -> Tensor:
    if seq_lengths is not None:
        return reverse_sequence(input_, seq_lengths=seq_lengths, seq_axis=seq_axis, batch_axis=batch_axis)
    return reverse(input_, axis=[seq_axis])


def bidirectional_dynamic_rnn(
    cell_fw: Any,
    cell_bw: Any,
    inputs: Any,
    sequence_length: Any = None,
    initial_state_fw: Any = None,
    initial_state_bw: Any = None,
    dtype: Any = None,
    parallel_iterations: int | None = None,
    swap_memory: bool = False,
    time_major: bool = False,
    scope: Any = None,
) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    """A forward and a backward :func:`dynamic_rnn` (scopes ``bidirectional_rnn/fw`` and ``/bw``).

    The backward cell reads each sequence reversed up to its ``sequence_length``; its outputs are reversed
    back, so both outputs are aligned with the inputs.

    Returns:
        ``((output_fw, output_bw), (output_state_fw, output_state_bw))``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.zeros([2, 5, 3])
        ...     fw, bw = tf.nn.rnn_cell.GRUCell(4), tf.nn.rnn_cell.GRUCell(4)
        ...     (out_fw, out_bw), _ = tf.nn.bidirectional_dynamic_rnn(fw, bw, x, dtype=tf.float32)
        ...     last = tf.trainable_variables()[-1].name
        >>> out_bw.shape.as_list(), last
        ([2, 5, 4], 'bidirectional_rnn/bw/gru_cell/candidate/bias:0')
    """
    assert_like_rnncell("cell_fw", cell_fw)
    assert_like_rnncell("cell_bw", cell_bw)
    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, output_state_fw = dynamic_rnn(
                cell=cell_fw,
                inputs=inputs,
                sequence_length=sequence_length,
                initial_state=initial_state_fw,
                dtype=dtype,
                parallel_iterations=parallel_iterations,
                swap_memory=swap_memory,
                time_major=time_major,
                scope=fw_scope,
            )
        time_axis, batch_axis = (0, 1) if time_major else (1, 0)
        with variable_scope("bw") as bw_scope:
            inputs_reverse = nest.map_structure(
                lambda inp: _reverse(inp, sequence_length, time_axis, batch_axis), inputs
            )
            tmp, output_state_bw = dynamic_rnn(
                cell=cell_bw,
                inputs=inputs_reverse,
                sequence_length=sequence_length,
                initial_state=initial_state_bw,
                dtype=dtype,
                parallel_iterations=parallel_iterations,
                swap_memory=swap_memory,
                time_major=time_major,
                scope=bw_scope,
            )
    output_bw = _reverse(tmp, sequence_length, time_axis, batch_axis)
    return (output_fw, output_bw), (output_state_fw, output_state_bw)


def raw_rnn(
    cell: Any,
    loop_fn: Callable[..., Any],
    parallel_iterations: int | None = None,
    swap_memory: bool = False,
    scope: Any = None,
) -> tuple[Any, Any, Any]:
    """An RNN whose inputs, stopping and emitted values come from ``loop_fn``, one step at a time.

    ``loop_fn(time, cell_output, cell_state, loop_state)`` returns ``(finished, next_input, next_cell_state,
    emit_output, next_loop_state)``; it is called first with ``cell_output=None`` for the initial values
    (``emit_output`` then gives the emitted structure, or None for ``cell.output_size``).

    Returns:
        ``(emit_ta, final_state, final_loop_state)``: TensorArrays of the emitted values (zeros for finished
        entries), the final cell state, and the final loop state (None if the initial one was None).

    Raises:
        TypeError: ``cell`` is not an RNN cell or ``loop_fn`` is not callable.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     inputs = tf.ones([4, 2, 3])  # time-major
        ...     cell = tf.nn.rnn_cell.BasicRNNCell(5)
        ...     def loop_fn(time, cell_output, cell_state, loop_state):
        ...         state = cell.zero_state(2, tf.float32) if cell_output is None else cell_state
        ...         finished = time >= [4, 2]
        ...         next_input = tf.cond(tf.reduce_all(finished), lambda: tf.zeros([2, 3]),
        ...                              lambda: inputs[tf.minimum(time, 3)])
        ...         return finished, next_input, state, cell_output, loop_state
        ...     emit_ta, final_state, _ = tf.nn.raw_rnn(cell, loop_fn)
        ...     outputs = emit_ta.stack()
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print(sess.run(outputs).shape)
        (4, 2, 5)
    """
    assert_like_rnncell("cell", cell)
    if not callable(loop_fn):
        raise TypeError(f"Argument `loop_fn` must be a callable. Received: {loop_fn}.")
    parallel_iterations = parallel_iterations or 32
    with variable_scope(scope or "rnn") as varscope:
        _cache_variables_locally(varscope)
        time = constant(0, dtype=dtypes.int32)
        elements_finished, next_input, initial_state, emit_structure, init_loop_state = loop_fn(time, None, None, None)
        flat_input = nest.flatten(next_input)
        loop_state = init_loop_state if init_loop_state is not None else constant(0, dtype=dtypes.int32)
        input_shape = [input_.shape for input_ in flat_input]
        static_batch_size = input_shape[0].with_rank_at_least(1)[0]
        for shape in input_shape:
            _assert_dims_compatible(static_batch_size, shape.with_rank_at_least(1)[0])
        const_batch_size = batch_size = dimension_value(static_batch_size)
        if batch_size is None:
            batch_size = array_ops.shape(flat_input[0])[0]
        nest.assert_same_structure(initial_state, cell.state_size)
        flat_state = [convert_to_tensor(s) for s in nest.flatten(initial_state)]
        state = nest.pack_sequence_as(initial_state, flat_state)
        if emit_structure is not None:
            flat_emit_structure = nest.flatten(emit_structure)
            flat_emit_size = [
                emit.shape if emit.shape.is_fully_defined() else array_ops.shape(emit) for emit in flat_emit_structure
            ]
            flat_emit_dtypes = [emit.dtype for emit in flat_emit_structure]
        else:
            emit_structure = cell.output_size
            flat_emit_size = nest.flatten(emit_structure)
            flat_emit_dtypes = [flat_state[0].dtype] * len(flat_emit_size)
        flat_emit_ta = [
            TensorArray(
                dtype=dtype_i,
                dynamic_size=True,
                element_shape=TensorShape([const_batch_size]).concatenate(
                    as_shape(_maybe_tensor_shape_from_tensor(size_i))
                ),
                size=0,
                name=f"rnn_output_{i}",
            )
            for i, (dtype_i, size_i) in enumerate(zip(flat_emit_dtypes, flat_emit_size))
        ]
        emit_ta = nest.pack_sequence_as(emit_structure, flat_emit_ta)
        flat_zero_emit = [
            array_ops.zeros(concat_shapes(batch_size, size_i), dtype_i)
            for size_i, dtype_i in zip(flat_emit_size, flat_emit_dtypes)
        ]
        zero_emit = nest.pack_sequence_as(emit_structure, flat_zero_emit)

        def condition(unused_time: Any, elements_finished: Tensor, *_: Any) -> Tensor:
            return math_ops.logical_not(math_ops.reduce_all(elements_finished))

        def body(
            time: Tensor, elements_finished: Tensor, current_input: Any, emit_ta: Any, state: Any, loop_state: Any
        ) -> tuple[Any, ...]:
            next_output, cell_state = cell(current_input, state)
            nest.assert_same_structure(state, cell_state)
            nest.assert_same_structure(cell.output_size, next_output)
            next_time = time + 1
            next_finished, next_input, next_state, emit_output, next_loop_state = loop_fn(
                next_time, next_output, cell_state, loop_state
            )
            nest.assert_same_structure(state, next_state)
            nest.assert_same_structure(current_input, next_input)
            nest.assert_same_structure(emit_ta, emit_output)
            loop_state = loop_state if next_loop_state is None else next_loop_state

            def copy_some_through(current: Any, candidate: Any) -> Any:
                def copy_fn(cur_i: Any, cand_i: Any) -> Any:
                    if isinstance(cur_i, TensorArray) or cur_i.shape.ndims == 0:
                        return cand_i
                    with colocate_with(cand_i):
                        return where(elements_finished, cur_i, cand_i)

                return nest.map_structure(copy_fn, current, candidate)

            emit_output = copy_some_through(zero_emit, emit_output)
            next_state = copy_some_through(state, next_state)
            emit_ta = nest.map_structure(lambda ta, emit: ta.write(time, emit), emit_ta, emit_output)
            elements_finished = math_ops.logical_or(elements_finished, next_finished)
            return next_time, elements_finished, next_input, emit_ta, next_state, loop_state

        returned = while_loop(
            condition,
            body,
            loop_vars=[time, elements_finished, next_input, emit_ta, state, loop_state],
            parallel_iterations=parallel_iterations,
            swap_memory=swap_memory,
        )
        emit_ta, final_state, final_loop_state = returned[-3:]
        if init_loop_state is None:
            final_loop_state = None
        return emit_ta, final_state, final_loop_state


# ---- static (unrolled) RNNs ------------------------------------------------------------------------------------
def static_rnn(
    cell: Any,
    inputs: Any,
    initial_state: Any = None,
    dtype: Any = None,
    sequence_length: Any = None,
    scope: Any = None,
) -> tuple[list[Any], Any]:
    """Unrolls ``cell`` over the list ``inputs`` (one ``[batch, depth]`` tensor per step); returns ``(outputs, state)``.

    With ``sequence_length``, steps past an entry's length give zeros and copy its state through, behind
    conds that skip the cell once every sequence has ended.

    Raises:
        TypeError: ``inputs`` is not a sequence, or ``cell`` is not an RNN cell.
        ValueError: empty ``inputs``, inputs of unknown depth, no ``initial_state`` and no ``dtype``, or a
            ``sequence_length`` that is not a vector.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     inputs = [tf.ones([2, 3]) for _ in range(4)]
        ...     outputs, state = tf.nn.static_rnn(tf.nn.rnn_cell.GRUCell(5), inputs, dtype=tf.float32)
        ...     count = len(tf.trainable_variables())
        >>> len(outputs), outputs[-1].op.name, count
        (4, 'rnn/gru_cell/add_3', 4)
    """
    assert_like_rnncell("cell", cell)
    if not nest.is_nested(inputs):
        raise TypeError(f"Argument `inputs` must be a sequence. Received: {inputs}")
    if not inputs:
        raise ValueError("Argument `inputs` must not be empty.")
    outputs = []
    with variable_scope(scope or "rnn") as varscope:
        _cache_variables_locally(varscope)
        first_input = inputs
        while nest.is_nested(first_input):
            first_input = first_input[0]
        if first_input.shape.ndims != 1:
            fixed_batch_size = first_input.shape.with_rank_at_least(2)[0]
            for flat_input in nest.flatten(inputs):
                input_shape = flat_input.shape.with_rank_at_least(2)
                _assert_dims_compatible(fixed_batch_size, input_shape[0])
                for i, size in enumerate(input_shape[1:].dims):
                    if dimension_value(size) is None:
                        raise ValueError(
                            f"Input size (dimension {i} of input {flat_input}) must be accessible via shape "
                            "inference, but saw value None."
                        )
        else:
            fixed_batch_size = first_input.shape.with_rank_at_least(1)[0]
        if dimension_value(fixed_batch_size):
            batch_size = dimension_value(fixed_batch_size)
        else:
            batch_size = array_ops.shape(first_input)[0]
        state = _initial_state(cell, batch_size, initial_state, dtype)
        if sequence_length is not None:
            sequence_length = convert_to_tensor(sequence_length, name="sequence_length")
            if sequence_length.shape.ndims not in (None, 1):
                raise ValueError(
                    f"Argument `sequence_length` must be a vector of length {batch_size}. Received "
                    f"sequence_length={sequence_length}."
                )
            state_dtype = _infer_state_dtype(dtype, state)

            def create_zero_output(output_size: Any) -> Tensor:
                output = array_ops.zeros(array_ops.stack(concat_shapes(batch_size, output_size)), state_dtype)
                shape = concat_shapes(dimension_value(fixed_batch_size), output_size, static=True)
                output.set_shape(TensorShape(shape))
                return output

            output_size = cell.output_size
            flat_zero_output = [create_zero_output(size) for size in nest.flatten(output_size)]
            zero_output = nest.pack_sequence_as(output_size, flat_zero_output)
            sequence_length = math_ops.cast(sequence_length, dtypes.int32)
            min_sequence_length = math_ops.reduce_min(sequence_length)
            max_sequence_length = math_ops.reduce_max(sequence_length)
        for time, input_ in enumerate(inputs):
            if time > 0:
                varscope.reuse_variables()

            def call_cell(input_: Any = input_, state: Any = state) -> tuple[Any, Any]:
                return cell(input_, state)

            if sequence_length is not None:
                output, state = _rnn_step(
                    time=time,
                    sequence_length=sequence_length,
                    min_sequence_length=min_sequence_length,
                    max_sequence_length=max_sequence_length,
                    zero_output=zero_output,
                    state=state,
                    call_cell=call_cell,
                    state_size=cell.state_size,
                )
            else:
                output, state = call_cell()
            outputs.append(output)
        return outputs, state


def static_state_saving_rnn(
    cell: Any,
    inputs: Any,
    state_saver: Any,
    state_name: Any,
    sequence_length: Any = None,
    scope: Any = None,
) -> tuple[list[Any], Any]:
    """:func:`static_rnn` whose initial state comes from ``state_saver.state(name)`` and whose final state is
    saved with ``state_saver.save_state(name, value)`` before the last output and the state are returned.

    Raises:
        ValueError: ``state_name`` does not have the structure of ``cell.state_size``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> class Saver:
        ...     def state(self, name):
        ...         return tf.zeros([1, 2])
        ...     def save_state(self, name, value):
        ...         return tf.no_op(name="save_" + name)
        >>> with tf.Graph().as_default():
        ...     outs, state = tf.nn.static_state_saving_rnn(
        ...         tf.nn.rnn_cell.BasicRNNCell(2), [tf.ones([1, 3])], Saver(), "h")
        >>> [op.name for op in state.op.control_inputs]
        ['save_h']
    """
    state_size = cell.state_size
    state_is_tuple = nest.is_nested(state_size)
    if state_is_tuple != nest.is_nested(state_name):
        raise ValueError(
            "Argument `state_name` should be the same type as `cell.state_size`. Received: "
            f"state_name={state_name!s}, cell.state_size={state_size!s}."
        )
    if state_is_tuple:
        state_name_flat, state_size_flat = nest.flatten(state_name), nest.flatten(state_size)
        if len(state_name_flat) != len(state_size_flat):
            raise ValueError(
                "Number of elements in argument `state_name` and `cell.state_size` are mismatched. Received "
                f"state_name={state_name} with {len(state_name_flat)} elements and cell.state_size={state_size} "
                f"with {len(state_size_flat)} elements."
            )
        initial_state = nest.pack_sequence_as(state_size, [state_saver.state(s) for s in state_name_flat])
    else:
        initial_state = state_saver.state(state_name)
    outputs, state = static_rnn(cell, inputs, initial_state=initial_state, sequence_length=sequence_length, scope=scope)
    if state_is_tuple:
        flat_state = nest.flatten(state)
        save_state = [state_saver.save_state(n, s) for n, s in zip(nest.flatten(state_name), flat_state)]
    else:
        save_state = [state_saver.save_state(state_name, state)]
    with control_dependencies(save_state):
        last_output = outputs[-1]
        outputs[-1] = nest.pack_sequence_as(last_output, [identity(o) for o in nest.flatten(last_output)])
        if state_is_tuple:
            state = nest.pack_sequence_as(state, [identity(s) for s in nest.flatten(state)])
        else:
            state = identity(state)
    return outputs, state


def _reverse_seq(input_seq: list[Any], lengths: Any) -> list[Any]:
    """The list ``input_seq`` reversed in time, per batch entry up to ``lengths`` (all of it when None)."""
    if lengths is None:
        return list(reversed(input_seq))
    flat_input_seq = tuple(nest.flatten(input_) for input_ in input_seq)
    flat_results: list[list[Any]] = [[] for _ in range(len(input_seq))]
    for sequence in zip(*flat_input_seq):
        input_shape = (
            TensorShape(None) if sequence[0].shape.ndims is None else TensorShape([None] * sequence[0].shape.ndims)
        )
        for input_ in sequence:
            input_shape.assert_is_compatible_with(input_.shape)
            input_.set_shape(input_shape)
        s_reversed = reverse_sequence(array_ops.stack(list(sequence)), lengths, 0, 1)
        for r, flat_result in zip(array_ops.unstack(s_reversed), flat_results):
            r.set_shape(input_shape)
            flat_result.append(r)
    return [nest.pack_sequence_as(input_, flat_result) for input_, flat_result in zip(input_seq, flat_results)]


def static_bidirectional_rnn(
    cell_fw: Any,
    cell_bw: Any,
    inputs: Any,
    initial_state_fw: Any = None,
    initial_state_bw: Any = None,
    dtype: Any = None,
    sequence_length: Any = None,
    scope: Any = None,
) -> tuple[list[Any], Any, Any]:
    """A forward and a backward :func:`static_rnn`; each output is the concatenation of the two directions.

    Returns:
        ``(outputs, output_state_fw, output_state_bw)``, ``outputs`` a list of ``[batch, fw + bw]`` tensors.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     inputs = [tf.ones([2, 3]) for _ in range(4)]
        ...     cells = tf.nn.rnn_cell.BasicRNNCell(2), tf.nn.rnn_cell.BasicRNNCell(5)
        ...     outputs, _, _ = tf.nn.static_bidirectional_rnn(*cells, inputs, dtype=tf.float32)
        >>> outputs[0].shape.as_list()
        [2, 7]
    """
    assert_like_rnncell("cell_fw", cell_fw)
    assert_like_rnncell("cell_bw", cell_bw)
    if not nest.is_nested(inputs):
        raise TypeError(f"Argument `inputs` must be a sequence. Received: {inputs}")
    if not inputs:
        raise ValueError("Argument `inputs` must not be empty.")
    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, output_state_fw = static_rnn(
                cell_fw, inputs, initial_state_fw, dtype, sequence_length, scope=fw_scope
            )
        with variable_scope("bw") as bw_scope:
            reversed_inputs = _reverse_seq(inputs, sequence_length)
            tmp, output_state_bw = static_rnn(
                cell_bw, reversed_inputs, initial_state_bw, dtype, sequence_length, scope=bw_scope
            )
    output_bw = _reverse_seq(tmp, sequence_length)
    flat_outputs = [array_ops.concat([fw, bw], 1) for fw, bw in zip(nest.flatten(output_fw), nest.flatten(output_bw))]
    return nest.pack_sequence_as(output_fw, flat_outputs), output_state_fw, output_state_bw


# ---- stacked bidirectional RNNs (tf.contrib.rnn) ---------------------------------------------------------------
def _check_stack_cells(cells_fw: Any, cells_bw: Any, initial_states_fw: Any, initial_states_bw: Any) -> None:
    if not cells_fw:
        raise ValueError("Must specify at least one fw cell for BidirectionalRNN.")
    if not cells_bw:
        raise ValueError("Must specify at least one bw cell for BidirectionalRNN.")
    if not isinstance(cells_fw, list):
        raise ValueError("cells_fw must be a list of RNNCells (one per layer).")
    if not isinstance(cells_bw, list):
        raise ValueError("cells_bw must be a list of RNNCells (one per layer).")
    if len(cells_fw) != len(cells_bw):
        raise ValueError("Forward and Backward cells must have the same depth.")
    if initial_states_fw is not None and (
        not isinstance(initial_states_fw, list) or len(initial_states_fw) != len(cells_fw)
    ):
        raise ValueError("initial_states_fw must be a list of state tensors (one per layer).")
    if initial_states_bw is not None and (
        not isinstance(initial_states_bw, list) or len(initial_states_bw) != len(cells_bw)
    ):
        raise ValueError("initial_states_bw must be a list of state tensors (one per layer).")


def stack_bidirectional_dynamic_rnn(
    cells_fw: list[Any],
    cells_bw: list[Any],
    inputs: Any,
    initial_states_fw: list[Any] | None = None,
    initial_states_bw: list[Any] | None = None,
    dtype: Any = None,
    sequence_length: Any = None,
    parallel_iterations: int | None = None,
    time_major: bool = False,
    scope: Any = None,
    swap_memory: bool = False,
) -> tuple[Tensor, tuple[Any, ...], tuple[Any, ...]]:
    """``tf.contrib.rnn``'s stacked bidirectional RNN: layer ``i`` is a :func:`bidirectional_dynamic_rnn` in scope
    ``stack_bidirectional_rnn/cell_i`` over the concatenated outputs of layer ``i - 1``.

    Returns:
        ``(outputs, output_states_fw, output_states_bw)``: the last layer's concatenated outputs and a tuple of each
        layer's final forward and backward states.

    Raises:
        ValueError: empty cell lists, lists of different lengths, or initial states not one per layer.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     fw = [tf.nn.rnn_cell.GRUCell(3), tf.nn.rnn_cell.GRUCell(2)]
        ...     bw = [tf.nn.rnn_cell.GRUCell(3), tf.nn.rnn_cell.GRUCell(2)]
        ...     stacked = tf.contrib.rnn.stack_bidirectional_dynamic_rnn
        ...     out, _, _ = stacked(fw, bw, tf.zeros([4, 5, 6]), dtype=tf.float32)
        ...     first = tf.trainable_variables()[0].name
        >>> out.shape.as_list(), first
        ([4, 5, 4], 'stack_bidirectional_rnn/cell_0/bidirectional_rnn/fw/gru_cell/gates/kernel:0')
    """
    _check_stack_cells(cells_fw, cells_bw, initial_states_fw, initial_states_bw)
    states_fw, states_bw = [], []
    prev_layer = inputs
    with variable_scope(scope or "stack_bidirectional_rnn"):
        for i, (cell_fw, cell_bw) in enumerate(zip(cells_fw, cells_bw)):
            with variable_scope(f"cell_{i}"):
                outputs, (state_fw, state_bw) = bidirectional_dynamic_rnn(
                    cell_fw,
                    cell_bw,
                    prev_layer,
                    initial_state_fw=initial_states_fw[i] if initial_states_fw else None,
                    initial_state_bw=initial_states_bw[i] if initial_states_bw else None,
                    sequence_length=sequence_length,
                    parallel_iterations=parallel_iterations,
                    dtype=dtype,
                    swap_memory=swap_memory,
                    time_major=time_major,
                )
                prev_layer = array_ops.concat(outputs, 2)
            states_fw.append(state_fw)
            states_bw.append(state_bw)
    return prev_layer, tuple(states_fw), tuple(states_bw)


def stack_bidirectional_rnn(
    cells_fw: list[Any],
    cells_bw: list[Any],
    inputs: Any,
    initial_states_fw: list[Any] | None = None,
    initial_states_bw: list[Any] | None = None,
    dtype: Any = None,
    sequence_length: Any = None,
    scope: Any = None,
) -> tuple[list[Tensor], tuple[Any, ...], tuple[Any, ...]]:
    """The unrolled form of :func:`stack_bidirectional_dynamic_rnn` over a list of inputs (layers of
    :func:`static_bidirectional_rnn` in scopes ``stack_bidirectional_rnn/cell_i``).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     cells = [tf.nn.rnn_cell.BasicRNNCell(2)], [tf.nn.rnn_cell.BasicRNNCell(3)]
        ...     outs, _, _ = tf.contrib.rnn.stack_bidirectional_rnn(*cells, [tf.zeros([1, 4])] * 3, dtype=tf.float32)
        >>> len(outs), outs[0].shape.as_list()
        (3, [1, 5])
    """
    _check_stack_cells(cells_fw, cells_bw, initial_states_fw, initial_states_bw)
    if not inputs:
        raise ValueError("inputs must not be empty")
    states_fw, states_bw = [], []
    prev_layer = inputs
    with variable_scope(scope or "stack_bidirectional_rnn"):
        for i, (cell_fw, cell_bw) in enumerate(zip(cells_fw, cells_bw)):
            with variable_scope(f"cell_{i}") as cell_scope:
                prev_layer, state_fw, state_bw = static_bidirectional_rnn(
                    cell_fw,
                    cell_bw,
                    prev_layer,
                    initial_state_fw=initial_states_fw[i] if initial_states_fw else None,
                    initial_state_bw=initial_states_bw[i] if initial_states_bw else None,
                    sequence_length=sequence_length,
                    dtype=dtype,
                    scope=cell_scope,
                )
            states_fw.append(state_fw)
            states_bw.append(state_bw)
    return prev_layer, tuple(states_fw), tuple(states_bw)
