"""TF's fused optimizer update ops (``ApplyGradientDescent``, ``ApplyAdam``, ``SparseApplyMomentum``, ...).

Each op takes the variable (and the optimizer's slot variables) by reference
and updates it in place, returning the reference to the variable. Kernels
evaluate the same float operations in the same order as TensorFlow's CPU
kernels (``training_ops.cc``), so a model trained here follows TF's
trajectory to float32 precision. Results are not bit-identical everywhere:
TF's Eigen kernels use fast-math ``rsqrt``, torch's vectorised ``sqrt`` is
not always correctly rounded, and ``ApplyGradientDescent`` with a constant
learning rate uses torch's fused ``var - lr * delta`` (the training hot path);
each differs from TF by at most an ulp per element and step.

Scalar hyper-parameters (``lr``, ``beta1``, ...) that are ``Const`` ops are
read once when the step is compiled, together with the quantities derived
from them (``1 - beta1`` ...), computed in the variable's dtype exactly as TF
does; the per-step path then only checks that the constant was not fed.

The sparse ops (used for ``IndexedSlices`` gradients) update only the rows
named by ``indices``. Repeated indices are applied one after the other, as
TF's CPU kernels do; TF1's optimizers sum duplicates before calling them.

Example:
    >>> import dtf_notebook as tf
    >>> from dtf_notebook.ops import training_ops
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable([1.0, 2.0])
    ...     step = training_ops.apply_gradient_descent(w, 0.5, [2.0, 2.0])
    ...     with tf.Session() as sess:
    ...         sess.run(w.initializer)
    ...         print(sess.run(step))
    [0. 1.]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.ops.op_helpers import check_dtype, constant_value, make_op
from dtf_notebook.runtime import values as runtime_values

__all__ = [
    "apply_gradient_descent",
    "apply_momentum",
    "apply_adagrad",
    "apply_rms_prop",
    "apply_centered_rms_prop",
    "apply_adam",
    "sparse_apply_momentum",
    "sparse_apply_adagrad",
    "sparse_apply_rms_prop",
    "sparse_apply_centered_rms_prop",
]

_FLOAT_TYPES = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
_INDEX_TYPES = (dtypes.int32, dtypes.int64)


# ---- building ---------------------------------------------------------------------------------
def _ref_input(value: Any, op_type: str, arg: str) -> Tensor:
    t = convert_to_tensor(value, as_ref=True)
    if not t.is_ref:
        raise TypeError(f"'{op_type}' Op requires that input '{arg}' be a mutable tensor (e.g.: a tf.Variable)")
    return t


def _value_input(value: Any, dtype: dtypes.DType, op_type: str, arg: str) -> Tensor:
    if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
        t = convert_to_tensor(value)
        if t.dtype is not dtype:
            raise TypeError(
                f"Input '{arg}' of '{op_type}' Op has type {t.dtype.name} that does not match "
                f"type {dtype.name} of argument 'var'."
            )
        return t
    return convert_to_tensor(value, dtype=dtype, name=arg)


def _build(op_type: str, args: Sequence[tuple[str, Any]], attrs: dict[str, Any], name: str | None) -> Tensor:
    """Creates ``op_type`` from ``(arg_name, value)`` pairs: refs first (the registry's ref_inputs), then values."""
    n_refs = len(_SPECS[op_type].refs)
    refs = [_ref_input(v, op_type, arg) for arg, v in args[:n_refs]]
    check_dtype(refs[0], _FLOAT_TYPES, op_type, "var")
    dtype = refs[0].dtype
    inputs = list(refs)
    for arg, v in args[n_refs:]:
        if arg == "indices":
            t = convert_to_tensor(v, name="indices")
            check_dtype(t, _INDEX_TYPES, op_type, "indices")
            inputs.append(t)
        else:
            inputs.append(_value_input(v, dtype, op_type, arg))
    return make_op(op_type, inputs, attrs, name=name or op_type).outputs[0]


# ---- output inference: TF's shape functions --------------------------------------------------
class _Spec:
    """Argument layout of one op: ref args, scalar args, the grad arg and (sparse ops) the indices arg."""

    def __init__(self, args: Sequence[str], refs: Sequence[str], scalars: Sequence[str], sparse: bool) -> None:
        self.args = tuple(args)
        self.refs = tuple(refs)
        self.scalars = tuple(scalars)
        self.sparse = sparse
        self.pos = {a: i for i, a in enumerate(args)}
        self.grad = "delta" if "delta" in self.pos else "grad"


_SPECS: dict[str, _Spec] = {}


def _shape_str(s: TensorShape) -> str:
    """A shape as TF's shape functions print it: ``[2,?]``, ``?`` when the rank is unknown."""
    if s.ndims is None:
        return "?"
    return "[" + ",".join("?" if d is None else str(d) for d in s.as_list()) + "]"


def _shapes_str(op: Any) -> str:
    return ", ".join(_shape_str(t.shape) for t in op.inputs)


def _shape_error(op: Any, message: str) -> ValueError:
    return ValueError(f"{message} for '{op.name}' (op: '{op.type}') with input shapes: {_shapes_str(op)}.")


def _merge(op: Any, a: TensorShape, b: TensorShape) -> TensorShape:
    if a.ndims is not None and b.ndims is not None:
        if a.ndims != b.ndims:
            raise _shape_error(op, f"Shapes must be equal rank, but are {a.ndims} and {b.ndims}")
        for i, (x, y) in enumerate(zip(a.as_list(), b.as_list())):
            if x is not None and y is not None and x != y:
                raise _shape_error(
                    op, f"Dimension {i} in both shapes must be equal, but are {x} and {y}. "
                    f"Shapes are {_shape_str(a)} and {_shape_str(b)}."
                )
    return a.merge_with(b)


def _with_rank(op: Any, s: TensorShape, rank: int) -> None:
    if s.ndims is not None and s.ndims != rank:
        raise _shape_error(op, f"Shape must be rank {rank} but is rank {s.ndims}")


def _infer(op: Any) -> list[tuple[dtypes.DType, TensorShape]]:
    spec = _SPECS[op.type]
    inputs = op.inputs
    var = inputs[0]
    for arg, t in zip(spec.args, inputs):
        if arg != "indices" and t.dtype is not var.dtype:
            raise TypeError(
                f"Input '{arg}' of '{op.type}' Op has type {t.dtype.name} that does not match "
                f"type {var.dtype.name} of argument 'var'."
            )
    shape = var.shape
    for arg in spec.refs[1:]:
        shape = _merge(op, shape, inputs[spec.pos[arg]].shape)
    for arg in spec.scalars:
        _with_rank(op, inputs[spec.pos[arg]].shape, 0)
    grad = inputs[spec.pos[spec.grad]].shape
    if not spec.sparse:
        shape = _merge(op, shape, grad)
    else:
        indices = inputs[spec.pos["indices"]].shape
        _with_rank(op, indices, 1)
        if grad.ndims is not None and grad.ndims < 1:
            raise _shape_error(op, f"Shape must be at least rank 1 but is rank {grad.ndims}")
        if grad.ndims is not None and indices.ndims is not None:
            _merge(op, TensorShape(grad.as_list()[:1]), indices)
        if grad.ndims is not None and shape.ndims is not None:
            _merge(op, TensorShape(shape.as_list()[1:]), TensorShape(grad.as_list()[1:]))
    return [(var.dtype, shape)]


def _register(op_type: str, args: str, refs: int, scalars: str, kernel: Callable[[Any, Any], Callable[..., Any]]):
    arg_list = args.split()
    _SPECS[op_type] = _Spec(arg_list, arg_list[:refs], scalars.split(), "indices" in arg_list)
    op_registry.register_op(
        op_type,
        infer=_infer,
        kernel=kernel,
        grad=op_registry.NOT_DIFFERENTIABLE,
        ref_inputs=range(refs),
        ref_outputs=(0,),
        stateful=True,
    )


# ---- kernel helpers ---------------------------------------------------------------------------
class _Scalars:
    """Resolves a kernel's scalar inputs into the quantities its update formula uses.

    ``derive`` maps the scalars (0-d tensors of the variable's dtype) to a tuple
    of quantities. When every scalar is a ``Const``, the tuple is computed once,
    in the variable's dtype (so ``1 - beta1`` rounds as in TF), and kept as
    Python numbers, which torch applies to float32 tensors without further
    rounding. A run then only checks that it receives the same constant
    objects again; a fed constant is compared by value, and anything else
    goes through ``derive`` on the tensors.
    """

    __slots__ = ("_derive", "_cached", "_consts", "_seen", "_checks", "_op")

    def __init__(self, op: Any, args: Sequence[str], derive: Callable[..., tuple]) -> None:
        spec = _SPECS[op.type]
        inputs = [op.inputs[spec.pos[a]] for a in args]
        self._derive = derive
        self._op = op
        self._seen: tuple | None = None
        # Scalars whose static shape does not prove rank 0 are checked at run time (TF's message).
        self._checks = [(i, a) for i, (a, t) in enumerate(zip(args, inputs)) if t.shape.ndims != 0]
        consts = [constant_value(t) for t in inputs]
        self._cached: tuple | None = None
        self._consts: tuple | None = None
        if all(c is not None and c.ndim == 0 for c in consts):
            dtype = runtime_values.torch_dtype(op.inputs[0].dtype)
            tensors = [torch.tensor(c.item(), dtype=dtype) for c in consts]
            self._cached = tuple(float(q) for q in derive(*tensors))
            self._consts = tuple(float(t) for t in tensors)

    def __call__(self, *scalars: Any) -> tuple:
        seen = self._seen
        if seen is not None and all(map(_is, scalars, seen)):
            return self._cached  # type: ignore[return-value]
        for i, arg in self._checks:
            if scalars[i].dim() != 0:
                raise errors.InvalidArgumentError(None, self._op, f"{arg} is not a scalar: {list(scalars[i].shape)}")
        if self._cached is not None and tuple(float(s) for s in scalars) == self._consts:
            self._seen = scalars
            return self._cached
        return self._derive(*scalars)


def _is(a: Any, b: Any) -> bool:
    return a is b


def _dbg(shape: Any) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _check_same(op: Any, var: torch.Tensor, other: torch.Tensor, name: str) -> None:
    if other.shape != var.shape:
        raise errors.InvalidArgumentError(
            None, op, f"var and {name} do not have the same shape{_dbg(var.shape)} {_dbg(other.shape)}"
        )


def _locking(run: Callable[..., Any], n_refs: int) -> Callable[..., Any]:
    """Wraps ``run`` to hold the locks of its ref inputs (ordered by id, so two updates never deadlock)."""

    def locked(*args: Any) -> Any:
        locks = sorted({id(r.lock): r.lock for r in args[:n_refs]}.items())
        for _, lock in locks:
            lock.acquire()
        try:
            return run(*args)
        finally:
            for _, lock in reversed(locks):
                lock.release()

    return locked


def _dense_kernel(body: Callable[..., Callable[..., None]]):
    """Kernel factory for a dense op: ``body(op, ctx)`` returns ``update(refs_values..., other_inputs...)``.

    The wrapper reads the ref inputs (uninitialised ones raise
    FailedPreconditionError), checks every slot and the gradient have the
    variable's shape, calls ``update`` and returns the variable's reference.
    """

    def factory(op: Any, ctx: Any) -> Callable[..., Any]:
        spec = _SPECS[op.type]
        n_refs = len(spec.refs)
        update = body(op, ctx)
        checks = [(i, a) for i, a in enumerate(spec.args) if i > 0 and (i < n_refs or a == spec.grad)]

        def run(*args: Any) -> Any:
            values = [r.read() for r in args[:n_refs]] + list(args[n_refs:])
            var = values[0]
            for i, name in checks:
                if values[i].shape != var.shape:
                    _check_same(op, var, values[i], name)
            update(*values)
            return args[0]

        return _locking(run, n_refs) if op.get_attr("use_locking") else run

    return factory


def _sparse_kernel(body: Callable[..., Callable[..., None]]):
    """Kernel factory for a sparse op: ``body(op, ctx)`` returns ``rows(refs..., scalars..., grad, idx)``.

    ``rows`` updates the rows ``idx`` (unique, int64) from ``grad`` rows. The
    wrapper validates shapes and indices as TF does, and calls ``rows`` once
    for unique indices or once per index (in order) when some repeat.
    """

    def factory(op: Any, ctx: Any) -> Callable[..., Any]:
        spec = _SPECS[op.type]
        n_refs = len(spec.refs)
        g_pos, i_pos = spec.pos["grad"], spec.pos["indices"]
        other_pos = [i for i in range(n_refs, len(spec.args)) if i not in (g_pos, i_pos)]
        # Indices straight from a Unique op (TF1 optimizers deduplicate first) need no duplicate check.
        indices_t = op.inputs[i_pos]
        known_unique = indices_t.op.type == "Unique" and indices_t.value_index == 0
        rows = body(op, ctx)

        def run(*args: Any) -> Any:
            refs = [r.read() for r in args[:n_refs]]
            var = refs[0]
            for value, name in zip(refs[1:], spec.refs[1:]):
                if value.shape != var.shape:
                    _check_same(op, var, value, name)
            grad, indices = args[g_pos], args[i_pos]
            _check_sparse(op, var, grad, indices)
            n = indices.shape[0]
            if n == 0:
                return args[0]
            idx = indices.long()
            lo, hi = int(idx.min()), int(idx.max())
            if lo < 0 or hi >= var.shape[0]:
                bad = int(torch.nonzero((idx < 0) | (idx >= var.shape[0]))[0])
                raise errors.InvalidArgumentError(
                    None, op, f"Index {int(idx[bad])} at offset {bad} in indices is out of range"
                )
            others = [args[i] for i in other_pos]
            if known_unique or n == 1 or torch.unique(idx).shape[0] == n:
                rows(*refs, *others, grad, idx)
            else:
                for i in range(n):
                    rows(*refs, *others, grad[i:i + 1], idx[i:i + 1])
            return args[0]

        return _locking(run, n_refs) if op.get_attr("use_locking") else run

    return factory


def _check_sparse(op: Any, var: torch.Tensor, grad: torch.Tensor, indices: torch.Tensor) -> None:
    if indices.dim() != 1:
        raise errors.InvalidArgumentError(None, op, "indices must be one-dimensional")
    if var.dim() < 1:
        raise errors.InvalidArgumentError(None, op, "var must be at least 1 dimensional")
    if grad.dim() != var.dim():
        raise errors.InvalidArgumentError(None, op, "var and grad must have the same number of dimensions")
    for d in range(1, var.dim()):
        if var.shape[d] != grad.shape[d]:
            raise errors.InvalidArgumentError(None, op, f"var and grad must match in dimension {d}")
    if grad.shape[0] != indices.shape[0]:
        raise errors.InvalidArgumentError(None, op, "grad must be the same size as indices in the first dimension.")


# ---- ApplyGradientDescent ---------------------------------------------------------------------
def apply_gradient_descent(var: Any, alpha: Any, delta: Any, use_locking: bool = False,
                           name: str | None = None) -> Tensor:
    """``var -= alpha * delta`` in place; returns the variable's reference.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable([1.0, 2.0])
        ...     step = apply_gradient_descent(w, 0.1, [1.0, 10.0])
        ...     with tf.Session() as sess:
        ...         sess.run(w.initializer)
        ...         print(sess.run(step))
        [0.9 1. ]
    """
    return _build("ApplyGradientDescent", [("var", var), ("alpha", alpha), ("delta", delta)],
                  {"use_locking": bool(use_locking)}, name)


def _gd_kernel(op: Any, ctx: Any) -> Callable[..., Any]:
    scalars = _Scalars(op, ["alpha"], lambda alpha: (alpha,))
    use_locking = op.get_attr("use_locking")

    def run(var_ref: Any, alpha: Any, delta: Any) -> Any:
        var = var_ref.read()
        if delta.shape != var.shape:
            _check_same(op, var, delta, "delta")
        (lr,) = scalars(alpha)
        if type(lr) is float:
            # One fused kernel (var - lr*delta, possibly with an FMA): this is the benchmarked hot path.
            var.sub_(delta, alpha=lr)
        else:
            var.sub_(delta * lr)
        return var_ref

    return _locking(run, 1) if use_locking else run


# ---- ApplyMomentum / SparseApplyMomentum ----------------------------------------------------
def apply_momentum(var: Any, accum: Any, lr: Any, grad: Any, momentum: Any, use_locking: bool = False,
                   use_nesterov: bool = False, name: str | None = None) -> Tensor:
    """``accum = accum * momentum + grad; var -= accum * lr`` (Nesterov: ``var -= grad * lr + accum * momentum * lr``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable([1.0]); acc = tf.Variable([1.0])
        ...     step = apply_momentum(w, acc, 0.5, [1.0], 0.5)
        ...     with tf.Session() as sess:
        ...         _ = sess.run([w.initializer, acc.initializer])
        ...         print(sess.run(step), sess.run(acc))
        [0.25] [1.5]
    """
    return _build("ApplyMomentum", [("var", var), ("accum", accum), ("lr", lr), ("grad", grad),
                                    ("momentum", momentum)],
                  {"use_locking": bool(use_locking), "use_nesterov": bool(use_nesterov)}, name)


def _momentum_kernel(op: Any, ctx: Any) -> Callable[..., None]:
    scalars = _Scalars(op, ["lr", "momentum"], lambda lr, m: (lr, m))
    nesterov = op.get_attr("use_nesterov")

    def update(var: torch.Tensor, accum: torch.Tensor, lr: Any, grad: torch.Tensor, momentum: Any) -> None:
        lr, momentum = scalars(lr, momentum)
        accum.mul_(momentum).add_(grad)
        if nesterov:
            var.sub_(grad * lr + accum * momentum * lr)
        else:
            var.sub_(accum * lr)

    return update


def sparse_apply_momentum(var: Any, accum: Any, lr: Any, grad: Any, indices: Any, momentum: Any,
                          use_locking: bool = False, use_nesterov: bool = False, name: str | None = None) -> Tensor:
    """Momentum update of the rows ``indices`` of ``var`` and ``accum`` (``grad`` has one row per index).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable([1.0, 1.0]); acc = tf.Variable([0.0, 0.0])
        ...     step = sparse_apply_momentum(w, acc, 0.5, [2.0], [1], 0.9)
        ...     with tf.Session() as sess:
        ...         _ = sess.run([w.initializer, acc.initializer])
        ...         print(sess.run(step))
        [1. 0.]
    """
    return _build("SparseApplyMomentum", [("var", var), ("accum", accum), ("lr", lr), ("grad", grad),
                                          ("indices", indices), ("momentum", momentum)],
                  {"use_locking": bool(use_locking), "use_nesterov": bool(use_nesterov)}, name)


def _sparse_momentum_kernel(op: Any, ctx: Any) -> Callable[..., None]:
    # TF's sparse kernel scales by (lr * momentum), computed once, where the dense one scales twice.
    scalars = _Scalars(op, ["lr", "momentum"], lambda lr, m: (lr, m, lr * m))
    nesterov = op.get_attr("use_nesterov")

    def rows(var: torch.Tensor, accum: torch.Tensor, lr: Any, momentum: Any, grad: torch.Tensor,
             idx: torch.Tensor) -> None:
        lr, momentum, lr_momentum = scalars(lr, momentum)
        a = accum.index_select(0, idx).mul_(momentum).add_(grad)
        accum.index_copy_(0, idx, a)
        if nesterov:
            delta = grad * lr + a * lr_momentum
        else:
            delta = a * lr
        var.index_add_(0, idx, delta, alpha=-1)

    return rows


# ---- ApplyAdagrad / SparseApplyAdagrad --------------------------------------------------------
def apply_adagrad(var: Any, accum: Any, lr: Any, grad: Any, use_locking: bool = False, update_slots: bool = True,
                  name: str | None = None) -> Tensor:
    """``accum += grad * grad; var -= grad * lr * rsqrt(accum)``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable([1.0]); acc = tf.Variable([0.0])
        ...     step = apply_adagrad(w, acc, 0.5, [2.0])
        ...     with tf.Session() as sess:
        ...         _ = sess.run([w.initializer, acc.initializer])
        ...         print(sess.run(step), sess.run(acc))
        [0.5] [4.]
    """
    return _build("ApplyAdagrad", [("var", var), ("accum", accum), ("lr", lr), ("grad", grad)],
                  {"use_locking": bool(use_locking), "update_slots": bool(update_slots)}, name)


def _adagrad_kernel(op: Any, ctx: Any) -> Callable[..., None]:
    scalars = _Scalars(op, ["lr"], lambda lr: (lr,))
    update_slots = op.get_attr("update_slots")

    def update(var: torch.Tensor, accum: torch.Tensor, lr: Any, grad: torch.Tensor) -> None:
        (lr,) = scalars(lr)
        if update_slots:
            accum.add_(grad * grad)
        var.sub_(grad * lr * torch.rsqrt(accum))

    return update


def sparse_apply_adagrad(var: Any, accum: Any, lr: Any, grad: Any, indices: Any, use_locking: bool = False,
                         update_slots: bool = True, name: str | None = None) -> Tensor:
    """Adagrad update of the rows ``indices`` of ``var`` and ``accum``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable([1.0, 1.0]); acc = tf.Variable([0.0, 0.0])
        ...     step = sparse_apply_adagrad(w, acc, 0.5, [2.0], [0])
        ...     with tf.Session() as sess:
        ...         _ = sess.run([w.initializer, acc.initializer])
        ...         print(sess.run(step))
        [0.5 1. ]
    """
    return _build("SparseApplyAdagrad", [("var", var), ("accum", accum), ("lr", lr), ("grad", grad),
                                         ("indices", indices)],
                  {"use_locking": bool(use_locking), "update_slots": bool(update_slots)}, name)


def _sparse_adagrad_kernel(op: Any, ctx: Any) -> Callable[..., None]:
    scalars = _Scalars(op, ["lr"], lambda lr: (lr,))
    update_slots = op.get_attr("update_slots")

    def rows(var: torch.Tensor, accum: torch.Tensor, lr: Any, grad: torch.Tensor, idx: torch.Tensor) -> None:
        (lr,) = scalars(lr)
        a = accum.index_select(0, idx)
        if update_slots:
            a.add_(grad * grad)
            accum.index_copy_(0, idx, a)
        if var[0].numel() > 1:
            delta = grad * lr * torch.rsqrt(a)
        else:
            # TF's scalar-row loop divides by sqrt instead of multiplying by rsqrt.
            delta = grad * lr / torch.sqrt(a)
        var.index_add_(0, idx, delta, alpha=-1)

    return rows


# ---- ApplyRMSProp / ApplyCenteredRMSProp and their sparse forms ---------------------------------
def apply_rms_prop(var: Any, ms: Any, mom: Any, lr: Any, rho: Any, momentum: Any, epsilon: Any, grad: Any,
                   use_locking: bool = False, name: str | None = None) -> Tensor:
    """RMSProp: ``ms += (grad² - ms) * (1 - rho); mom = mom * momentum + grad * lr / sqrt(ms + epsilon); var -= mom``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable([1.0]); ms = tf.Variable([1.0]); mom = tf.Variable([0.0])
        ...     step = apply_rms_prop(w, ms, mom, 0.5, 0.0, 0.0, 0.0, [2.0])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print(sess.run(step))
        [0.5]
    """
    return _build("ApplyRMSProp", [("var", var), ("ms", ms), ("mom", mom), ("lr", lr), ("rho", rho),
                                   ("momentum", momentum), ("epsilon", epsilon), ("grad", grad)],
                  {"use_locking": bool(use_locking)}, name)


def _rmsprop_scalars(lr: Any, rho: Any, momentum: Any, epsilon: Any) -> tuple:
    return lr, rho, 1 - rho, momentum, epsilon


def _rmsprop_kernel(op: Any, ctx: Any) -> Callable[..., None]:
    scalars = _Scalars(op, ["lr", "rho", "momentum", "epsilon"], _rmsprop_scalars)

    def update(var: torch.Tensor, ms: torch.Tensor, mom: torch.Tensor, lr: Any, rho: Any, momentum: Any,
               epsilon: Any, grad: torch.Tensor) -> None:
        lr, _, one_minus_rho, momentum, epsilon = scalars(lr, rho, momentum, epsilon)
        ms.add_((grad * grad - ms) * one_minus_rho)
        mom.mul_(momentum).add_(grad * lr / torch.sqrt(ms + epsilon))
        var.sub_(mom)

    return update


def apply_centered_rms_prop(var: Any, mg: Any, ms: Any, mom: Any, lr: Any, rho: Any, momentum: Any, epsilon: Any,
                            grad: Any, use_locking: bool = False, name: str | None = None) -> Tensor:
    """Centered RMSProp: like :func:`apply_rms_prop` with ``ms - mg²`` (``mg``: mean gradient) in the denominator.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w, mg, ms, mom = (tf.Variable([v]) for v in (1.0, 0.0, 6.0, 0.0))
        ...     step = apply_centered_rms_prop(w, mg, ms, mom, 0.5, 0.5, 0.0, 0.0, [2.0])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print(sess.run(step))
        [0.5]
    """
    return _build("ApplyCenteredRMSProp", [("var", var), ("mg", mg), ("ms", ms), ("mom", mom), ("lr", lr),
                                           ("rho", rho), ("momentum", momentum), ("epsilon", epsilon), ("grad", grad)],
                  {"use_locking": bool(use_locking)}, name)


def _centered_rmsprop_kernel(op: Any, ctx: Any) -> Callable[..., None]:
    scalars = _Scalars(op, ["lr", "rho", "momentum", "epsilon"], _rmsprop_scalars)

    def update(var: torch.Tensor, mg: torch.Tensor, ms: torch.Tensor, mom: torch.Tensor, lr: Any, rho: Any,
               momentum: Any, epsilon: Any, grad: torch.Tensor) -> None:
        lr, _, one_minus_rho, momentum, epsilon = scalars(lr, rho, momentum, epsilon)
        ms.add_((grad * grad - ms) * one_minus_rho)
        mg.add_((grad - mg) * one_minus_rho)
        denom = (ms - mg * mg) + epsilon
        mom.mul_(momentum).add_(grad * lr / torch.sqrt(denom))
        var.sub_(mom)

    return update


def sparse_apply_rms_prop(var: Any, ms: Any, mom: Any, lr: Any, rho: Any, momentum: Any, epsilon: Any, grad: Any,
                          indices: Any, use_locking: bool = False, name: str | None = None) -> Tensor:
    """RMSProp update of the rows ``indices`` (TF's sparse formula: ``ms = ms * rho + grad² * (1 - rho)``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable([1.0, 1.0]); ms = tf.Variable([1.0, 1.0]); mom = tf.Variable([0.0, 0.0])
        ...     step = sparse_apply_rms_prop(w, ms, mom, 0.5, 0.0, 0.0, 0.0, [2.0], [1])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print(sess.run(step))
        [1.  0.5]
    """
    return _build("SparseApplyRMSProp", [("var", var), ("ms", ms), ("mom", mom), ("lr", lr), ("rho", rho),
                                         ("momentum", momentum), ("epsilon", epsilon), ("grad", grad),
                                         ("indices", indices)],
                  {"use_locking": bool(use_locking)}, name)


def _sparse_rmsprop_kernel(op: Any, ctx: Any) -> Callable[..., None]:
    scalars = _Scalars(op, ["lr", "rho", "momentum", "epsilon"], _rmsprop_scalars)

    def rows(var: torch.Tensor, ms: torch.Tensor, mom: torch.Tensor, lr: Any, rho: Any, momentum: Any,
             epsilon: Any, grad: torch.Tensor, idx: torch.Tensor) -> None:
        lr, rho, one_minus_rho, momentum, epsilon = scalars(lr, rho, momentum, epsilon)
        ms_rows = ms.index_select(0, idx).mul_(rho).add_(grad * grad * one_minus_rho)
        ms.index_copy_(0, idx, ms_rows)
        mom_rows = mom.index_select(0, idx).mul_(momentum).add_(torch.rsqrt(ms_rows + epsilon) * lr * grad)
        mom.index_copy_(0, idx, mom_rows)
        var.index_add_(0, idx, mom_rows, alpha=-1)

    return rows


def sparse_apply_centered_rms_prop(var: Any, mg: Any, ms: Any, mom: Any, lr: Any, rho: Any, momentum: Any,
                                   epsilon: Any, grad: Any, indices: Any, use_locking: bool = False,
                                   name: str | None = None) -> Tensor:
    """Centered RMSProp update of the rows ``indices`` of ``var`` and its slots.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w, mg, ms, mom = (tf.Variable([v, v]) for v in (1.0, 0.0, 6.0, 0.0))
        ...     step = sparse_apply_centered_rms_prop(w, mg, ms, mom, 0.5, 0.5, 0.0, 0.0, [2.0], [0])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print(sess.run(step))
        [0.5 1. ]
    """
    return _build("SparseApplyCenteredRMSProp", [("var", var), ("mg", mg), ("ms", ms), ("mom", mom), ("lr", lr),
                                                 ("rho", rho), ("momentum", momentum), ("epsilon", epsilon),
                                                 ("grad", grad), ("indices", indices)],
                  {"use_locking": bool(use_locking)}, name)


def _sparse_centered_rmsprop_kernel(op: Any, ctx: Any) -> Callable[..., None]:
    scalars = _Scalars(op, ["lr", "rho", "momentum", "epsilon"], _rmsprop_scalars)

    def rows(var: torch.Tensor, mg: torch.Tensor, ms: torch.Tensor, mom: torch.Tensor, lr: Any, rho: Any,
             momentum: Any, epsilon: Any, grad: torch.Tensor, idx: torch.Tensor) -> None:
        lr, rho, one_minus_rho, momentum, epsilon = scalars(lr, rho, momentum, epsilon)
        ms_rows = ms.index_select(0, idx).mul_(rho).add_(grad * grad * one_minus_rho)
        ms.index_copy_(0, idx, ms_rows)
        mg_rows = mg.index_select(0, idx).mul_(rho).add_(grad * one_minus_rho)
        mg.index_copy_(0, idx, mg_rows)
        denom = ms_rows + epsilon - mg_rows * mg_rows
        mom_rows = mom.index_select(0, idx).mul_(momentum).add_(torch.rsqrt(denom) * lr * grad)
        mom.index_copy_(0, idx, mom_rows)
        var.index_add_(0, idx, mom_rows, alpha=-1)

    return rows


# ---- ApplyAdam --------------------------------------------------------------------------------
def apply_adam(var: Any, m: Any, v: Any, beta1_power: Any, beta2_power: Any, lr: Any, beta1: Any, beta2: Any,
               epsilon: Any, grad: Any, use_locking: bool = False, use_nesterov: bool = False,
               name: str | None = None) -> Tensor:
    """Adam: ``m += (g - m)(1 - β1); v += (g² - v)(1 - β2); var -= m·lr_t / (√v + ε)``, ``lr_t = lr·√(1-β2ᵗ)/(1-β1ᵗ)``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w, m, v = tf.Variable([1.0]), tf.Variable([0.0]), tf.Variable([0.0])
        ...     step = apply_adam(w, m, v, 0.9, 0.999, 0.1, 0.9, 0.999, 1e-8, [3.0])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print(sess.run(step).round(4))
        [0.9]
    """
    return _build("ApplyAdam", [("var", var), ("m", m), ("v", v), ("beta1_power", beta1_power),
                                ("beta2_power", beta2_power), ("lr", lr), ("beta1", beta1), ("beta2", beta2),
                                ("epsilon", epsilon), ("grad", grad)],
                  {"use_locking": bool(use_locking), "use_nesterov": bool(use_nesterov)}, name)


def _adam_kernel(op: Any, ctx: Any) -> Callable[..., None]:
    step_size = _Scalars(op, ["lr", "beta1_power", "beta2_power"],
                         lambda lr, b1p, b2p: (lr * torch.sqrt(1 - b2p) / (1 - b1p),))
    betas = _Scalars(op, ["beta1", "beta2", "epsilon"], lambda b1, b2, eps: (b1, 1 - b1, 1 - b2, eps))
    nesterov = op.get_attr("use_nesterov")

    def update(var: torch.Tensor, m: torch.Tensor, v: torch.Tensor, beta1_power: Any, beta2_power: Any, lr: Any,
               beta1: Any, beta2: Any, epsilon: Any, grad: torch.Tensor) -> None:
        (alpha,) = step_size(lr, beta1_power, beta2_power)
        b1, one_minus_b1, one_minus_b2, eps = betas(beta1, beta2, epsilon)
        m.add_((grad - m) * one_minus_b1)
        v.add_((grad * grad - v) * one_minus_b2)
        if nesterov:
            var.sub_((grad * one_minus_b1 + b1 * m) * alpha / (torch.sqrt(v) + eps))
        else:
            var.sub_(m * alpha / (torch.sqrt(v) + eps))

    return update


_register("ApplyGradientDescent", "var alpha delta", 1, "alpha", _gd_kernel)
_register("ApplyMomentum", "var accum lr grad momentum", 2, "lr momentum", _dense_kernel(_momentum_kernel))
_register("SparseApplyMomentum", "var accum lr grad indices momentum", 2, "lr momentum",
          _sparse_kernel(_sparse_momentum_kernel))
_register("ApplyAdagrad", "var accum lr grad", 2, "lr", _dense_kernel(_adagrad_kernel))
_register("SparseApplyAdagrad", "var accum lr grad indices", 2, "lr", _sparse_kernel(_sparse_adagrad_kernel))
_register("ApplyRMSProp", "var ms mom lr rho momentum epsilon grad", 3, "lr rho momentum epsilon",
          _dense_kernel(_rmsprop_kernel))
_register("ApplyCenteredRMSProp", "var mg ms mom lr rho momentum epsilon grad", 4, "lr rho momentum epsilon",
          _dense_kernel(_centered_rmsprop_kernel))
_register("SparseApplyRMSProp", "var ms mom lr rho momentum epsilon grad indices", 3, "lr rho momentum epsilon",
          _sparse_kernel(_sparse_rmsprop_kernel))
_register("SparseApplyCenteredRMSProp", "var mg ms mom lr rho momentum epsilon grad indices", 4,
          "lr rho momentum epsilon", _sparse_kernel(_sparse_centered_rmsprop_kernel))
_register("ApplyAdam", "var m v beta1_power beta2_power lr beta1 beta2 epsilon grad", 3,
          "beta1_power beta2_power lr beta1 beta2 epsilon", _dense_kernel(_adam_kernel))
