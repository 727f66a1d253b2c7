"""``tf.random.Generator``: a random-number generator whose Philox state lives in a variable, and the global one
(``get_global_generator``, ``set_global_generator``).

As in TF, the state is an int64 variable ``[counter_lo, counter_hi, key]`` (``random_generator/StateVar``, in the
global variables). Each draw reads the state and advances its 128-bit counter by 256 per output value in one op
(``RngReadAndSkip``), then runs a stateless op on that key and counter (``StatelessRandomNormalV2`` and friends: the
Philox stream of :mod:`.philox`); ``binomial`` reads and advances the state in its own op
(``StatefulRandomBinomial``). So a generator made ``from_seed`` draws TF's values, run after run. (TF 2.21's
``StatefulRandomBinomial`` leaves the state unchanged when it is the first op to update a freshly initialised
state variable, a copy-on-write slip; here every binomial draw advances the state.) Keys and counters
travel as int64 tensors holding TF's uint64 words. ThreeFry (``alg=2``) is refused: only Philox runs here.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     g = tf.random.Generator.from_seed(1234)
    ...     x = g.normal([3])
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         print(sess.run(x).round(4), sess.run(g.state))
    [ 0.9357  1.0854 -0.9379] [2002    0    0]
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import get_default_graph, name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.op_helpers import make_op, shape_from_tensor
from dtf_notebook.ops.random_ops import _dims_reader, _shape_tensor
from dtf_notebook.ops.stateless_random_ops import Algorithm, _alg_value, create_rng_state

__all__ = ["Generator", "get_global_generator", "set_global_generator"]

_MASK64 = 2**64 - 1
_NOT_DIFF = op_registry.NOT_DIFFERENTIABLE


def _signed(value: int) -> int:
    value &= _MASK64
    return value - 2**64 if value >= 2**63 else value


def _philox_alg(op: Any, alg: Any) -> None:
    value = int(alg)
    if value not in (Algorithm.PHILOX.value, Algorithm.AUTO_SELECT.value):
        raise errors.InvalidArgumentError(None, op, f"Unsupported algorithm id: {value} (only Philox runs here)")


def _words(key: Any, counter: Any) -> tuple[tuple[int, int], tuple[int, int, int, int]]:
    """The Philox key and counter words of int64 ``key`` ``[1]`` and ``counter`` ``[2]`` (TF's uint64 words)."""
    k = int(key.reshape(-1)[0]) & _MASK64
    c0, c1 = (int(v) & _MASK64 for v in counter.reshape(-1)[:2].tolist())
    return (k & 0xFFFFFFFF, k >> 32), (c0 & 0xFFFFFFFF, c0 >> 32, c1 & 0xFFFFFFFF, c1 >> 32)


def _advance(state: Any, blocks: int) -> None:
    """Adds ``blocks`` to the 128-bit counter ``state[0:2]`` in place (TF's ``PhiloxRandom::Skip``)."""
    lo = (int(state[0]) & _MASK64) + blocks
    hi = (int(state[1]) & _MASK64) + (lo >> 64)
    state[0], state[1] = _signed(lo), _signed(hi)


# ---- RngReadAndSkip ------------------------------------------------------------------------------------------------
def _read_and_skip_kernel(op: Any, ctx: Any) -> Callable[..., Any]:
    def run(resource: Any, alg: Any, delta: Any) -> torch.Tensor:
        _philox_alg(op, alg)
        with resource.lock:
            current = resource.read()
            if current.numel() < 3:
                raise errors.InvalidArgumentError(
                    None, op, f"For Philox algorithm, the size of state must be at least 3; got {current.numel()}"
                )
            old = current.clone()
            state = current.tolist()
            _advance(state, int(delta) * 256)
            current.copy_(torch.tensor(state, dtype=current.dtype))
        return old

    return run


op_registry.register_op(
    "RngReadAndSkip",
    infer=lambda op: [(dtypes.int64, TensorShape([3]))],
    kernel=_read_and_skip_kernel,
    grad=_NOT_DIFF,
    ref_inputs=(0,),
    stateful=True,
)


# ---- the V2 stateless ops (key, counter, alg) ---------------------------------------------------------------------
def _v2_kernel(kind: str) -> Callable[[Any, Any], Callable[..., Any]]:
    def factory(op: Any, ctx: Any) -> Callable[..., Any]:
        from dtf_notebook.ops import philox_samplers

        dims, device, dtype = _dims_reader(op), ctx.device, op.get_attr("dtype").name

        def run(shape: Any, key: Any, counter: Any, alg: Any, *bounds: Any) -> torch.Tensor:
            _philox_alg(op, alg)
            size = dims(shape)
            n = int(np.prod(size))
            if n == 0:
                return torch.zeros(size, dtype=getattr(torch, dtype), device=device)
            k, c = _words(key, counter)
            if kind == "int":
                lo, hi = int(bounds[0]), int(bounds[1])
                if lo >= hi:
                    raise errors.InvalidArgumentError(None, op, f"Need minval < maxval, got {lo} >= {hi}")
                values = philox_samplers.uniform_int(k, c, n, lo, hi, dtype, device)
            elif kind == "truncated":
                values = philox_samplers.truncated_normal(k, c, n, dtype, device)
            else:
                values = philox_samplers.fixed(kind, k, c, n, dtype, device)
            return values.reshape(size)

        return run

    return factory


def _v2_infer(op: Any) -> list[tuple[dtypes.DType, TensorShape]]:
    return [(op.get_attr("dtype"), shape_from_tensor(op.inputs[0]))]


for _type, _kind in (
    ("StatelessRandomUniformV2", "uniform"),
    ("StatelessRandomNormalV2", "normal"),
    ("StatelessTruncatedNormalV2", "truncated"),
    ("StatelessRandomUniformFullIntV2", "bits"),
    ("StatelessRandomUniformIntV2", "int"),
):
    op_registry.register_op(_type, infer=_v2_infer, kernel=_v2_kernel(_kind), grad=_NOT_DIFF)


# ---- StatefulRandomBinomial ----------------------------------------------------------------------------------------
def _binomial_kernel(op: Any, ctx: Any) -> Callable[..., Any]:
    from dtf_notebook.ops import philox_samplers

    dims, out_dtype = _dims_reader(op), getattr(torch, op.get_attr("dtype").name)

    def run(resource: Any, alg: Any, shape: Any, counts: Any, probs: Any) -> torch.Tensor:
        _philox_alg(op, alg)
        size = dims(shape)
        batch = tuple(torch.broadcast_shapes(counts.shape, probs.shape))
        if len(batch) > len(size) or tuple(size[len(size) - len(batch) :]) != batch:
            raise errors.InvalidArgumentError(None, op, "Shape passed in must end with broadcasted shape.")
        num_batches = int(np.prod(batch)) if batch else 1
        per_batch = int(np.prod(size)) // max(num_batches, 1)
        with resource.lock:
            current = resource.read()
            state = current.tolist()
            key, counter = _words(torch.tensor(state[2:3]), torch.tensor(state[0:2]))
            _advance(state, num_batches * 2 * 100 * (per_batch + 3) // 4 * 256)  # TF's reservation, as TF 2.21 skips
            current.copy_(torch.tensor(state, dtype=current.dtype))
        if int(np.prod(size)) == 0:
            return torch.zeros(size, dtype=out_dtype, device=counts.device)
        values = philox_samplers.binomial(key, counter, counts, probs, per_batch)
        return values.reshape(size).to(out_dtype)

    return run


op_registry.register_op(
    "StatefulRandomBinomial",
    infer=lambda op: [(op.get_attr("dtype"), shape_from_tensor(op.inputs[2]))],
    kernel=_binomial_kernel,
    grad=_NOT_DIFF,
    ref_inputs=(0,),
    stateful=True,
)


# ---- Generator -----------------------------------------------------------------------------------------------------
def _state_tensor(value: Any) -> Tensor:
    """A state or seed as an int64 tensor (Python ints above int64's range wrap, as TF's ``_uint_to_int``)."""
    if isinstance(value, list | tuple | np.ndarray):
        flat = np.asarray(value, dtype=object).reshape(-1)
        if not any(hasattr(v, "graph") for v in flat):
            return convert_to_tensor(np.array([_signed(int(v)) for v in flat], np.int64).reshape(np.shape(value)))
        return array_ops.stack([math_ops.cast(v, dtypes.int64) for v in flat])
    return math_ops.cast(convert_to_tensor(value), dtypes.int64)


class Generator:
    """A random-number generator with its Philox state in a variable (TF's ``tf.random.Generator``).

    Make one with :meth:`from_seed`, :meth:`from_state`, :meth:`from_key_counter` or
    :meth:`from_non_deterministic_state`; its variable must be initialised (``global_variables_initializer``)
    before drawing. Every draw advances the state, so running the same draw op twice gives new values.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     g = tf.random.Generator.from_seed(1)
        ...     u = g.uniform([2], maxval=10, dtype=tf.int32)
        ...     with tf.Session() as sess:
        ...         sess.run(g.state.initializer)
        ...         print(sess.run(u).shape, sess.run(u).shape)
        (2,) (2,)
    """

    def __init__(self, copy_from: Generator | None = None, state: Any = None, alg: Any = None) -> None:
        from dtf_notebook.ops.variables import Variable

        if copy_from is not None:
            if alg is not None or state is not None:
                raise ValueError("Generator(copy_from=...) takes neither state nor alg")
            self._state_var = self._create_variable(copy_from.state.initialized_value())
            self._alg = copy_from.algorithm
            return
        if alg is None or state is None:
            raise ValueError("Generator needs state and alg (or use Generator.from_seed and the other from_*)")
        self._alg = _alg_value(alg)
        if self._alg == Algorithm.THREEFRY.value:
            raise ValueError("alg='threefry' is not supported here: the generators run Philox")
        if isinstance(state, Variable):
            state.shape.assert_is_compatible_with([3])
            self._state_var = state
        else:
            state_t = _state_tensor(state)
            state_t.shape.assert_is_compatible_with([3])
            self._state_var = self._create_variable(state_t)

    @staticmethod
    def _create_variable(initial: Any) -> Any:
        from dtf_notebook.ops.variables import Variable

        with name_scope("random_generator"):
            return Variable(initial, dtype=dtypes.int64, trainable=False, name="StateVar")

    # -- constructors ------------------------------------------------------------------------------------------------
    @classmethod
    def from_state(cls, state: Any, alg: Any) -> Generator:
        """A generator starting from ``state`` (``[counter_lo, counter_hi, key]``) or using the variable ``state``.

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     tf.random.Generator.from_state([5, 0, 7], alg="philox").state.shape.as_list()
            [3]
        """
        return cls(state=state, alg=alg)

    @classmethod
    def from_seed(cls, seed: Any, alg: Any = None) -> Generator:
        """A generator whose state is ``create_rng_state(seed, alg)`` (TF's values follow).

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     tf.random.Generator.from_seed(7).algorithm
            1
        """
        alg = _alg_value(Algorithm.PHILOX.value if alg is None else alg)
        return cls(state=create_rng_state(seed, alg), alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg: Any = None) -> Generator:
        """A generator from fresh entropy (``os.urandom``).

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     tf.random.Generator.from_non_deterministic_state().state.dtype.name
            'int64'
        """
        alg = _alg_value(Algorithm.PHILOX.value if alg is None else alg)
        words = np.frombuffer(os.urandom(24), dtype=np.int64).copy()
        return cls(state=words, alg=alg)

    @classmethod
    def from_key_counter(cls, key: Any, counter: Any, alg: Any) -> Generator:
        """A generator from a Philox ``key`` (a scalar) and ``counter`` (two words).

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     tf.random.Generator.from_key_counter(3, [1, 0], "philox").state.shape.as_list()
            [3]
        """
        counter_t, key_t = _state_tensor(counter), _state_tensor(key)
        counter_t.shape.assert_is_compatible_with([2])
        key_t.shape.assert_is_compatible_with([])
        return cls(state=array_ops.concat([counter_t, array_ops.reshape(key_t, [1])], 0), alg=alg)

    # -- state -------------------------------------------------------------------------------------------------------
    @property
    def state(self) -> Any:
        """The state variable (int64 ``[3]``)."""
        return self._state_var

    @property
    def algorithm(self) -> int:
        """The RNG algorithm's id (1: Philox)."""
        return self._alg

    @property
    def key(self) -> Tensor:
        """The current key (the state's last word)."""
        return self._state_var[-1]

    def reset(self, state: Any) -> Tensor:
        """An op setting the state to ``state`` (TF1 graph mode's ``reset`` builds the assignment but returns None,
        so it can never run there; here it is returned).

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     tf.random.Generator.from_seed(1).reset([0, 0, 1]).op.type
            'Assign'
        """
        state_t = _state_tensor(state)
        state_t.shape.assert_is_compatible_with([3])
        return self._state_var.assign(state_t)

    def reset_from_seed(self, seed: Any) -> Tensor:
        """An op setting the state to ``create_rng_state(seed)``."""
        return self._state_var.assign(create_rng_state(seed, self._alg))

    def reset_from_key_counter(self, key: Any, counter: Any) -> Tensor:
        """An op setting the state to ``[counter..., key]``."""
        counter_t, key_t = _state_tensor(counter), _state_tensor(key)
        return self._state_var.assign(array_ops.concat([counter_t, array_ops.reshape(key_t, [1])], 0))

    def skip(self, delta: Any) -> Tensor:
        """An op advancing the counter as ``delta`` draws would; it returns the state before (TF's
        ``RngReadAndSkip``)."""
        alg = convert_to_tensor(self._alg, dtype=dtypes.int32)
        delta_t = math_ops.cast(delta, dtypes.int64)
        state = convert_to_tensor(self._state_var, as_ref=True)
        with get_default_graph().colocate_with(self._state_var.op):
            return make_op("RngReadAndSkip", [state, alg, delta_t], name="RngReadAndSkip").outputs[0]

    def _key_counter(self, shape: Tensor) -> tuple[Tensor, Tensor]:
        counter_key = self.skip(math_ops.reduce_prod(shape))
        return counter_key[2:3], counter_key[:2]

    def _v2(self, op_type: str, shape: Tensor, dtype: dtypes.DType, extra: list[Any], name: str) -> Tensor:
        key, counter = self._key_counter(shape)
        alg = convert_to_tensor(self._alg, dtype=dtypes.int32, name="alg")
        attrs = {"dtype": dtype, "Tshape": shape.dtype}
        return make_op(op_type, [shape, key, counter, alg, *extra], attrs, name=name).outputs[0]

    # -- draws -------------------------------------------------------------------------------------------------------
    def normal(
        self, shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = dtypes.float32, name: str | None = None
    ) -> Tensor:
        """Normal values (TF's Box-Muller on this generator's stream).

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     tf.random.Generator.from_seed(1).normal([2, 3]).shape.as_list()
            [2, 3]
        """
        dtype = dtypes.as_dtype(dtype)
        with name_scope(name, "stateful_normal", [shape, mean, stddev]) as scope:
            shape_t = _shape_tensor(shape)
            mean_t = convert_to_tensor(mean, dtype=dtype, name="mean")
            stddev_t = convert_to_tensor(stddev, dtype=dtype, name="stddev")
            rnd = self._v2("StatelessRandomNormalV2", shape_t, dtype, [], "StatelessRandomNormalV2")
            return math_ops.add(math_ops.multiply(rnd, stddev_t), mean_t, name=scope)

    def truncated_normal(
        self, shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = dtypes.float32, name: str | None = None
    ) -> Tensor:
        """Normal values redrawn beyond two standard deviations.

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     tf.random.Generator.from_seed(1).truncated_normal([4]).dtype.name
            'float32'
        """
        dtype = dtypes.as_dtype(dtype)
        with name_scope(name, "truncated_normal", [shape, mean, stddev]) as scope:
            shape_t = _shape_tensor(shape)
            mean_t = convert_to_tensor(mean, dtype=dtype, name="mean")
            stddev_t = convert_to_tensor(stddev, dtype=dtype, name="stddev")
            rnd = self._v2("StatelessTruncatedNormalV2", shape_t, dtype, [], "StatelessTruncatedNormalV2")
            return math_ops.add(math_ops.multiply(rnd, stddev_t), mean_t, name=scope)

    def uniform(
        self, shape: Any, minval: Any = 0, maxval: Any = None, dtype: Any = dtypes.float32, name: str | None = None
    ) -> Tensor:
        """Uniform values in ``[minval, maxval)``; for integers both bounds, or neither (the type's full range).

        Raises:
            ValueError: one integer bound without the other.

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     tf.random.Generator.from_seed(1).uniform([3], 0, 5, dtype=tf.int64).dtype.name
            'int64'
        """
        dtype = dtypes.as_dtype(dtype)
        if dtype.is_integer:
            if (minval is None) != (maxval is None):
                raise ValueError(
                    f"For integer dtype {dtype}, minval and maxval must be both `None` or both non-`None`; got "
                    f"minval={minval} and maxval={maxval}"
                )
        elif maxval is None:
            maxval = 1
        with name_scope(name, "stateful_uniform", [shape, minval, maxval]) as scope:
            shape_t = _shape_tensor(shape)
            if dtype.is_integer and minval is None:
                return self._v2("StatelessRandomUniformFullIntV2", shape_t, dtype, [], scope)
            min_t = convert_to_tensor(minval, dtype=dtype, name="min")
            max_t = convert_to_tensor(maxval, dtype=dtype, name="max")
            if dtype.is_integer:
                return self._v2("StatelessRandomUniformIntV2", shape_t, dtype, [min_t, max_t], scope)
            rnd = self._v2("StatelessRandomUniformV2", shape_t, dtype, [], "StatelessRandomUniformV2")
            return math_ops.add(math_ops.multiply(rnd, math_ops.subtract(max_t, min_t)), min_t, name=scope)

    def uniform_full_int(self, shape: Any, dtype: Any = dtypes.int64, name: str | None = None) -> Tensor:
        """Integers over the whole range of ``dtype`` (int32 or int64; TF's default uint64 words read as int64).

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     tf.random.Generator.from_seed(1).uniform_full_int([2]).dtype.name
            'int64'
        """
        dtype = dtypes.as_dtype(dtype)
        if dtype not in (dtypes.int32, dtypes.int64):
            raise ValueError(f"uniform_full_int draws int32 or int64 here, got {dtype.name}")
        with name_scope(name, "stateful_uniform_full_int", [shape]) as scope:
            return self._v2("StatelessRandomUniformFullIntV2", _shape_tensor(shape), dtype, [], scope)

    def binomial(
        self, shape: Any, counts: Any, probs: Any, dtype: Any = dtypes.int32, name: str | None = None
    ) -> Tensor:
        """Binomial(counts, probs) samples of ``shape`` (which ends with the parameters' broadcast shape).

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     tf.random.Generator.from_seed(234).binomial([2], [10.0, 20.0], [0.8]).shape.as_list()
            [2]
        """
        dtype = dtypes.as_dtype(dtype)
        with name_scope(name, "binomial", [shape, counts, probs]) as scope:
            counts_t = convert_to_tensor(counts, name="counts")
            probs_t = convert_to_tensor(probs, dtype=counts_t.dtype, name="probs")
            shape_t = _shape_tensor(shape)
            alg = convert_to_tensor(self._alg, dtype=dtypes.int64)
            attrs = {"S": shape_t.dtype, "T": counts_t.dtype, "dtype": dtype}
            inputs = [convert_to_tensor(self._state_var, as_ref=True), alg, shape_t, counts_t, probs_t]
            with get_default_graph().colocate_with(self._state_var.op):
                return make_op("StatefulRandomBinomial", inputs, attrs, name=scope).outputs[0]

    def make_seeds(self, count: int = 1) -> Tensor:
        """``[2, count]`` int64 seeds for the stateless ops (new keys, zeros below them).

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     tf.random.Generator.from_seed(1).make_seeds(4).shape.as_list()
            [2, 4]
        """
        keys = self.uniform_full_int([count], dtype=dtypes.int64)
        return array_ops.stack([keys, array_ops.zeros_like(keys)])

    def split(self, count: int = 1) -> list[Generator]:
        """``count`` new generators whose keys this one draws (their counters start at zero; TF 2.21's ``split``
        fails in graph mode, making variables from a list of tensors).

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     len(tf.random.Generator.from_seed(1).split(3))
            3
        """
        keys = self.uniform_full_int([count], dtype=dtypes.int64)
        zeros = array_ops.zeros([2], dtypes.int64)
        return [
            Generator(state=array_ops.concat([zeros, array_ops.reshape(key, [1])], 0), alg=self._alg)
            for key in array_ops.unstack(keys, num=count)
        ]


_global_generator: Generator | None = None


def get_global_generator() -> Generator:
    """The process's global generator, made from fresh entropy in the default graph on first use (as TF's).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> tf.random.set_global_generator(None)
        >>> with tf.Graph().as_default():
        ...     tf.random.get_global_generator() is tf.random.get_global_generator()
        True
        >>> tf.random.set_global_generator(None)
    """
    global _global_generator
    if _global_generator is None:
        _global_generator = Generator.from_non_deterministic_state()
    return _global_generator


def set_global_generator(generator: Generator | None) -> None:
    """Replaces the global generator (None: the next :func:`get_global_generator` makes a new one).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     g = tf.random.Generator.from_seed(5)
        ...     tf.random.set_global_generator(g)
        ...     print(tf.random.get_global_generator() is g)
        ...     tf.random.set_global_generator(None)
        True
    """
    global _global_generator
    _global_generator = generator
