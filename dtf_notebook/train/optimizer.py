"""``tf.train.Optimizer``: the TF1 optimizer base class (gradients, slots, ``apply_gradients``, ``minimize``).

A subclass says how one variable is updated (``_apply_dense`` for a dense
gradient, ``_apply_sparse`` for an ``IndexedSlices`` one), which slot
variables it keeps per variable (``_create_slots``), which tensors it builds
once per ``apply_gradients`` call (``_prepare``) and what it does after all
updates (``_finish``). The base class follows TF1's ``optimizer.py``: slot
variables are named ``<var>/<optimizer name>`` (``weights_1/Adam``,
``weights_1/Adam_1``), placed with their variable, and the update ops live
under ``<name>/update_<var>``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable(3.0, name="w")
    ...     loss = w * w
    ...     train_op = tf.train.GradientDescentOptimizer(0.25).minimize(loss)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         sess.run(train_op)
    ...         print(sess.run(w))
    1.5
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import nullcontext
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.gradients import gradients
from dtf_notebook.framework.graph import GraphKeys, get_collection, get_collection_ref, get_default_graph
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import (  # noqa: F401 - training_ops: registers the fused update ops
    array_ops,
    identity_ops,
    math_ops,
    state_ops,
    training_ops,
    variable_scope,
)
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.variables import Variable, _SaveSliceInfo, trainable_variables
from dtf_notebook.train.loss_tracking import record_minimized_loss

__all__ = ["Optimizer"]

#: TF1 keeps resource variables in this collection as well as in TRAINABLE_VARIABLES' place.
_TRAINABLE_RESOURCE_VARIABLES = "trainable_resource_variables"
_STREAMING_MODEL_PORTS = "streaming_model_ports"


def _var_key(var: Any) -> tuple[Any, str]:
    """The key of ``var`` in slot dicts: its graph and op name."""
    return (var.op.graph, var.op.name)


def _flatten(items: Any) -> list[Any]:
    if isinstance(items, list | tuple):
        out: list[Any] = []
        for item in items:
            out.extend(_flatten(item))
        return out
    return [items]


def deduplicate_indexed_slices(values: Tensor, indices: Tensor) -> tuple[Tensor, Tensor]:
    """Sums the rows of ``values`` that share an index: returns ``(summed_values, unique_indices)``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     v, i = deduplicate_indexed_slices(tf.constant([[1.0], [2.0], [4.0]]), tf.constant([5, 3, 5]))
        ...     with tf.Session() as sess:
        ...         print(*sess.run([v, i]))
        [[5.]
         [2.]] [5 3]
    """
    unique_indices, new_index_positions = array_ops.unique(indices)
    summed_values = math_ops.unsorted_segment_sum(values, new_index_positions, array_ops.shape(unique_indices)[0])
    return summed_values, unique_indices


def cast_like(t: Tensor, dtype: dtypes.DType) -> Tensor:
    """``t`` in ``dtype`` (itself when it already has it, as ``tf.cast`` does), for hyper-parameters of a variable.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     c = tf.constant(0.5)
        ...     cast_like(c, tf.float32) is c
        True
    """
    return t if t.dtype is dtype else math_ops.cast(t, dtype)


class _RefVariableProcessor:
    """Updates a ``Variable``: dense gradients with ``_apply_dense``, IndexedSlices with the sparse path."""

    def __init__(self, v: Variable) -> None:
        self._v = v

    def target(self) -> Tensor:
        return self._v._ref()

    def update_op(self, optimizer: Optimizer, g: Any) -> Any:
        if isinstance(g, Tensor):
            update_op = optimizer._apply_dense(g, self._v)
            if self._v.constraint is not None:
                with get_default_graph().control_dependencies([update_op]):
                    return self._v.assign(self._v.constraint(self._v))
            return update_op
        if self._v.constraint is not None:
            raise RuntimeError("Cannot use a constraint function on a sparse variable.")
        return optimizer._apply_sparse_duplicate_indices(g, self._v)


class _TensorProcessor:
    """A plain tensor in ``var_list``: gradients can be computed for it, but it cannot be updated."""

    def __init__(self, v: Tensor) -> None:
        self._v = v

    def target(self) -> Tensor:
        return self._v

    def update_op(self, optimizer: Optimizer, g: Any) -> Any:
        raise TypeError(f"Trying to update a Tensor {self._v!r}: an optimizer can only update Variables.")


def _get_processor(v: Any) -> Any:
    if isinstance(v, Variable):
        return _RefVariableProcessor(v)
    if isinstance(v, Tensor):
        return _TensorProcessor(v)
    raise TypeError(f"Trying to optimize unsupported type {v!r}")


def _gradient_ops(grads: Iterable[Any]) -> list[Operation]:
    """The ops computing ``grads`` (tensors or IndexedSlices), for gating updates on them.

    Ops without inputs (placeholders of fed gradients, constants) read no variable, so they are left out.
    """
    ops: list[Operation] = []
    for g in grads:
        parts = [g.values, g.indices] if isinstance(g, IndexedSlices) else [g]
        for t in parts:
            if t.op._inputs and t.op not in ops:
                ops.append(t.op)
    return ops


class Optimizer:
    """Base class of the TF1 optimizers; subclasses implement the per-variable update.

    Args:
        use_locking: Hold each variable's lock while updating it.
        name: Name of the optimizer: default name of its op scope and suffix of its slot variables.

    Raises:
        ValueError: ``name`` is empty.

    Example:
        >>> import dtf_notebook as tf
        >>> opt = tf.train.MomentumOptimizer(0.1, momentum=0.9)
        >>> opt.get_name(), isinstance(opt, tf.train.Optimizer)
        ('Momentum', True)
    """

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking: bool, name: str) -> None:
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        # slot name -> {variable key -> slot Variable}
        self._slots: dict[str, dict[tuple[Any, str], Variable]] = {}
        # (name, graph) -> Variable, e.g. Adam's beta1_power
        self._non_slot_dict: dict[tuple[str, Any], Variable] = {}
        # hyper-parameter name -> the value given (a float, a tensor or a callable returning one)
        self._hyper: dict[str, Any] = {}
        # hyper-parameter name -> its tensor, built by `_prepare` in each `apply_gradients`
        self._hyper_tensors: dict[str, Tensor] = {}

    def get_name(self) -> str:
        """The optimizer's name.

        Example:
            >>> import dtf_notebook as tf
            >>> tf.train.AdamOptimizer(name="MyAdam").get_name()
            'MyAdam'
        """
        return self._name

    # ---- minimize = compute_gradients + apply_gradients ----------------------------------------
    def minimize(
        self,
        loss: Any,
        global_step: Any = None,
        var_list: Any = None,
        gate_gradients: int = GATE_OP,
        aggregation_method: Any = None,
        colocate_gradients_with_ops: bool = False,
        name: str | None = None,
        grad_loss: Any = None,
    ) -> Operation:
        """Adds ops that update ``var_list`` (default: all trainable variables) to decrease ``loss``.

        Args:
            loss: The scalar tensor to minimise.
            global_step: Optional integer variable, incremented by one after the updates.
            var_list: Variables to update (default: ``TRAINABLE_VARIABLES``).
            gate_gradients: ``GATE_NONE``, ``GATE_OP`` or ``GATE_GRAPH``.
            aggregation_method: Passed to ``tf.gradients``.
            colocate_gradients_with_ops: Place each gradient op with the op it differentiates.
            name: Name of the returned op (default: the optimizer's name).
            grad_loss: The gradient of ``loss`` to start from (default: ones).

        Returns:
            The op that applies the update (and increments ``global_step``).

        Raises:
            ValueError: no variable has a gradient, or there are no variables.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     w = tf.Variable(1.0, name="w")
            ...     step = tf.Variable(0, trainable=False, dtype=tf.int64, name="step")
            ...     train_op = tf.train.GradientDescentOptimizer(0.5).minimize(w * w, global_step=step)
            ...     with tf.Session() as sess:
            ...         sess.run(tf.global_variables_initializer())
            ...         sess.run(train_op)
            ...         print(*sess.run([w, step]))
            0.0 1
        """
        if callable(loss):
            loss = loss()
        loss = convert_to_tensor(loss)
        grads_and_vars = self.compute_gradients(
            loss,
            var_list=var_list,
            gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops,
            grad_loss=grad_loss,
        )
        vars_with_grad = [v for g, v in grads_and_vars if g is not None]
        if not vars_with_grad:
            raise ValueError(
                "No gradients provided for any variable, check your graph for ops that do not support gradients, "
                f"between variables {[str(v) for _, v in grads_and_vars]} and loss {loss}."
            )
        # The loss joins the gradients in gating the updates, so a run fetching it with the returned op
        # always sees the loss of the variables before this step.
        return self._apply_gradients(grads_and_vars, global_step, name, wait_for=[loss])

    def compute_gradients(
        self,
        loss: Any,
        var_list: Any = None,
        gate_gradients: int = GATE_OP,
        aggregation_method: Any = None,
        colocate_gradients_with_ops: bool = False,
        grad_loss: Any = None,
    ) -> list[tuple[Any, Any]]:
        """Gradients of ``loss`` for each variable: a list of ``(gradient, variable)`` pairs.

        A gradient is a Tensor, an ``IndexedSlices`` (through gathers) or None
        (the loss does not depend on the variable). ``loss`` is noted as what the graph minimizes (the loss a
        progress bar shows: :func:`~dtf_notebook.train.loss_tracking.training_loss`); no collection changes.

        Raises:
            ValueError: ``gate_gradients`` is invalid, there are no variables, or a dtype is not a float type.
            TypeError: ``var_list`` holds something that is neither a Variable nor a Tensor.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     a = tf.Variable(2.0, name="a"); b = tf.Variable(5.0, name="b")
            ...     pairs = tf.train.GradientDescentOptimizer(0.1).compute_gradients(a * a)
            ...     [(g is None, v.op.name) for g, v in pairs]
            [(False, 'a'), (True, 'b')]
        """
        if callable(loss):
            loss = loss()
        if gate_gradients not in (Optimizer.GATE_NONE, Optimizer.GATE_OP, Optimizer.GATE_GRAPH):
            raise ValueError(
                "gate_gradients must be one of: Optimizer.GATE_NONE, Optimizer.GATE_OP, Optimizer.GATE_GRAPH.  "
                f"Not {gate_gradients}"
            )
        loss = convert_to_tensor(loss)
        self._assert_valid_dtypes([loss])
        record_minimized_loss(loss)  # what a progress bar shows (not a collection: TF1's stay as they are)
        if grad_loss is not None:
            grad_loss = convert_to_tensor(grad_loss)
            self._assert_valid_dtypes([grad_loss])
        if var_list is None:
            var_list = trainable_variables() + get_collection(_TRAINABLE_RESOURCE_VARIABLES)
        else:
            var_list = _flatten(var_list)
        var_list = var_list + get_collection(_STREAMING_MODEL_PORTS)
        processors = [_get_processor(v) for v in var_list]
        if not var_list:
            raise ValueError("No variables to optimize.")
        var_refs = [p.target() for p in processors]
        grads = gradients(
            loss,
            var_refs,
            grad_ys=grad_loss,
            gate_gradients=(gate_gradients == Optimizer.GATE_OP),
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops,
        )
        if gate_gradients == Optimizer.GATE_GRAPH:
            grads = _gate_together(grads)
        grads_and_vars = list(zip(grads, var_list))
        self._assert_valid_dtypes([v for g, v in grads_and_vars if g is not None])
        return grads_and_vars

    def apply_gradients(self, grads_and_vars: Any, global_step: Any = None, name: str | None = None) -> Operation:
        """Adds the ops that apply ``grads_and_vars`` (from :meth:`compute_gradients`) to their variables.

        Slots are created on first use, next to their variable. Every update
        runs after every gradient is computed: the updates change variables in
        place, and a gradient of one variable may read another's value.

        Args:
            grads_and_vars: ``(gradient, variable)`` pairs; None gradients are skipped.
            global_step: Optional variable incremented by one after all updates.
            name: Name of the returned op (default: the optimizer's name).

        Returns:
            The op applying the updates (the ``global_step`` increment when one is given).

        Raises:
            TypeError: a gradient is not convertible to a Tensor or IndexedSlices.
            ValueError: ``grads_and_vars`` is empty or holds no gradient.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     w = tf.Variable([1.0, 2.0], name="w")
            ...     opt = tf.train.GradientDescentOptimizer(1.0)
            ...     train_op = opt.apply_gradients([(tf.constant([0.5, 0.5]), w)])
            ...     with tf.Session() as sess:
            ...         sess.run(tf.global_variables_initializer())
            ...         sess.run(train_op)
            ...         print(sess.run(w), train_op.name)
            [0.5 1.5] GradientDescent
        """
        return self._apply_gradients(grads_and_vars, global_step, name, wait_for=[])

    def _apply_gradients(
        self, grads_and_vars: Any, global_step: Any, name: str | None, wait_for: list[Any]
    ) -> Operation:
        """``apply_gradients``, with the updates also waiting for the tensors ``wait_for``."""
        grads_and_vars = tuple(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        converted = []
        for g, v in grads_and_vars:
            if g is not None and not isinstance(g, IndexedSlices):
                try:
                    g = convert_to_tensor(g)
                except (TypeError, ValueError):
                    raise TypeError(
                        f"Gradient must be convertible to a Tensor or IndexedSlices, or None: {g}"
                    ) from None
            converted.append((g, v, _get_processor(v)))
        var_list = [v for g, v, _ in converted if g is not None]
        if not var_list:
            raise ValueError(f"No gradients provided for any variable: {[str(v) for _, v, _ in converted]}.")
        graph = var_list[0].graph
        with graph.as_default():
            with graph.control_dependencies(None):
                self._create_slots(var_list)
            update_ops: list[Any] = []
            with graph.name_scope(name or self._name) as scope:
                self._prepare()
                ready = _gradient_ops([g for g, _, _ in converted if g is not None] + list(wait_for))
                gate = identity_ops.group(*ready, name="gradients_ready") if len(ready) > 1 else None
                with graph.control_dependencies([gate] if gate is not None else []):
                    for grad, var, processor in converted:
                        if grad is None:
                            continue
                        with graph.name_scope("update_" + var.op.name), graph.colocate_with(var):
                            update_ops.append(processor.update_op(self, grad))
                if global_step is None:
                    apply_updates = self._finish(update_ops, scope)
                else:
                    with graph.control_dependencies([self._finish(update_ops, "update")]):
                        with graph.colocate_with(global_step):
                            apply_updates = state_ops.assign_add(global_step, 1, name=scope)
            if isinstance(apply_updates, Tensor):
                apply_updates = apply_updates.op
            train_ops = get_collection_ref(GraphKeys.TRAIN_OP)
            if apply_updates not in train_ops:
                train_ops.append(apply_updates)
        return apply_updates

    # ---- slots -----------------------------------------------------------------------------------
    def get_slot(self, var: Any, name: str) -> Variable | None:
        """The slot variable ``name`` (e.g. ``"m"``, ``"momentum"``) kept for ``var``, or None.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     w = tf.Variable([1.0, 2.0], name="w")
            ...     opt = tf.train.MomentumOptimizer(0.1, 0.9)
            ...     _ = opt.minimize(tf.reduce_sum(w * w))
            ...     opt.get_slot(w, "momentum").op.name
            'w/Momentum'
        """
        named_slots = self._slots.get(name)
        if not named_slots:
            return None
        return named_slots.get(_var_key(var))

    def get_slot_names(self) -> list[str]:
        """Names of the slots this optimizer created, sorted.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     w = tf.Variable(1.0)
            ...     opt = tf.train.AdamOptimizer()
            ...     _ = opt.minimize(w * w)
            ...     opt.get_slot_names()
            ['m', 'v']
        """
        return sorted(self._slots)

    def variables(self) -> list[Variable]:
        """The optimizer's own variables (slots and non-slot ones such as Adam's ``beta1_power``) in the default graph.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     w = tf.Variable(1.0, name="w")
            ...     opt = tf.train.AdamOptimizer()
            ...     _ = opt.minimize(w * w)
            ...     [v.op.name for v in opt.variables()]
            ['beta1_power', 'beta2_power', 'w/Adam', 'w/Adam_1']
        """
        graph = get_default_graph()
        found = [v for v in self._non_slot_variables() if v.graph is graph]
        for slots in self._slots.values():
            found.extend(v for v in slots.values() if v.graph is graph)
        return sorted(found, key=lambda v: v.name)

    def _slot_dict(self, slot_name: str) -> dict[tuple[Any, str], Variable]:
        return self._slots.setdefault(slot_name, {})

    def _get_or_make_slot(self, var: Variable, val: Any, slot_name: str, op_name: str) -> Variable:
        """The slot ``slot_name`` of ``var``, created from the tensor ``val`` when missing."""
        named_slots = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named_slots:
            named_slots[key] = _create_slot(var, lambda: val, op_name)
        return named_slots[key]

    def _get_or_make_slot_with_initializer(
        self, var: Variable, initializer: Callable[[], Tensor], slot_name: str, op_name: str
    ) -> Variable:
        """The slot ``slot_name`` of ``var``, created from ``initializer()`` (built next to ``var``) when missing."""
        named_slots = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named_slots:
            named_slots[key] = _create_slot(var, initializer, op_name)
        return named_slots[key]

    def _zeros_slot(self, var: Variable, slot_name: str, op_name: str) -> Variable:
        """The slot ``slot_name`` of ``var``, created holding zeros of ``var``'s shape and dtype when missing."""
        return self._get_or_make_slot_with_initializer(var, lambda: filled_like(var, 0, "zeros"), slot_name, op_name)

    # ---- non-slot variables ------------------------------------------------------------------
    def _create_non_slot_variable(self, initial_value: Any, name: str, colocate_with: Any) -> Variable:
        """A variable of the optimizer itself (not per variable), created once per graph next to ``colocate_with``."""
        graph = colocate_with.graph
        key = (name, graph)
        v = self._non_slot_dict.get(key)
        if v is None:
            with graph.as_default(), graph.control_dependencies(None), graph.colocate_with(colocate_with):
                v = Variable(initial_value, name=name, trainable=False)
            self._non_slot_dict[key] = v
        return v

    def _get_non_slot_variable(self, name: str, graph: Any = None) -> Variable | None:
        return self._non_slot_dict.get((name, graph))

    def _non_slot_variables(self) -> list[Variable]:
        return list(self._non_slot_dict.values())

    # ---- hyper-parameters --------------------------------------------------------------------------
    def _set_hyper(self, **values: Any) -> None:
        """Records hyper-parameters (floats, tensors or callables); :meth:`_prepare` makes them tensors."""
        self._hyper.update(values)

    def _hyper_like(self, var: Variable, *names: str) -> list[Tensor]:
        """The tensors of the hyper-parameters ``names`` in ``var``'s dtype (in the order given)."""
        return [cast_like(self._hyper_tensors[name], var.dtype) for name in names]

    # ---- dtypes ------------------------------------------------------------------------------------
    def _assert_valid_dtypes(self, tensors: Iterable[Any]) -> None:
        valid = self._valid_dtypes()
        for t in tensors:
            if t.dtype not in valid:
                expected = sorted(valid, key=lambda d: d.name)
                raise ValueError(f"Invalid type {t.dtype!r} for {t.name}, expected: {expected}.")

    def _valid_dtypes(self) -> set[dtypes.DType]:
        return {dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64}

    # ---- what subclasses implement -------------------------------------------------------------
    def _create_slots(self, var_list: list[Variable]) -> None:
        """Creates the slots the optimizer needs for ``var_list`` (none by default)."""

    def _prepare(self) -> None:
        """Creates the tensors the updates share, in the optimizer's name scope.

        By default: one tensor per hyper-parameter of :meth:`_set_hyper`, named after it (a callable is
        called first, so a schedule is read anew in each ``apply_gradients``).
        """
        for name, value in self._hyper.items():
            self._hyper_tensors[name] = convert_to_tensor(self._call_if_callable(value), name=name)

    def _apply_dense(self, grad: Tensor, var: Variable) -> Any:
        """The op updating ``var`` with the dense gradient ``grad``."""
        raise TypeError(f"{type(self).__name__} does not define _apply_dense: it cannot update {var.op.name}")

    def _apply_sparse_duplicate_indices(self, grad: IndexedSlices, var: Variable) -> Any:
        """Sums the rows of ``grad`` that share an index, then calls ``_apply_sparse``."""
        summed_values, unique_indices = deduplicate_indexed_slices(grad.values, grad.indices)
        return self._apply_sparse(IndexedSlices(summed_values, unique_indices, grad.dense_shape), var)

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Any:
        """The op updating ``var`` with the IndexedSlices ``grad`` (unique indices)."""
        raise TypeError(f"{type(self).__name__} does not define _apply_sparse: it cannot update {var.op.name}")

    def _finish(self, update_ops: list[Any], name_scope: str) -> Operation:
        """The op grouping ``update_ops``, named ``name_scope``."""
        return identity_ops.group(*update_ops, name=name_scope)

    @staticmethod
    def _call_if_callable(param: Any) -> Any:
        return param() if callable(param) else param


def _gate_together(grads: list[Any]) -> list[Any]:
    """``GATE_GRAPH``: each gradient becomes available only once all of them are computed."""
    real = [g for g in grads if g is not None]
    if not real:
        return grads
    graph = real[0].graph
    with graph.name_scope("tuple"):
        gate = identity_ops.group(*_gradient_ops(real))
        out: list[Any] = []
        with graph.control_dependencies([gate]):
            for g in grads:
                if g is None:
                    out.append(None)
                elif isinstance(g, IndexedSlices):
                    out.append(IndexedSlices(identity_ops.identity(g.values), g.indices, g.dense_shape))
                else:
                    out.append(identity_ops.identity(g))
    return out


def filled_like(var: Variable, value: float, name: str) -> Tensor:
    """A tensor of ``var``'s shape and dtype filled with ``value``: the initial value of a slot of ``var``.

    Zeros and ones are built as TF's ``zeros``/``ones`` initializers build them, other values as a constant.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable(tf.zeros([2, 3]))
        ...     ones = filled_like(w, 1, "ones")
        ...     with tf.Session() as sess:
        ...         print(sess.run(ones).sum())
        6.0
    """
    shape = var.shape
    if shape.is_fully_defined():
        if value == 0:
            return array_ops.zeros(shape.as_list(), dtype=var.dtype, name=name)
        if value == 1:
            return array_ops.ones(shape.as_list(), dtype=var.dtype, name=name)
        return constant(value, dtype=var.dtype, shape=shape.as_list(), name=name)
    # A variable of unknown shape: its slot takes the shape of its value (or initial value) at init time.
    dynamic_shape = array_ops.shape(var.initialized_value())
    return array_ops.fill(dynamic_shape, constant(value, dtype=var.dtype), name=name)


def _create_slot(
    var: Variable | Tensor, initial_value: Callable[[], Tensor], op_name: str, colocate: bool = True
) -> Variable:
    """A slot variable of ``var`` named ``<var>/<op_name>`` (made unique), placed with ``var``, not trainable.

    As in TF, the name ignores the current name scope but not the current variable scope. ``var`` may also
    be a tensor (a moving average of a loss); ``colocate=False`` leaves the slot's placement free.
    """
    graph = var.graph
    prefix = variable_scope.get_variable_scope().name
    base = f"{var.op.name}/{op_name}"
    with graph.as_default(), graph.control_dependencies(None), graph.name_scope(None):
        scope_name = graph.unique_name(f"{prefix}/{base}" if prefix else base)
        with graph.colocate_with(var) if colocate else nullcontext(), graph.name_scope(scope_name + "/"):
            with graph.name_scope("Initializer"):
                value = initial_value()
            validate_shape = value.shape.is_fully_defined()
            slot = Variable(value, trainable=False, name=scope_name + "/", validate_shape=validate_shape)
    _share_slice_info(var, slot)
    return slot


def _share_slice_info(primary: Variable | Tensor, slot: Variable) -> None:
    """A slot of a part of a partitioned variable is saved as a part of ``<full name>/<slot name>`` (TF's rule), so
    checkpoints hold ``table/Adam`` whole, as TF's do, rather than one ``table/part_N/Adam`` per part."""
    info = getattr(primary, "_save_slice_info", None)
    rank = slot.shape.ndims
    if info is None or rank == 0:
        return
    real_slot_name = slot.op.name[len(primary.op.name) + 1 :]
    rank = len(info.full_shape) if rank is None else rank
    slot._save_slice_info = _SaveSliceInfo(
        f"{info.full_name}/{real_slot_name}", info.full_shape[:rank], info.var_offset[:rank], info.var_shape[:rank]
    )
