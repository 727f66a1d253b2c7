"""TF1's RNN cells (``tf.nn.rnn_cell``): ``RNNCell``, ``BasicRNNCell``, ``GRUCell``, ``BasicLSTMCell``, ``LSTMCell``
and ``MultiRNNCell``, with ``LSTMStateTuple``.

Cells are ``tf.layers`` layers built as TF1's ``rnn_cell_impl`` builds them, so variables get TF1's names
(``rnn/basic_lstm_cell/kernel``, ``rnn/multi_rnn_cell/cell_0/gru_cell/gates/kernel``, ...) and shapes, and a
checkpoint's variables map onto them by name. A cell called again reuses its variables; its ops go to its first
name scope.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     cell = tf.nn.rnn_cell.BasicLSTMCell(3)
    ...     state = cell.zero_state(2, tf.float32)
    ...     out, state = cell(tf.ones([2, 4]), state)
    >>> [v.name for v in cell.variables], out.shape.as_list(), type(state).__name__
    (['basic_lstm_cell/kernel:0', 'basic_lstm_cell/bias:0'], [2, 3], 'LSTMStateTuple')
"""

from __future__ import annotations

import collections
import logging
from typing import Any

from dtf_notebook.framework import dtypes, nest
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, as_shape
from dtf_notebook.layers.base import InputSpec, Layer
from dtf_notebook.layers.core import get_activation, get_initializer
from dtf_notebook.ops import array_ops, init_ops, math_ops
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.math.clip import clip_by_value
from dtf_notebook.ops.nn.bias_add import bias_add
from dtf_notebook.ops.op_helpers import constant_value
from dtf_notebook.ops.partitioned_variables import PartitionedVariable
from dtf_notebook.ops.partitioners import fixed_size_partitioner
from dtf_notebook.ops.pure_variable_scope import get_variable_scope
from dtf_notebook.ops.variable_scope import variable_scope
from dtf_notebook.ops.variables import trainable_variables

__all__ = [
    "RNNCell",
    "LayerRNNCell",
    "BasicRNNCell",
    "GRUCell",
    "LSTMStateTuple",
    "BasicLSTMCell",
    "LSTMCell",
    "MultiRNNCell",
    "assert_like_rnncell",
]

_log = logging.getLogger("tensorflow")
_BIAS_VARIABLE_NAME = "bias"
_WEIGHTS_VARIABLE_NAME = "kernel"


def assert_like_rnncell(cell_name: str, cell: Any) -> None:
    """Raises TypeError unless ``cell`` has ``output_size``, ``state_size``, a zero/initial state and is callable.

    Example:
        >>> assert_like_rnncell("cell", object())
        Traceback (most recent call last):
            ...
        TypeError: The argument 'cell' (<object object at ...>) is not an RNNCell: 'output_size' property is missing, \
'state_size' property is missing, either 'zero_state' or 'get_initial_state' method is required, is not callable.
    """
    conditions = [
        _hasattr(cell, "output_size"),
        _hasattr(cell, "state_size"),
        _hasattr(cell, "get_initial_state") or _hasattr(cell, "zero_state"),
        callable(cell),
    ]
    problems = [
        "'output_size' property is missing",
        "'state_size' property is missing",
        "either 'zero_state' or 'get_initial_state' method is required",
        "is not callable",
    ]
    if not all(conditions):
        missing = [p for p, ok in zip(problems, conditions) if not ok]
        raise TypeError(f"The argument {cell_name!r} ({cell}) is not an RNNCell: {', '.join(missing)}.")


def _hasattr(obj: Any, attr: str) -> bool:
    # A property that raises NotImplementedError (RNNCell's abstract sizes) counts as present, as in TF.
    try:
        getattr(obj, attr)
    except AttributeError:
        return False
    except NotImplementedError:
        return True
    return True


def concat_shapes(prefix: Any, suffix: Any, static: bool = False) -> Any:
    """``prefix + suffix`` of two sizes (ints, shapes or 0/1-D int tensors): an int32 tensor, or a list if ``static``.

    Example:
        >>> concat_shapes(2, [3, 4], static=True), concat_shapes([None], 5, static=True)
        ([2, 3, 4], [None, 5])
    """
    p, p_static = _shape_part(prefix, "prefix")
    s, s_static = _shape_part(suffix, "suffix")
    if static:
        shape = TensorShape(p_static).concatenate(TensorShape(s_static))
        return shape.as_list() if shape.ndims is not None else None
    if p is None or s is None:
        raise ValueError(f"Provided a prefix or suffix of None: {prefix} and {suffix}")
    return array_ops.concat((p, s), 0)


def _shape_part(value: Any, what: str) -> tuple[Any, Any]:
    """(an int32 vector tensor or None, the static value) of one side of :func:`concat_shapes`."""
    if isinstance(value, Tensor):
        static = constant_value(value)
        if value.shape.ndims == 0:
            value = array_ops.expand_dims(value, 0)
            static = None if static is None else [int(static)]
        elif value.shape.ndims != 1:
            raise ValueError(f"{what} tensor must be either a scalar or vector, but saw tensor: {value}")
        return value, None if static is None else list(static)
    shape = as_shape(value)
    static = shape.as_list() if shape.ndims is not None else None
    tensor = constant(shape.as_list(), dtype=dtypes.int32) if shape.is_fully_defined() else None
    return tensor, static


def zero_state_tensors(state_size: Any, batch_size: Any, dtype: Any) -> Any:
    """Zeros of shape ``[batch_size] + size`` for each size in the (nested) ``state_size``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     zeros = zero_state_tensors((3, tf.TensorShape([2, 2])), 5, tf.float32)
        >>> [z.shape.as_list() for z in zeros]
        [[5, 3], [5, 2, 2]]
    """

    def zeros(size: Any) -> Tensor:
        value = array_ops.zeros(concat_shapes(batch_size, size), dtype=dtype)
        value.set_shape(concat_shapes(batch_size, size, static=True))
        return value

    return nest.map_structure(zeros, state_size)


def _check_supported_dtypes(dtype: Any) -> None:
    if dtype is None:
        return
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_floating or dtype.is_complex):
        raise ValueError(f"RNN cell only supports floating point inputs, but saw dtype: {dtype}")


def _check_rnn_cell_input_dtypes(values: Any) -> None:
    for t in nest.flatten(values):
        _check_supported_dtypes(t.dtype)


def _input_depth(cell: Any, inputs_shape: Any) -> int:
    depth = TensorShape(inputs_shape)[-1].value
    if depth is None:
        raise ValueError(f"Expected inputs.shape[-1] to be known, saw shape: {inputs_shape}")
    return depth


def _default_activation(activation: Any) -> Any:
    return get_activation(activation) if activation else math_ops.tanh


class RNNCell(Layer):
    """Base of TF1's RNN cells: ``(output, new_state) = cell(inputs, state)``.

    Subclasses give ``state_size`` and ``output_size`` (ints, shapes or nested tuples of them) and ``call``.
    Variables a cell makes with ``tf.get_variable`` inside ``call`` count as its weights.

    Args:
        trainable: Whether the cell's variables are trainable.
        name: The cell's layer name (default: the snake-cased class name).
        dtype: The variables' dtype.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> class Doubling(tf.nn.rnn_cell.RNNCell):
        ...     state_size = output_size = 2
        ...     def call(self, inputs, state):
        ...         return 2.0 * state + inputs, 2.0 * state + inputs
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     out, state = Doubling()(tf.ones([1, 2]), tf.ones([1, 2]))
        ...     print(sess.run(state))
        [[3. 3.]]
    """

    def __init__(self, trainable: bool = True, name: Any = None, dtype: Any = None, **kwargs: Any) -> None:
        super().__init__(trainable=trainable, name=name, dtype=dtype, **kwargs)
        self._is_tf_rnn_cell = True

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> Any:
        """Runs the cell on ``inputs`` and ``state`` in ``scope`` (default: the variable scope of the first call).

        Returns:
            ``(output, new_state)``.
        """
        if scope is not None:
            with variable_scope(scope, custom_getter=self._rnn_get_variable) as entered:
                return super().__call__(inputs, state, scope=entered)
        scope_cm = getattr(self, "_rnncell_scope", None)
        if scope_cm is None:
            # TF1 captures the scope of the first call and re-enters it on later calls.
            scope_cm = variable_scope(get_variable_scope(), custom_getter=self._rnn_get_variable)
            self._rnncell_scope = scope_cm
        with scope_cm:
            return super().__call__(inputs, state)

    def _rnn_get_variable(self, getter: Any, *args: Any, **kwargs: Any) -> Any:
        variable = getter(*args, **kwargs)
        if isinstance(variable, PartitionedVariable):
            trainable = list(variable)[0] in trainable_variables()
        else:
            trainable = variable in trainable_variables()
        if trainable and all(variable is not v for v in self._trainable_weights):
            self._trainable_weights.append(variable)
        elif not trainable and all(variable is not v for v in self._non_trainable_weights):
            self._non_trainable_weights.append(variable)
        return variable

    def add_variable(self, *args: Any, **kwargs: Any) -> Any:
        """TF1's older name of :meth:`add_weight`."""
        return self.add_weight(*args, **kwargs)

    @property
    def state_size(self) -> Any:
        """Size(s) of the state: an int, a TensorShape or a nested tuple of them."""
        raise NotImplementedError("Abstract method")

    @property
    def output_size(self) -> Any:
        """Size of the output: an int, a TensorShape or a nested tuple of them."""
        raise NotImplementedError("Abstract method")

    def build(self, _: Any) -> None:
        """Cells that make variables in ``call`` need no build step."""

    def get_initial_state(self, inputs: Any = None, batch_size: Any = None, dtype: Any = None) -> Any:
        """The zero state for ``inputs``' batch size and dtype, or for ``batch_size`` and ``dtype``.

        Raises:
            ValueError: ``inputs`` disagrees with ``batch_size`` or ``dtype``, or neither gives them.
        """
        if inputs is not None:
            inputs = convert_to_tensor(inputs, name="inputs")
            if batch_size is not None:
                static = constant_value(batch_size) if isinstance(batch_size, Tensor) else batch_size
                if inputs.shape[0].value != static:
                    raise ValueError(
                        "batch size from input tensor is different from the input param. Input tensor batch: "
                        f"{inputs.shape[0].value}, batch_size: {batch_size}"
                    )
            if dtype is not None and inputs.dtype != dtype:
                raise ValueError(
                    "dtype from input tensor is different from the input param. Input tensor dtype: "
                    f"{inputs.dtype}, dtype: {dtype}"
                )
            batch_size = inputs.shape[0].value or array_ops.shape(inputs)[0]
            dtype = inputs.dtype
        if batch_size is None or dtype is None:
            raise ValueError(
                "batch_size and dtype cannot be None while constructing initial state: "
                f"batch_size={batch_size}, dtype={dtype}"
            )
        return self.zero_state(batch_size, dtype)

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        """Zeros of shape ``[batch_size, size]`` for each of the cell's state sizes (under ``<Class>ZeroState``).

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     c, h = tf.nn.rnn_cell.LSTMCell(4).zero_state(3, tf.float32)
            >>> c.op.name, h.shape.as_list()
            ('LSTMCellZeroState/zeros', [3, 4])
        """
        with name_scope(type(self).__name__ + "ZeroState"):
            return zero_state_tensors(self.state_size, batch_size, dtype)


class LayerRNNCell(RNNCell):
    """An RNN cell whose variables are made in ``build`` (the layer's own scope), like every TF1 built-in cell.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> issubclass(tf.nn.rnn_cell.GRUCell, LayerRNNCell)
        True
    """

    def __call__(self, inputs: Any, state: Any, scope: Any = None, *args: Any, **kwargs: Any) -> Any:
        """Runs the cell (no custom getter scope: the layer's scope holds its variables)."""
        return Layer.__call__(self, inputs, state, *args, scope=scope, **kwargs)


class BasicRNNCell(LayerRNNCell):
    """The plain RNN cell: ``output = new_state = activation(W [inputs, state] + b)``.

    Args:
        num_units: Units (state and output size).
        activation: Default ``tanh``.
        reuse: Reuse the variables of an existing scope of the same name.
        name: Layer name; dtype: variables' dtype.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     cell = tf.nn.rnn_cell.BasicRNNCell(4)
        ...     out, state = cell(tf.ones([2, 3]), cell.zero_state(2, tf.float32))
        >>> [v.shape.as_list() for v in cell.variables], out is state
        ([[7, 4], [4]], True)
    """

    def __init__(
        self,
        num_units: int,
        activation: Any = None,
        reuse: Any = None,
        name: Any = None,
        dtype: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        _check_supported_dtypes(self.dtype)
        self.input_spec = InputSpec(ndim=2)
        self._num_units = num_units
        self._activation = _default_activation(activation)

    @property
    def state_size(self) -> int:
        return self._num_units

    @property
    def output_size(self) -> int:
        return self._num_units

    def build(self, inputs_shape: Any) -> None:
        depth = _input_depth(self, inputs_shape)
        _check_supported_dtypes(self.dtype)
        self._kernel = self.add_weight(_WEIGHTS_VARIABLE_NAME, shape=[depth + self._num_units, self._num_units])
        self._bias = self.add_weight(_BIAS_VARIABLE_NAME, shape=[self._num_units], initializer=init_ops.Zeros())
        self.built = True

    def call(self, inputs: Tensor, state: Tensor) -> tuple[Tensor, Tensor]:
        _check_rnn_cell_input_dtypes([inputs, state])
        gate_inputs = math_ops.matmul(array_ops.concat([inputs, state], 1), self._kernel)
        output = self._activation(bias_add(gate_inputs, self._bias))
        return output, output


class GRUCell(LayerRNNCell):
    """Gated recurrent unit (Cho et al. 2014): reset and update gates, then a candidate state.

    Variables: ``gates/kernel``, ``gates/bias`` (initialized to 1), ``candidate/kernel``, ``candidate/bias``.

    Args:
        num_units: Units.
        activation: Of the candidate (default ``tanh``).
        reuse: Reuse existing variables.
        kernel_initializer, bias_initializer: Initializers of the weights and biases.
        name, dtype: Layer name and variables' dtype.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     cell = tf.nn.rnn_cell.GRUCell(2)
        ...     _ = cell(tf.ones([1, 3]), cell.zero_state(1, tf.float32))
        >>> [v.name for v in cell.variables]
        ['gru_cell/gates/kernel:0', 'gru_cell/gates/bias:0', 'gru_cell/candidate/kernel:0', 'gru_cell/candidate/bias:0']
    """

    def __init__(
        self,
        num_units: int,
        activation: Any = None,
        reuse: Any = None,
        kernel_initializer: Any = None,
        bias_initializer: Any = None,
        name: Any = None,
        dtype: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        _check_supported_dtypes(self.dtype)
        self.input_spec = InputSpec(ndim=2)
        self._num_units = num_units
        self._activation = _default_activation(activation)
        self._kernel_initializer = get_initializer(kernel_initializer)
        self._bias_initializer = get_initializer(bias_initializer)

    @property
    def state_size(self) -> int:
        return self._num_units

    @property
    def output_size(self) -> int:
        return self._num_units

    def build(self, inputs_shape: Any) -> None:
        depth = _input_depth(self, inputs_shape)
        _check_supported_dtypes(self.dtype)
        n = self._num_units
        bias_init = self._bias_initializer
        self._gate_kernel = self.add_weight(
            f"gates/{_WEIGHTS_VARIABLE_NAME}", shape=[depth + n, 2 * n], initializer=self._kernel_initializer
        )
        self._gate_bias = self.add_weight(
            f"gates/{_BIAS_VARIABLE_NAME}",
            shape=[2 * n],
            initializer=bias_init if bias_init is not None else init_ops.Constant(1.0),
        )
        self._candidate_kernel = self.add_weight(
            f"candidate/{_WEIGHTS_VARIABLE_NAME}", shape=[depth + n, n], initializer=self._kernel_initializer
        )
        self._candidate_bias = self.add_weight(
            f"candidate/{_BIAS_VARIABLE_NAME}",
            shape=[n],
            initializer=bias_init if bias_init is not None else init_ops.Zeros(),
        )
        self.built = True

    def call(self, inputs: Tensor, state: Tensor) -> tuple[Tensor, Tensor]:
        _check_rnn_cell_input_dtypes([inputs, state])
        gate_inputs = math_ops.matmul(array_ops.concat([inputs, state], 1), self._gate_kernel)
        value = math_ops.sigmoid(bias_add(gate_inputs, self._gate_bias))
        r, u = array_ops.split(value=value, num_or_size_splits=2, axis=1)
        candidate = math_ops.matmul(array_ops.concat([inputs, r * state], 1), self._candidate_kernel)
        c = self._activation(bias_add(candidate, self._candidate_bias))
        new_h = u * state + (1 - u) * c
        return new_h, new_h


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """An LSTM's state: ``(c, h)``, the cell state and the output (or projected output).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     state = LSTMStateTuple(tf.zeros([1, 2]), tf.ones([1, 2]))
        >>> state.dtype.name, state.h.shape.as_list()
        ('float32', [1, 2])
    """

    __slots__ = ()

    @property
    def dtype(self) -> Any:
        """The common dtype of ``c`` and ``h``."""
        c, h = self
        if c.dtype != h.dtype:
            raise TypeError(f"Inconsistent internal state: {c.dtype} vs {h.dtype}")
        return c.dtype


class BasicLSTMCell(LayerRNNCell):
    """The basic LSTM cell (no peepholes, no projection): gates ``i, j, f, o`` from one ``kernel`` and ``bias``.

    Args:
        num_units: Units.
        forget_bias: Added to the forget gate's pre-activation (default 1.0).
        state_is_tuple: State as ``LSTMStateTuple(c, h)`` (default) or as ``concat([c, h], 1)``.
        activation: Default ``tanh``.
        reuse, name, dtype: As for every cell.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     cell = tf.nn.rnn_cell.BasicLSTMCell(5, state_is_tuple=False)
        ...     out, state = cell(tf.ones([2, 3]), cell.zero_state(2, tf.float32))
        >>> cell.state_size, state.shape.as_list(), cell.variables[0].shape.as_list()
        (10, [2, 10], [8, 20])
    """

    def __init__(
        self,
        num_units: int,
        forget_bias: float = 1.0,
        state_is_tuple: bool = True,
        activation: Any = None,
        reuse: Any = None,
        name: Any = None,
        dtype: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        _check_supported_dtypes(self.dtype)
        if not state_is_tuple:
            _log.warning(
                "%s: Using a concatenated state is slower and will soon be deprecated.  Use state_is_tuple=True.", self
            )
        self.input_spec = InputSpec(ndim=2)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = _default_activation(activation)

    @property
    def state_size(self) -> Any:
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    @property
    def output_size(self) -> int:
        return self._num_units

    def build(self, inputs_shape: Any) -> None:
        depth = _input_depth(self, inputs_shape)
        _check_supported_dtypes(self.dtype)
        n = self._num_units
        self._kernel = self.add_weight(_WEIGHTS_VARIABLE_NAME, shape=[depth + n, 4 * n])
        self._bias = self.add_weight(_BIAS_VARIABLE_NAME, shape=[4 * n], initializer=init_ops.Zeros())
        self.built = True

    def call(self, inputs: Tensor, state: Any) -> tuple[Tensor, Any]:
        _check_rnn_cell_input_dtypes([inputs, state])
        sigmoid = math_ops.sigmoid
        one = constant(1, dtype=dtypes.int32)
        if self._state_is_tuple:
            c, h = state
        else:
            c, h = array_ops.split(value=state, num_or_size_splits=2, axis=one)
        gate_inputs = bias_add(math_ops.matmul(array_ops.concat([inputs, h], 1), self._kernel), self._bias)
        i, j, f, o = array_ops.split(value=gate_inputs, num_or_size_splits=4, axis=one)
        forget_bias = constant(self._forget_bias, dtype=f.dtype)
        # TF's operation order, so that float rounding matches: c * sigmoid(f + b) + sigmoid(i) * act(j).
        new_c = math_ops.add(
            math_ops.multiply(c, sigmoid(math_ops.add(f, forget_bias))),
            math_ops.multiply(sigmoid(i), self._activation(j)),
        )
        new_h = math_ops.multiply(self._activation(new_c), sigmoid(o))
        new_state = LSTMStateTuple(new_c, new_h) if self._state_is_tuple else array_ops.concat([new_c, new_h], 1)
        return new_h, new_state


class LSTMCell(LayerRNNCell):
    """The full LSTM cell: optional peepholes, cell clipping and an output projection (Sak et al. 2014).

    Args:
        num_units: Units of the cell state.
        use_peepholes: Diagonal peephole connections ``w_f_diag``, ``w_i_diag``, ``w_o_diag``.
        cell_clip: Clip the cell state to ``[-cell_clip, cell_clip]``.
        initializer: Of the kernel, peepholes and projection.
        num_proj: Project the output to this size (``projection/kernel``); the state's ``h`` is then projected.
        proj_clip: Clip the projected output to ``[-proj_clip, proj_clip]``.
        num_unit_shards, num_proj_shards: Split the kernel / projection into this many variables (deprecated).
        forget_bias: Added to the forget gate's pre-activation (default 1.0).
        state_is_tuple: State as ``LSTMStateTuple(c, h)`` (default) or concatenated.
        activation: Default ``tanh``.
        reuse, name, dtype: As for every cell.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     cell = tf.nn.rnn_cell.LSTMCell(4, use_peepholes=True, num_proj=2)
        ...     out, (c, h) = cell(tf.ones([1, 3]), cell.zero_state(1, tf.float32))
        >>> out.shape.as_list(), c.shape.as_list(), [v.name.split("/", 1)[1] for v in cell.variables]
        ([1, 2], [1, 4], ['kernel:0', 'bias:0', 'w_f_diag:0', 'w_i_diag:0', 'w_o_diag:0', 'projection/kernel:0'])
    """

    def __init__(
        self,
        num_units: int,
        use_peepholes: bool = False,
        cell_clip: float | None = None,
        initializer: Any = None,
        num_proj: int | None = None,
        proj_clip: float | None = None,
        num_unit_shards: int | None = None,
        num_proj_shards: int | None = None,
        forget_bias: float = 1.0,
        state_is_tuple: bool = True,
        activation: Any = None,
        reuse: Any = None,
        name: Any = None,
        dtype: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        _check_supported_dtypes(self.dtype)
        if not state_is_tuple:
            _log.warning(
                "%s: Using a concatenated state is slower and will soon be deprecated.  Use state_is_tuple=True.", self
            )
        self.input_spec = InputSpec(ndim=2)
        self._num_units = num_units
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = get_initializer(initializer)
        self._num_proj = num_proj
        self._proj_clip = proj_clip
        self._num_unit_shards = num_unit_shards
        self._num_proj_shards = num_proj_shards
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = _default_activation(activation)
        h_size = num_proj if num_proj else num_units
        self._state_size: Any = LSTMStateTuple(num_units, h_size) if state_is_tuple else num_units + h_size
        self._output_size = h_size

    @property
    def state_size(self) -> Any:
        return self._state_size

    @property
    def output_size(self) -> int:
        return self._output_size

    def build(self, inputs_shape: Any) -> None:
        depth = _input_depth(self, inputs_shape)
        _check_supported_dtypes(self.dtype)
        n = self._num_units
        h_depth = n if self._num_proj is None else self._num_proj
        shards = self._num_unit_shards
        self._kernel = self.add_weight(
            _WEIGHTS_VARIABLE_NAME,
            shape=[depth + h_depth, 4 * n],
            initializer=self._initializer,
            partitioner=fixed_size_partitioner(shards) if shards is not None else None,
        )
        self._bias = self.add_weight(_BIAS_VARIABLE_NAME, shape=[4 * n], initializer=init_ops.Zeros())
        if self._use_peepholes:
            self._w_f_diag = self.add_weight("w_f_diag", shape=[n], initializer=self._initializer)
            self._w_i_diag = self.add_weight("w_i_diag", shape=[n], initializer=self._initializer)
            self._w_o_diag = self.add_weight("w_o_diag", shape=[n], initializer=self._initializer)
        if self._num_proj is not None:
            proj_shards = self._num_proj_shards
            self._proj_kernel = self.add_weight(
                f"projection/{_WEIGHTS_VARIABLE_NAME}",
                shape=[n, self._num_proj],
                initializer=self._initializer,
                partitioner=fixed_size_partitioner(proj_shards) if proj_shards is not None else None,
            )
        self.built = True

    def call(self, inputs: Tensor, state: Any) -> tuple[Tensor, Any]:
        _check_rnn_cell_input_dtypes([inputs, state])
        n = self._num_units
        num_proj = n if self._num_proj is None else self._num_proj
        sigmoid, act = math_ops.sigmoid, self._activation
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev = array_ops.slice(state, [0, 0], [-1, n])
            m_prev = array_ops.slice(state, [0, n], [-1, num_proj])
        if inputs.shape.with_rank(2)[1].value is None:
            raise ValueError("Could not infer input size from inputs.get_shape()[-1]")
        lstm_matrix = bias_add(math_ops.matmul(array_ops.concat([inputs, m_prev], 1), self._kernel), self._bias)
        i, j, f, o = array_ops.split(value=lstm_matrix, num_or_size_splits=4, axis=1)
        if self._use_peepholes:
            c = sigmoid(f + self._forget_bias + self._w_f_diag * c_prev) * c_prev + sigmoid(
                i + self._w_i_diag * c_prev
            ) * act(j)
        else:
            c = sigmoid(f + self._forget_bias) * c_prev + sigmoid(i) * act(j)
        if self._cell_clip is not None:
            c = clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            m = sigmoid(o + self._w_o_diag * c) * act(c)
        else:
            m = sigmoid(o) * act(c)
        if self._num_proj is not None:
            m = math_ops.matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = clip_by_value(m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple else array_ops.concat([c, m], 1)
        return m, new_state


class MultiRNNCell(RNNCell):
    """Cells stacked in layers: each cell's output is the next one's input, in scopes ``cell_0``, ``cell_1``, ...

    Args:
        cells: The cells, bottom first.
        state_is_tuple: The state is the tuple of the cells' states (default), else their concatenation.

    Raises:
        ValueError: no cells, or tuple states with ``state_is_tuple=False``.
        TypeError: ``cells`` is not a list or tuple.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.GRUCell(3), tf.nn.rnn_cell.BasicRNNCell(2)])
        ...     out, states = cell(tf.ones([1, 4]), cell.zero_state(1, tf.float32))
        >>> cell.state_size, out.shape.as_list(), cell.variables[0].name
        ((3, 2), [1, 2], 'multi_rnn_cell/cell_0/gru_cell/gates/kernel:0')
    """

    def __init__(self, cells: Any, state_is_tuple: bool = True) -> None:
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not nest.is_nested(cells):
            raise TypeError(f"cells must be a list or tuple, but saw: {cells}.")
        if len({id(cell) for cell in cells}) < len(cells):
            _log.warning("At least two cells provided to MultiRNNCell are the same object and will share weights.")
        self._cells = cells
        self._state_is_tuple = state_is_tuple
        if not state_is_tuple and any(nest.is_nested(c.state_size) for c in cells):
            raise ValueError(
                "Some cells return tuples of states, but the flag state_is_tuple is not set.  State sizes are: "
                f"{[c.state_size for c in cells]}"
            )

    @property
    def state_size(self) -> Any:
        if self._state_is_tuple:
            return tuple(cell.state_size for cell in self._cells)
        return sum(cell.state_size for cell in self._cells)

    @property
    def output_size(self) -> Any:
        return self._cells[-1].output_size

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        with name_scope(type(self).__name__ + "ZeroState"):
            if self._state_is_tuple:
                return tuple(cell.zero_state(batch_size, dtype) for cell in self._cells)
            return super().zero_state(batch_size, dtype)

    @property
    def trainable_weights(self) -> list[Any]:
        if not self.trainable:
            return []
        return [w for cell in self._cells if isinstance(cell, Layer) for w in cell.trainable_weights]

    @property
    def non_trainable_weights(self) -> list[Any]:
        weights = [w for cell in self._cells if isinstance(cell, Layer) for w in cell.non_trainable_weights]
        if not self.trainable:
            trainable = [w for cell in self._cells if isinstance(cell, Layer) for w in cell.trainable_weights]
            return trainable + weights
        return weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    @property
    def weights(self) -> list[Any]:
        return self.trainable_weights + self.non_trainable_weights

    variables = weights

    def call(self, inputs: Any, state: Any) -> tuple[Any, Any]:
        cur_state_pos = 0
        cur_inp = inputs
        new_states = []
        for i, cell in enumerate(self._cells):
            with variable_scope(f"cell_{i}"):
                if self._state_is_tuple:
                    if not nest.is_nested(state):
                        raise ValueError(
                            f"Expected state to be a tuple of length {len(self.state_size)}, but received: {state}"
                        )
                    cur_state = state[i]
                else:
                    cur_state = array_ops.slice(state, [0, cur_state_pos], [-1, cell.state_size])
                    cur_state_pos += cell.state_size
                cur_inp, new_state = cell(cur_inp, cur_state)
                new_states.append(new_state)
        return cur_inp, (tuple(new_states) if self._state_is_tuple else array_ops.concat(new_states, 1))
