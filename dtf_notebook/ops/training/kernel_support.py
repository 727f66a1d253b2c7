"""What the kernels of the update ops share: constant scalars, shape and index checks, locking, wrappers.

:func:`dense_kernel` and :func:`sparse_kernel` turn an op's update formula into its kernel: they
read the ref inputs, validate shapes (and, sparse, indices) with TF's messages, hold the
variables' locks when ``use_locking`` is set, and return the variable's reference.
:class:`Scalars` resolves the scalar hyper-parameters once per compiled step when they are
constants, exactly rounded as TF computes them.

Example:
    >>> import torch
    >>> rmsprop_scalars(*(torch.tensor(v) for v in (0.1, 0.9, 0.0, 1e-7)))[2]
    tensor(0.1000)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from dtf_notebook import errors
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.op_helpers import constant_value
from dtf_notebook.ops.training.op_specs import SPECS
from dtf_notebook.runtime import values as runtime_values


class Scalars:
    """Resolves a kernel's scalar inputs into the quantities its update formula uses.

    ``derive`` maps the scalars (0-d tensors of the variable's dtype) to a tuple
    of quantities. When every scalar is a ``Const``, the tuple is computed once,
    in the variable's dtype (so ``1 - beta1`` rounds as in TF), and kept as
    Python numbers, which torch applies to float32 tensors without further
    rounding. A run then only checks that it receives the same constant
    objects again; a fed constant is compared by value, and anything else
    goes through ``derive`` on the tensors.

    Example:
        >>> import dtf_notebook as tf
        >>> from dtf_notebook.ops.training.op_specs import build
        >>> with tf.Graph().as_default():
        ...     step = build("ApplyGradientDescent", [tf.Variable([1.0]), 0.5, [2.0]], {"use_locking": False}, None)
        ...     Scalars(step.op, ["alpha"], lambda a: (a, 1 - a))(torch.tensor(0.5))
        (0.5, 0.5)
    """

    __slots__ = ("_derive", "_cached", "_consts", "_seen", "_checks", "_op")

    def __init__(self, op: Any, args: Sequence[str], derive: Callable[..., tuple]) -> None:
        spec = SPECS[op.type]
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
            dtype = runtime_values.torch_dtype(op.inputs[spec.pos[spec.grad]].dtype)  # (the variable's dtype)
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


def rmsprop_scalars(lr: Any, rho: Any, momentum: Any, epsilon: Any) -> tuple:
    """RMSProp's quantities, dense and sparse: ``(lr, rho, 1 - rho, momentum, epsilon)``.

    Example:
        >>> rmsprop_scalars(0.1, 0.75, 0.0, 1e-7)
        (0.1, 0.75, 0.25, 0.0, 1e-07)
    """
    return lr, rho, 1 - rho, momentum, epsilon


def _dbg(shape: Any) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def check_same(op: Any, var: torch.Tensor, other: torch.Tensor, name: str) -> None:
    """Raises TF's error when the slot or gradient ``other`` does not have the variable's shape.

    Example:
        >>> try:
        ...     check_same(None, torch.zeros(2), torch.zeros(3), "grad")
        ... except errors.InvalidArgumentError as e:
        ...     print(e.message)
        var and grad do not have the same shape[2] [3]
    """
    if other.shape != var.shape:
        raise errors.InvalidArgumentError(
            None, op, f"var and {name} do not have the same shape{_dbg(var.shape)} {_dbg(other.shape)}"
        )


def locking(run: Callable[..., Any], n_refs: int) -> Callable[..., Any]:
    """Wraps ``run`` to hold the locks of its ref inputs (ordered by id, so two updates never deadlock).

    Example:
        >>> from dtf_notebook.runtime.resources import VariableResource
        >>> ref = VariableResource("w", None, None)
        >>> held = locking(lambda r: r.lock.locked(), n_refs=1)
        >>> held(ref), ref.lock.locked()
        (True, False)
    """

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


def dense_kernel(body: Callable[..., Callable[..., None]]):
    """Kernel factory for a dense op: ``body(op, ctx)`` returns ``update(refs_values..., other_inputs...)``.

    The wrapper reads the ref inputs (uninitialised ones raise
    FailedPreconditionError), checks every slot and the gradient have the
    variable's shape, calls ``update`` and returns the variable's reference.

    Example:
        >>> import dtf_notebook as tf
        >>> from dtf_notebook.ops.training.op_specs import build
        >>> from dtf_notebook.runtime.resources import VariableResource
        >>> with tf.Graph().as_default():
        ...     step = build("ApplyGradientDescent", [tf.Variable([0.0]), 0.5, [2.0]], {"use_locking": False}, None)
        >>> run = dense_kernel(lambda op, ctx: lambda var, alpha, delta: var.sub_(alpha * delta))(step.op, None)
        >>> w = VariableResource("w", None, None)
        >>> w.value = torch.tensor([1.0, 2.0])
        >>> run(w, torch.tensor(0.5), torch.tensor([2.0, 2.0])) is w, w.value
        (True, tensor([0., 1.]))
    """

    def factory(op: Any, ctx: Any) -> Callable[..., Any]:
        spec = SPECS[op.type]
        n_refs = len(spec.refs)
        update = body(op, ctx)
        checks = [(i, a) for i, a in enumerate(spec.args) if i > 0 and (i < n_refs or a == spec.grad)]

        def run(*args: Any) -> Any:
            values = [r.read() for r in args[:n_refs]] + list(args[n_refs:])
            var = values[0]
            for i, name in checks:
                if values[i].shape != var.shape:
                    check_same(op, var, values[i], name)
            update(*values)
            return args[0]

        return locking(run, n_refs) if holds_locks(op, n_refs) else run

    return factory


def holds_locks(op: Any, n_refs: int) -> bool:
    """Whether an update op's kernel holds its variables' locks: with ``use_locking``, and always when it has slots.

    TF1 leaves a ``use_locking=False`` update unlocked. An update with slots is then not safe: a concurrent
    step of Adam can read another step's first moment together with a second moment that does not include
    that step's gradient yet (still 0 where every earlier gradient was 0), and divide by ``sqrt(0) + ε``.
    TF's block-wise kernels make that window tiny; here it spans whole tensor operations, and asynchronous
    training blew weights up to 1e5. A lock held for one update of one variable costs microseconds, so
    updates of a variable with slots are always applied one at a time. Plain gradient descent (no slots,
    one in-place subtraction) stays lock-free unless ``use_locking`` asks.

    Example:
        >>> import dtf_notebook as tf
        >>> from dtf_notebook.ops.training.op_specs import build
        >>> with tf.Graph().as_default():
        ...     step = build("ApplyGradientDescent", [tf.Variable([1.0]), 0.5, [2.0]], {"use_locking": False}, None)
        >>> holds_locks(step.op, 1), holds_locks(step.op, 3)
        (False, True)
    """
    return n_refs > 1 or bool(op.get_attr("use_locking"))


def sparse_kernel(body: Callable[..., Callable[..., None]]):
    """Kernel factory for a sparse op: ``body(op, ctx)`` returns ``rows(refs..., scalars..., grad, idx)``.

    ``rows`` updates the rows ``idx`` (unique, int64) from ``grad`` rows. The
    wrapper validates shapes and indices as TF does, and calls ``rows`` once
    for unique indices or once per index (in order) when some repeat.

    Example:
        >>> import dtf_notebook as tf
        >>> from dtf_notebook.ops.training.op_specs import build
        >>> from dtf_notebook.runtime.resources import VariableResource
        >>> with tf.Graph().as_default():
        ...     args = [tf.Variable([0.0] * 3), tf.Variable([0.0] * 3), 1.0, [1.0], [2]]
        ...     step = build("SparseApplyAdagrad", args, {"use_locking": False, "update_slots": True}, None)
        >>> body = lambda op, ctx: lambda var, acc, lr, grad, idx: var.index_add_(0, idx, -lr * grad)
        >>> run = sparse_kernel(body)(step.op, None)
        >>> w, acc = VariableResource("w", None, None), VariableResource("acc", None, None)
        >>> w.value, acc.value = torch.tensor([1.0, 2.0, 3.0]), torch.ones(3)
        >>> _ = run(w, acc, torch.tensor(1.0), torch.tensor([1.0, 1.0]), torch.tensor([2, 2]))
        >>> w.value  # a repeated index is applied once per occurrence
        tensor([1., 2., 1.])
    """

    def factory(op: Any, ctx: Any) -> Callable[..., Any]:
        spec = SPECS[op.type]
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
                    check_same(op, var, value, name)
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
                    rows(*refs, *others, grad[i : i + 1], idx[i : i + 1])
            return args[0]

        return locking(run, n_refs) if holds_locks(op, n_refs) else run

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
