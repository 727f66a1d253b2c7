"""``tf.cond``, ``tf.case`` and ``tf.switch_case``, built from ``Switch`` and ``Merge`` as in TF1.

Only the ops of the branch taken run: every value a branch reads from outside comes in through a
``Switch`` on the predicate, and ops with no inputs hang on the branch's pivot, so the other branch's
ops see dead inputs and are skipped, side effects included. The result is a ``Merge`` of the two
branches' results.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [])
    ...     y = tf.cond(x > 0.0, lambda: x * 2.0, lambda: -x)
    ...     with tf.Session() as sess:
    ...         print(sess.run(y, {x: 3.0}), sess.run(y, {x: -4.0}))
    6.0 4.0
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from dtf_notebook.framework import dtypes, nest
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import GraphKeys, add_to_collection, name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops.control_flow import primitives
from dtf_notebook.ops.control_flow.contexts import CondContext

__all__ = ["cond", "case", "switch_case"]


def _restore(templates: list[Any], tensors: list[Tensor]) -> list[Any]:
    """TensorArrays travel through control flow as their flow tensor: rebuilt around the merged flow."""
    return [t._from_flow(x) if hasattr(t, "_from_flow") else x for t, x in zip(templates, tensors)]


def _unpack_singleton(value: Any) -> Any:
    return value[0] if isinstance(value, list | tuple) and len(value) == 1 else value


def cond(
    pred: Any,
    true_fn: Callable[[], Any] | None = None,
    false_fn: Callable[[], Any] | None = None,
    strict: bool = False,
    name: str | None = None,
    fn1: Callable[[], Any] | None = None,
    fn2: Callable[[], Any] | None = None,
) -> Any:
    """``true_fn()`` if ``pred`` else ``false_fn()``; only the ops of the branch taken run.

    Args:
        pred: A scalar bool tensor (a Python bool is a TypeError, as in TF).
        true_fn, false_fn: Callables returning the same structure of tensors (or ops) with the same dtypes.
        strict: Keep singleton lists/tuples as they are (else a one-element result is unpacked).
        name: Name scope of the ops (default ``cond``).
        fn1, fn2: TF1's old names of ``true_fn`` and ``false_fn``.

    Raises:
        TypeError: ``pred`` is a Python bool, or a branch is not callable.
        ValueError: the branches return different structures or dtypes, or nothing.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable(0.0)
        ...     bump = tf.cond(tf.constant(False), lambda: tf.assign_add(v, 1.0), lambda: tf.identity(v))
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print(sess.run(bump), sess.run(v))      # the assign did not run
        0.0 0.0
    """
    true_fn = true_fn if true_fn is not None else fn1
    false_fn = false_fn if false_fn is not None else fn2
    if true_fn is None or not callable(true_fn):
        raise TypeError("true_fn must be callable.")
    if false_fn is None or not callable(false_fn):
        raise TypeError("false_fn must be callable.")
    if isinstance(pred, bool):
        raise TypeError("'pred' must not be a Python bool.")
    with name_scope(name, "cond", [pred]):
        pred = convert_to_tensor(pred)
        if pred.dtype != dtypes.bool:
            raise TypeError(f"pred must be a bool tensor, got {pred.dtype.name}")
        p_false, p_true = primitives.switch(pred, pred)
        from dtf_notebook.ops.identity_ops import identity

        pivot_true = identity(p_true, name="switch_t")
        pivot_false = identity(p_false, name="switch_f")
        pred = identity(pred, name="pred_id")

        results = []
        contexts = []
        for branch, fn, pivot in ((1, true_fn, pivot_true), (0, false_fn, pivot_false)):
            context = CondContext(pred, pivot, branch)
            contexts.append(context)
            context.enter()
            try:
                original, flat = context.build_branch(fn)
                context.exit_result(flat)
            finally:
                context.exit()
            results.append((original, flat))
        (orig_true, res_true), (orig_false, res_false) = results
        if not strict:
            orig_true, orig_false = _unpack_singleton(orig_true), _unpack_singleton(orig_false)
        try:
            nest.assert_same_structure(orig_true, orig_false, check_types=False)
        except ValueError as e:
            raise ValueError(f"true_fn and false_fn must return the same structure: {e}") from None
        for x, y in zip(res_true, res_false):
            if x.dtype != y.dtype:
                raise ValueError(
                    "Outputs of 'true_fn' and 'false_fn' must have the same type(s). Received "
                    f"{x.dtype.name} from 'true_fn' and {y.dtype.name} from 'false_fn'."
                )
        merges = [primitives.merge([f, t])[0] for f, t in zip(res_false, res_true)]
        if contexts[0].outer_context is None:
            for context in contexts:
                add_to_collection(GraphKeys.COND_CONTEXT, context)
        packed = nest.pack_sequence_as(orig_true, _restore(nest.flatten(orig_true), merges))
        return packed if strict else _unpack_singleton(packed)


def _case_branches(pred_fn_pairs: Any) -> list[tuple[Tensor, Callable[[], Any]]]:
    if isinstance(pred_fn_pairs, dict):
        pairs = list(pred_fn_pairs.items())
    else:
        pairs = list(pred_fn_pairs)
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"Each entry in pred_fn_pairs must be a 2-tuple, got {pair!r}")
        pred, fn = pair
        if not callable(fn):
            raise TypeError(f"fn for pred {pred!r} must be callable.")
    return [(convert_to_tensor(p), fn) for p, fn in pairs]


def case(
    pred_fn_pairs: Any,
    default: Callable[[], Any] | None = None,
    exclusive: bool = False,
    strict: bool = False,
    name: str = "case",
) -> Any:
    """The result of the ``fn`` of the first ``pred`` that is true (``default()`` when none is).

    Args:
        pred_fn_pairs: A list of (bool scalar tensor, callable) pairs (a dict is taken in its order).
        default: Called when no predicate is true; without it the last pair's fn is the default.
        exclusive: Also check at run time that at most one predicate is true (``InvalidArgumentError``).
        strict, name: As for :func:`cond`.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.placeholder(tf.int32, [])
        ...     y = tf.case([(x < 0, lambda: tf.constant(-1)), (x > 0, lambda: tf.constant(1))],
        ...                 default=lambda: tf.constant(0))
        ...     with tf.Session() as sess:
        ...         print([sess.run(y, {x: v}) for v in (-5, 0, 7)])
        [np.int32(-1), np.int32(0), np.int32(1)]
    """
    pairs = _case_branches(pred_fn_pairs)
    if not pairs and default is None:
        raise ValueError("case needs at least one pred_fn pair or a default")
    with name_scope(name, "case", [p for p, _ in pairs]):
        if default is None:
            *pairs, (_, default) = pairs
        preds = [p for p, _ in pairs]
        checked: list[Any] = []
        if exclusive and len(preds) > 1:
            from dtf_notebook.ops import array_ops, math_ops
            from dtf_notebook.ops.assert_op import Assert

            count = math_ops.reduce_sum(math_ops.cast(array_ops.stack(preds), dtypes.int32))
            checked = [
                Assert(
                    count <= 1,
                    [
                        "Input error: exclusive=True and more than 1 conditions evaluated as True:",
                        array_ops.stack(preds),
                    ],
                    name="exclusive_check",
                )
            ]
        result_fn = default
        # Built from the last pair outwards: the first true predicate wins, as TF1's case documents.
        for pred, fn in reversed(pairs):
            result_fn = _nested_cond(pred, fn, result_fn, strict)
        if checked:
            from dtf_notebook.framework.graph import control_dependencies

            with control_dependencies(checked):
                return result_fn()
        return result_fn()


def _nested_cond(pred: Tensor, fn: Callable[[], Any], otherwise: Callable[[], Any], strict: bool) -> Callable[[], Any]:
    return lambda: cond(pred, fn, otherwise, strict=strict)


def switch_case(
    branch_index: Any,
    branch_fns: Any,
    default: Callable[[], Any] | None = None,
    name: str = "switch_case",
) -> Any:
    """``branch_fns[branch_index]()``; ``default()`` (or the last branch) for an index out of range.

    Args:
        branch_index: A scalar int32 tensor.
        branch_fns: A list of callables, or a dict / list of (int, callable) pairs.
        default: Called for an index with no branch.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     i = tf.placeholder(tf.int32, [])
        ...     y = tf.switch_case(i, [lambda: tf.constant(10), lambda: tf.constant(20)],
        ...                        default=lambda: tf.constant(-1))
        ...     with tf.Session() as sess:
        ...         print([sess.run(y, {i: v}) for v in (0, 1, 5)])
        [np.int32(10), np.int32(20), np.int32(-1)]
    """
    if isinstance(branch_fns, dict):
        items = sorted(branch_fns.items())
    elif branch_fns and isinstance(branch_fns[0], tuple):
        items = sorted(branch_fns)
    else:
        items = list(enumerate(branch_fns))
    if not items:
        raise ValueError("branch_fns must not be empty")
    for key, fn in items:
        if not isinstance(key, int) or not callable(fn):
            raise TypeError(f"branch_fns must map ints to callables, got {key!r}: {fn!r}")
    with name_scope(name, "switch_case", [branch_index]):
        index = convert_to_tensor(branch_index, dtype=dtypes.int32)
        if default is None:
            *items, (_, default) = items
        from dtf_notebook.ops import math_ops

        pairs: Sequence[tuple[Any, Callable[[], Any]]] = [(math_ops.equal(index, key), fn) for key, fn in items]
        return case(pairs, default=default, name="case")
