"""Higher-order functions over the first axis of tensors: ``tf.map_fn``, ``tf.scan``, ``tf.foldl``, ``tf.foldr``.

Each is built as TF1 builds it: the elements are unstacked into TensorArrays, a ``while_loop`` reads one
element per iteration and applies ``fn``, and results are written into TensorArrays that are stacked after
the loop. So the graph has TF1's ops, iterations may run in parallel (``parallel_iterations``), and gradients
flow through the loop and the arrays.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.constant([1.0, 2.0, 3.0, 4.0])
    ...     squares = map_fn(lambda v: v * v, x)
    ...     sums = scan(lambda acc, v: acc + v, x)
    ...     total = foldl(lambda acc, v: acc + v, x, initializer=10.0)
    ...     with tf.Session() as sess:
    ...         print(*sess.run([squares, sums, total]))
    [ 1.  4.  9. 16.] [ 1.  3.  6. 10.] 20.0
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from dtf_notebook.framework import dtypes, nest
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.sparse_tensor import SparseTensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import Dimension, TensorShape, dimension_value
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.control_flow.while_loop import while_loop
from dtf_notebook.ops.tensor_array_ops import TensorArray

__all__ = ["map_fn", "scan", "foldl", "foldr"]


def _check_callable(fn: Any) -> None:
    if not callable(fn):
        name = getattr(fn, "__name__", repr(fn))
        raise TypeError(f"{name} is not callable. Please provide a callable function.")


@contextlib.contextmanager
def _variables_cached_where_used() -> Iterator[None]:
    """Variables read inside ``fn`` are read on the device of the op reading them (TF1 sets the caching device)."""
    from dtf_notebook.ops.pure_variable_scope import get_variable_scope

    scope = get_variable_scope()
    was_none = scope.caching_device is None
    if was_none:
        scope.set_caching_device(lambda op: op.device)
    try:
        yield
    finally:
        if was_none:
            scope.set_caching_device(None)


def _leading_dim(tensors: list[Tensor]) -> Dimension:
    """The static length of the first axis shared by ``tensors`` (unknown when not known while building).

    Raises:
        ValueError: a tensor is a scalar, or two known lengths differ.
    """
    n = Dimension(dimension_value(tensors[0].shape.with_rank_at_least(1)[0]))
    for t in tensors[1:]:
        other = Dimension(dimension_value(t.shape.with_rank_at_least(1)[0]))
        if not n.is_compatible_with(other):
            raise ValueError(f"Dimensions {n} and {other} are not compatible")
    return n


def _length(first: Tensor) -> Any:
    """The length of ``first``'s first axis: a Python int when known while building, else a tensor."""
    from dtf_notebook.ops.array_ops import shape

    static = dimension_value(first.shape[0])
    return static if static else shape(first)[0]


def _set_leading_dim(results: list[Tensor], n_static: Dimension) -> None:
    for r in results:
        r.set_shape(TensorShape([n_static]).concatenate(r.shape[1:]))


def _as_output_dtype(spec: Any) -> tuple[dtypes.DType, TensorShape]:
    """A ``dtype`` / ``fn_output_signature`` leaf as (dtype, element shape)."""
    if isinstance(spec, SparseTensor) or type(spec).__name__ in ("SparseTensorSpec", "RaggedTensorSpec"):
        raise TypeError(f"map_fn can not generate {spec} outputs")
    if hasattr(spec, "dtype") and hasattr(spec, "shape") and not isinstance(spec, dtypes.DType):
        return dtypes.as_dtype(spec.dtype), TensorShape(spec.shape)
    return dtypes.as_dtype(spec), TensorShape(None)


def map_fn(
    fn: Callable[..., Any],
    elems: Any,
    dtype: Any = None,
    parallel_iterations: int | None = None,
    back_prop: bool = True,
    swap_memory: bool = False,
    infer_shape: bool = True,
    name: str | None = None,
    fn_output_signature: Any = None,
) -> Any:
    """Applies ``fn`` to each element of ``elems`` unstacked on axis 0; stacks the results.

    Args:
        fn: Called with one element (the structure of ``elems``, each tensor without its first axis).
        elems: A tensor or a (nested) structure of tensors, all with the same first dimension.
        dtype: The dtype structure of ``fn``'s result when it differs from ``elems``' (TF1's name for
            ``fn_output_signature``).
        parallel_iterations: How many iterations may run at once (default 10).
        back_prop: Whether gradients may flow through the loop.
        swap_memory: Accepted as in TF (values stay on their device).
        infer_shape: The results of every iteration must have one shape.
        name: Name scope of the ops (default ``map``).
        fn_output_signature: Same as ``dtype``; a leaf may also be anything with ``dtype`` and ``shape``.

    Returns:
        ``fn``'s results stacked: the structure of ``dtype`` (else of ``elems``), each with a first axis the
        length of ``elems``'.

    Raises:
        TypeError: ``fn`` is not callable, or an output signature asks for sparse results.
        ValueError: ``elems`` holds no tensors, a scalar, or tensors of differing first dimension; or ``fn``
            returns another structure than expected.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     a, b = tf.constant([1, 2, 3]), tf.constant([10.0, 20.0, 30.0])
        ...     out = map_fn(lambda ab: (ab[0] * 2, ab[1] + 1.0), (a, b))
        ...     neg = map_fn(lambda ab: -tf.cast(ab[0], tf.float32) * ab[1], (a, b), dtype=tf.float32)
        ...     with tf.Session() as sess:
        ...         print(sess.run(out), sess.run(neg))
        (array([2, 4, 6], dtype=int32), array([11., 21., 31.], dtype=float32)) [-10. -40. -90.]
    """
    if fn_output_signature is None:
        fn_output_signature = dtype
    if not callable(fn):
        name = getattr(fn, "__name__", repr(fn))
        raise TypeError(f"The provided function {name} is not callable. fn must be callable.")
    if not parallel_iterations:
        parallel_iterations = 10
    elems_flat = nest.flatten(elems)
    if not elems_flat:
        raise ValueError(
            f"elems must be a Tensor or (possibly nested) sequence of Tensors. Got {elems}, which does not contain "
            "any Tensors."
        )
    for e in elems_flat:
        if isinstance(e, SparseTensor):
            raise TypeError(f"map_fn can not consume SparseTensor inputs: got {e!r}")
    if fn_output_signature is None:
        result_specs = None  # like the elements: their dtypes, shapes left to the results
    else:
        result_specs = [_as_output_dtype(d) for d in nest.flatten(fn_output_signature)]

    def result_unflatten(flat: list[Any]) -> Any:
        return nest.pack_sequence_as(elems if fn_output_signature is None else fn_output_signature, flat)

    with name_scope(name, "map", elems_flat), _variables_cached_where_used():
        elems_flat = [convert_to_tensor(t, name="elem") for t in elems_flat]
        if elems_flat[0].shape.ndims is not None and elems_flat[0].shape.ndims < 1:
            raise ValueError("Elements in elems must be 1+ dimensional Tensors, not scalars")
        n_static = _leading_dim(elems_flat)
        n = n_static.value or _length(elems_flat[0])
        elems_ta = [TensorArray(dtype=t.dtype, size=n, dynamic_size=False, infer_shape=True) for t in elems_flat]
        elems_ta = [ta.unstack(t) for ta, t in zip(elems_ta, elems_flat)]
        i = constant(0)
        if result_specs is None:
            result_specs = [(t.dtype, TensorShape(None)) for t in elems_flat]
        result_ta = [
            TensorArray(dtype=d, size=n, dynamic_size=False, infer_shape=infer_shape, element_shape=s)
            for d, s in result_specs
        ]

        def compute(i: Tensor, tas: list[TensorArray]) -> tuple[Tensor, list[TensorArray]]:
            packed = nest.pack_sequence_as(elems, [ta.read(i) for ta in elems_ta])
            result = fn(packed)
            nest.assert_same_structure(fn_output_signature or elems, result)
            flat = nest.flatten(result)
            return i + 1, [ta.write(i, value) for ta, value in zip(tas, flat)]

        _, r_a = while_loop(
            lambda i, _: i < n,
            compute,
            (i, result_ta),
            parallel_iterations=parallel_iterations,
            back_prop=back_prop,
            swap_memory=swap_memory,
            maximum_iterations=n,
        )
        results = [r.stack() for r in r_a]
        _set_leading_dim(results, n_static)
        return result_unflatten(results)


def _unstacked(elems_flat: list[Tensor], n: Any, element_shapes: bool = False) -> list[TensorArray]:
    return [
        TensorArray(
            dtype=e.dtype,
            size=n,
            dynamic_size=False,
            infer_shape=True,
            element_shape=e.shape[1:] if element_shapes else None,
        ).unstack(e)
        for e in elems_flat
    ]


def foldl(
    fn: Callable[[Any, Any], Any],
    elems: Any,
    initializer: Any = None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    name: str | None = None,
) -> Any:
    """Folds ``fn`` over the elements of ``elems`` from first to last: ``fn(...fn(fn(a, e0), e1)..., en)``.

    Args:
        fn: ``fn(accumulator, element)`` → the next accumulator (the structure of ``initializer``).
        elems: A tensor or a (nested) structure of tensors unstacked on axis 0.
        initializer: The first accumulator (default: the first element, and folding starts at the second).
        parallel_iterations, back_prop, swap_memory: As for ``while_loop``.
        name: Name scope of the ops (default ``foldl``).

    Raises:
        TypeError: ``fn`` is not callable.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     digits = foldl(lambda a, x: a * 10 + x, tf.constant([1, 2, 3]))
        ...     with tf.Session() as sess:
        ...         print(sess.run(digits))
        123
    """
    _check_callable(fn)
    with name_scope(name, "foldl", [elems]), _variables_cached_where_used():
        elems_flat = [convert_to_tensor(e, name="elem") for e in nest.flatten(elems)]
        n = _length(elems_flat[0])
        elems_ta = nest.pack_sequence_as(elems, _unstacked(elems_flat, n))
        if initializer is None:
            a = nest.map_structure(lambda ta: ta.read(0), elems_ta)
            i = constant(1)
        else:
            a = initializer
            i = constant(0)

        def compute(i: Tensor, a: Any) -> list[Any]:
            element = nest.map_structure(lambda ta: ta.read(i), elems_ta)
            a = fn(a, element)
            return [i + 1, a]

        _, r_a = while_loop(
            lambda i, a: i < n,
            compute,
            [i, a],
            parallel_iterations=parallel_iterations,
            back_prop=back_prop,
            swap_memory=swap_memory,
            maximum_iterations=n,
        )
        return r_a


def foldr(
    fn: Callable[[Any, Any], Any],
    elems: Any,
    initializer: Any = None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    name: str | None = None,
) -> Any:
    """Folds ``fn`` over the elements of ``elems`` from last to first: ``fn(...fn(fn(a, en), en-1)..., e0)``.

    Args:
        fn: ``fn(accumulator, element)`` → the next accumulator (the structure of ``initializer``).
        elems: A tensor or a (nested) structure of tensors unstacked on axis 0.
        initializer: The first accumulator (default: the last element, and folding starts before it).
        parallel_iterations, back_prop, swap_memory: As for ``while_loop``.
        name: Name scope of the ops (default ``foldr``).

    Raises:
        TypeError: ``fn`` is not callable.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     digits = foldr(lambda a, x: a * 10 + x, tf.constant([1, 2, 3]))
        ...     with tf.Session() as sess:
        ...         print(sess.run(digits))
        321
    """
    _check_callable(fn)
    with name_scope(name, "foldr", [elems]), _variables_cached_where_used():
        elems_flat = [convert_to_tensor(e, name="elem") for e in nest.flatten(elems)]
        n = _length(elems_flat[0])
        elems_ta = nest.pack_sequence_as(elems, _unstacked(elems_flat, n))
        if initializer is None:
            i = n - 1
            a = nest.map_structure(lambda ta: ta.read(i), elems_ta)
        else:
            i = n
            a = initializer

        def compute(i: Tensor, a: Any) -> list[Any]:
            i -= 1
            element = nest.map_structure(lambda ta: ta.read(i), elems_ta)
            return [i, fn(a, element)]

        _, r_a = while_loop(
            lambda i, a: i > 0,
            compute,
            [i, a],
            parallel_iterations=parallel_iterations,
            back_prop=back_prop,
            swap_memory=swap_memory,
            maximum_iterations=n,
        )
        return r_a


def scan(
    fn: Callable[[Any, Any], Any],
    elems: Any,
    initializer: Any = None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    infer_shape: bool = True,
    reverse: bool = False,
    name: str | None = None,
) -> Any:
    """Like ``foldl`` (or ``foldr`` with ``reverse``), but returns every accumulator, stacked on axis 0.

    Args:
        fn: ``fn(accumulator, element)`` → the next accumulator (the structure of ``initializer``).
        elems: A tensor or a (nested) structure of tensors unstacked on axis 0.
        initializer: The first accumulator (default: the first element, which is also the first result).
        parallel_iterations, back_prop, swap_memory: As for ``while_loop``.
        infer_shape: Every accumulator must have one shape.
        reverse: Scan from the last element to the first (results stay in the elements' order).
        name: Name scope of the ops (default ``scan``).

    Raises:
        TypeError: ``fn`` is not callable.
        ValueError: ``fn`` returns another structure than the accumulator's.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.constant([1, 2, 3, 4])
        ...     fib = scan(lambda a, _: (a[1], a[0] + a[1]), x, initializer=(0, 1))
        ...     from_right = scan(lambda a, v: a + v, x, reverse=True)
        ...     with tf.Session() as sess:
        ...         print(sess.run(fib)[0], sess.run(from_right))
        [1 1 2 3] [10  9  7  4]
    """
    _check_callable(fn)
    input_is_sequence = nest.is_nested(elems)

    def input_flatten(x: Any) -> list[Any]:
        return nest.flatten(x) if input_is_sequence else [x]

    def input_pack(x: list[Any]) -> Any:
        return nest.pack_sequence_as(elems, x) if input_is_sequence else x[0]

    if initializer is None:
        output_is_sequence, output_flatten, output_pack = input_is_sequence, input_flatten, input_pack
    else:
        output_is_sequence = nest.is_nested(initializer)

        def output_flatten(x: Any) -> list[Any]:
            return nest.flatten(x) if output_is_sequence else [x]

        def output_pack(x: list[Any]) -> Any:
            return nest.pack_sequence_as(initializer, x) if output_is_sequence else x[0]

    elems_flat = input_flatten(elems)
    with name_scope(name, "scan", elems_flat), _variables_cached_where_used():
        elems_flat = [convert_to_tensor(e, name="elem") for e in elems_flat]
        n = dimension_value(elems_flat[0].shape[0])
        if n is None:
            n = _length(elems_flat[0])
        elems_ta = _unstacked(elems_flat, n, element_shapes=True)
        if initializer is None:
            a_flat = [ta.read(n - 1 if reverse else 0) for ta in elems_ta]
            i = 1
        else:
            a_flat = [convert_to_tensor(init) for init in output_flatten(initializer)]
            i = 0
        accs_ta = [
            TensorArray(
                dtype=init.dtype,
                size=n,
                element_shape=init.shape if infer_shape else None,
                dynamic_size=False,
                infer_shape=infer_shape,
            )
            for init in a_flat
        ]
        if initializer is None:
            accs_ta = [ta.write(n - 1 if reverse else 0, a) for ta, a in zip(accs_ta, a_flat)]

        def compute(i: Tensor, a_flat: list[Tensor], tas: list[TensorArray]) -> tuple[Any, list[Any], list[Any]]:
            packed_elems = input_pack([ta.read(i) for ta in elems_ta])
            a_out = fn(output_pack(a_flat), packed_elems)
            nest.assert_same_structure(elems if initializer is None else initializer, a_out)
            flat_a_out = output_flatten(a_out)
            tas = [ta.write(i, value) for ta, value in zip(tas, flat_a_out)]
            return (i - 1 if reverse else i + 1), flat_a_out, tas

        if reverse:
            initial_i = n - 1 - i
            condition = lambda i, _1, _2: i >= 0  # noqa: E731 - TF's lambdas
        else:
            initial_i = i
            condition = lambda i, _1, _2: i < n  # noqa: E731
        _, _, r_a = while_loop(
            condition,
            compute,
            (initial_i, a_flat, accs_ta),
            parallel_iterations=parallel_iterations,
            back_prop=back_prop,
            swap_memory=swap_memory,
            maximum_iterations=n,
        )
        results = [r.stack() for r in r_a]
        _set_leading_dim(results, _leading_dim(elems_flat))
        return output_pack(results)
