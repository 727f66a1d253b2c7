"""``tf.TensorArray``: TF1's graph-mode TensorArray, a handle plus the flow tensor of one state of the array.

Every method that changes the array (``write``, ``scatter``, ``unstack``, ``split``) returns a new
``TensorArray`` sharing the handle with the new flow; use it for what follows. Methods that read take the
current flow, so they run after the writes that made it. Loops and conds carry a TensorArray as its flow
(:meth:`TensorArray._from_flow` rebuilds it around the flow that comes out).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     ta = TensorArray(tf.float32, size=3)
    ...     ta = ta.write(0, 1.0).write(1, 2.0).write(2, 4.0)
    ...     with tf.Session() as sess:
    ...         print(sess.run(ta.stack()))
    [1. 2. 4.]
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import colocate_with, control_dependencies, device, name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, as_shape, dimension_value
from dtf_notebook.ops.op_helpers import constant_value
from dtf_notebook.ops.tensor_array import kernels

__all__ = ["TensorArray", "build_ta_with_new_flow"]


def _static_value(value: Any) -> Any:
    """A numpy value of ``value`` known while building (also through a ``Cast``), else None."""
    if not isinstance(value, Tensor):
        return np.asarray(value)
    if value.op.type == "Cast":
        inner = _static_value(value.op.inputs[0])
        return None if inner is None else inner.astype(value.dtype.np_dtype)
    return constant_value(value)


class TensorArray:
    """An array of tensors for dynamic iteration (``while_loop``, ``map_fn``), with gradients through its flow.

    Args:
        dtype: The element dtype.
        size: int32 scalar, the number of elements (required unless ``handle`` is given).
        dynamic_size: Writes past the end grow the array (default False).
        clear_after_read: A read drops the element, so it can be read only once (default True).
        tensor_array_name: The name errors show for the array at run time (default: the op's name).
        handle: An existing array's handle (with ``flow``): wraps it instead of making a new array.
        flow: The flow of the existing array.
        infer_shape: All elements share one shape, which the first write fixes.
        element_shape: The (possibly partial) shape of every element.
        colocate_with_first_write_call: Place the array with the first value written into it (else where the
            device scope says while building it).
        name: Name scope of the array's op.

    Raises:
        ValueError: ``handle`` given with ``size``, ``element_shape``, ``dynamic_size``, ``clear_after_read`` or
            ``tensor_array_name``, without ``flow``; or neither ``handle`` nor ``size`` given.
        TypeError: ``handle`` is not a Tensor.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     ta = TensorArray(tf.int32, size=0, dynamic_size=True).unstack([[1, 2], [3, 4], [5, 6]])
        ...     with tf.Session() as sess:
        ...         print(sess.run([ta.size(), ta.read(1)]))
        [np.int32(3), array([3, 4], dtype=int32)]
    """

    def __init__(
        self,
        dtype: Any,
        size: Any = None,
        dynamic_size: bool | None = None,
        clear_after_read: bool | None = None,
        tensor_array_name: str | None = None,
        handle: Tensor | None = None,
        flow: Tensor | None = None,
        infer_shape: bool = True,
        element_shape: Any = None,
        colocate_with_first_write_call: bool = True,
        name: str | None = None,
    ) -> None:
        if handle is not None and tensor_array_name:
            raise ValueError("Cannot provide both `handle` and `tensor_array_name` arguments at the same time.")
        if handle is not None and not isinstance(handle, Tensor):
            raise TypeError(f"Expected `handle` to be a Tensor, but got `{handle}` of type `{type(handle)}` instead.")
        if handle is None and size is None:
            raise ValueError("Argument `size` must be provided if handle is not provided.")
        if handle is not None and size is not None:
            raise ValueError("Cannot provide both a `handle` and `size` arguments at the same time.")
        if handle is not None and element_shape is not None:
            raise ValueError("Cannot provide both `handle` and `element_shape` arguments at the same time.")
        if handle is not None and dynamic_size is not None:
            raise ValueError("Cannot provide both `handle` and `dynamic_size` arguments at the same time.")
        if handle is not None and clear_after_read is not None:
            raise ValueError("Cannot provide both `handle` and `clear_after_read` arguments at the same time.")
        if clear_after_read is None:
            clear_after_read = True
        self._dynamic_size = bool(dynamic_size)
        self._dtype = dtypes.as_dtype(dtype)
        # The first value written decides where the array lives (TF: colocate_with_first_write_call).
        self._colocate_with_first_write_call = colocate_with_first_write_call
        self._colocate_with: list[Tensor] | None = [] if colocate_with_first_write_call else None
        # One list shared by every TensorArray of this array, so a shape learnt from one write holds for all.
        self._element_shape = [as_shape(element_shape)]
        self._infer_shape = infer_shape
        self._size = size
        with name_scope(name, "TensorArray", [handle, size, flow]) as scope:
            if handle is not None:
                if flow is None:
                    raise ValueError("flow must not be None if handle is not None.")
                self._handle, self._flow = handle, flow
            else:
                create = contextlib.ExitStack()
                if colocate_with_first_write_call:
                    # Made with no device: the first write's colocation with its value places it.
                    create.enter_context(device(None))
                    create.enter_context(colocate_with(None, ignore_existing=True))
                with create:
                    self._handle, self._flow = kernels.tensor_array_v3(
                        self._dtype,
                        size,
                        element_shape=self._element_shape[0],
                        identical_element_shapes=infer_shape,
                        dynamic_size=self._dynamic_size,
                        clear_after_read=clear_after_read,
                        tensor_array_name=tensor_array_name,
                        name=scope,
                    )

    # ---- properties ------------------------------------------------------------------------------------
    @property
    def flow(self) -> Tensor:
        """The flow tensor: the state of the array the next op sees."""
        return self._flow

    @property
    def dtype(self) -> dtypes.DType:
        """The element dtype."""
        return self._dtype

    @property
    def handle(self) -> Tensor:
        """The array's handle (a ``resource`` tensor)."""
        return self._handle

    @property
    def element_shape(self) -> TensorShape:
        """The static shape known for every element."""
        return self._element_shape[0]

    @property
    def dynamic_size(self) -> bool:
        """Whether writes past the end grow the array."""
        return self._dynamic_size

    def _from_flow(self, flow: Tensor) -> TensorArray:
        """This array with ``flow`` as its state (how ``while_loop`` and ``cond`` hand a TensorArray back)."""
        return build_ta_with_new_flow(self, flow)

    def _check_element_shape(self, shape: TensorShape) -> None:
        if not shape.is_compatible_with(self.element_shape):
            raise ValueError(f"Inconsistent shapes: saw {shape} but expected {self.element_shape} ")
        if self._infer_shape:
            self._element_shape[0] = self.element_shape.merge_with(shape)

    @contextlib.contextmanager
    def _maybe_colocate_with(self, value: Tensor) -> Iterator[None]:
        if not self._colocate_with_first_write_call:
            yield
            return
        if not self._colocate_with:
            self._colocate_with.append(value)
        with colocate_with(self._colocate_with[0]):
            yield

    # ---- methods -----------------------------------------------------------------------------------------
    def identity(self) -> TensorArray:
        """This array with its flow through an ``Identity``: control dependencies around it then order its use.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     TensorArray(tf.float32, size=1).identity().flow.op.type
            'Identity'
        """
        from dtf_notebook.ops.identity_ops import identity

        return build_ta_with_new_flow(self, identity(self._flow))

    def grad(self, source: str, flow: Tensor | None = None, name: str | None = None) -> TensorArray:
        """The gradient array of this array for the gradient computation ``source`` (e.g. ``"gradients"``).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     g = TensorArray(tf.float32, size=2).grad("gradients")
            >>> g.handle.op.type
            'TensorArrayGradV3'
        """
        from dtf_notebook.ops.identity_ops import identity

        if flow is None:
            flow = self.flow
        with name_scope(name, "TensorArrayGrad", [self._handle]):
            with colocate_with(self._handle.op):
                g_handle, _ = kernels.grad_v3(self._handle, flow, source, name=name)
                with control_dependencies([g_handle.op]):
                    flow = identity(flow, name="gradient_flow")
                g = TensorArray(
                    self._dtype,
                    handle=g_handle,
                    flow=flow,
                    infer_shape=self._infer_shape,
                    colocate_with_first_write_call=False,
                )
                g._element_shape = self._element_shape
                return g

    def read(self, index: Any, name: str | None = None) -> Tensor:
        """The element at ``index`` (an int32 scalar).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     ta = TensorArray(tf.float32, size=2).write(1, [5.0, 6.0])
            ...     with tf.Session() as sess:
            ...         print(sess.run(ta.read(1)))
            [5. 6.]
        """
        value = kernels.read_v3(self._handle, index, self._flow, self._dtype, name=name)
        value.set_shape(self._element_shape[0])
        return value

    def write(self, index: Any, value: Any, name: str | None = None) -> TensorArray:
        """Writes ``value`` at ``index``; returns the array after the write.

        Raises:
            ValueError: ``value``'s static shape differs from the element shape.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     ta = TensorArray(tf.float32, size=2).write(0, [1.0, 2.0])
            >>> ta.element_shape
            TensorShape([2])
        """
        with name_scope(name, "TensorArrayWrite", [self._handle, index, value]):
            value = convert_to_tensor(value, preferred_dtype=self._dtype, name="value")
            self._check_element_shape(value.shape)
            with self._maybe_colocate_with(value):
                flow_out = kernels.write_v3(self._handle, index, value, self._flow, name=name)
            return build_ta_with_new_flow(self, flow_out)

    def stack(self, name: str | None = None) -> Tensor:
        """Every element, stacked into one tensor (unwritten elements read as zeros when their shape is known).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     ta = TensorArray(tf.float32, size=2).write(0, [1.0]).write(1, [2.0])
            >>> ta.stack().shape
            TensorShape([2, 1])
        """
        from dtf_notebook.ops.math_ops import range as range_

        with colocate_with(self._handle.op), name_scope(name, "TensorArrayStack", [self._handle]):
            value = self.gather(range_(0, self.size()), name=name)
            if self.element_shape and not self._dynamic_size and self._size is not None:
                size = _static_value(self._size)
                value.set_shape([None if size is None else int(size)] + self.element_shape.dims)
            return value

    def gather(self, indices: Any, name: str | None = None) -> Tensor:
        """The elements at ``indices`` (an int32 vector), stacked.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     ta = TensorArray(tf.float32, size=3).unstack([1.0, 2.0, 3.0])
            ...     with tf.Session() as sess:
            ...         print(sess.run(ta.gather([2, 0])))
            [3. 1.]
        """
        value = kernels.gather_v3(
            self._handle, indices, self._flow, self._dtype, element_shape=self._element_shape[0], name=name
        )
        if self.element_shape:
            value.set_shape([None] + self.element_shape.dims)
        return value

    def concat(self, name: str | None = None) -> Tensor:
        """Every element joined along axis 0 (their other dimensions must match).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     ta = TensorArray(tf.float32, size=2, infer_shape=False).write(0, [1.0]).write(1, [2.0, 3.0])
            ...     with tf.Session() as sess:
            ...         print(sess.run(ta.concat()))
            [1. 2. 3.]
        """
        value, _ = kernels.concat_v3(
            self._handle, self._flow, self._dtype, element_shape_except0=self.element_shape[1:], name=name
        )
        if self.element_shape:
            dim0 = None
            if self._infer_shape:
                size = _static_value(self.size())
                first = dimension_value(self.element_shape[0]) if self.element_shape.ndims else None
                if size is not None and first is not None:
                    dim0 = int(size) * first
            value.set_shape([dim0] + self.element_shape.dims[1:])
        return value

    def unstack(self, value: Any, name: str | None = None) -> TensorArray:
        """Writes ``value[i]`` at index ``i`` for each row of ``value``; returns the array after the writes.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     ta = TensorArray(tf.float32, size=2).unstack([[1.0, 2.0], [3.0, 4.0]])
            >>> ta.element_shape
            TensorShape([2])
        """
        from dtf_notebook.ops.array_ops import shape
        from dtf_notebook.ops.math_ops import range as range_

        with name_scope(name, "TensorArrayUnstack", [self._handle, value]):
            num_elements = shape(value)[0]
            return self.scatter(indices=range_(0, num_elements), value=value, name=name)

    def scatter(self, indices: Any, value: Any, name: str | None = None) -> TensorArray:
        """Writes ``value[i]`` at ``indices[i]``; returns the array after the writes.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     ta = TensorArray(tf.float32, size=3, element_shape=[]).scatter([2, 0], [5.0, 7.0])
            ...     with tf.Session() as sess:
            ...         print(sess.run(ta.stack()))
            [7. 0. 5.]
        """
        with name_scope(name, "TensorArrayScatter", [self._handle, value, indices]):
            value = convert_to_tensor(value, preferred_dtype=self._dtype, name="value")
            self._check_element_shape(value.shape[1:])
            with self._maybe_colocate_with(value):
                flow_out = kernels.scatter_v3(self._handle, indices, value, self._flow, name=name)
            return build_ta_with_new_flow(self, flow_out)

    def split(self, value: Any, lengths: Any, name: str | None = None) -> TensorArray:
        """Writes consecutive pieces of ``value`` (``lengths[i]`` rows each) at indices 0, 1, ...

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     ta = TensorArray(tf.float32, size=2, infer_shape=False).split([1.0, 2.0, 3.0], [1, 2])
            ...     with tf.Session() as sess:
            ...         print(sess.run(ta.read(1)))
            [2. 3.]
        """
        from dtf_notebook.ops.math_ops import cast

        with name_scope(name, "TensorArraySplit", [self._handle, value, lengths]):
            value = convert_to_tensor(value, dtype=self._dtype, name="value")
            with self._maybe_colocate_with(value):
                lengths_64 = cast(lengths, dtypes.int64)
                known = _static_value(lengths_64)
                if value.shape.ndims is not None and known is not None and known.ndim and known.size:
                    if known.max() == known.min():
                        self._check_element_shape(TensorShape([int(known[0])]).concatenate(value.shape[1:]))
                flow_out = kernels.split_v3(self._handle, value, lengths_64, self._flow, name=name)
            return build_ta_with_new_flow(self, flow_out)

    def size(self, name: str | None = None) -> Tensor:
        """The number of elements (int32): the given size, or for a dynamic array a ``TensorArraySizeV3``.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     ta = TensorArray(tf.float32, size=0, dynamic_size=True).write(3, 1.0)
            ...     with tf.Session() as sess:
            ...         print(sess.run(ta.size()))
            4
        """
        if not self._dynamic_size and self._size is not None:
            return convert_to_tensor(self._size, dtype=dtypes.int32)
        return kernels.size_v3(self._handle, self.flow, name=name)

    def close(self, name: str | None = None) -> Operation:
        """An op that drops the array's elements; any later use of the array fails.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     TensorArray(tf.float32, size=1).close().type
            'TensorArrayCloseV3'
        """
        return kernels.close_v3(self._handle, name=name)

    def __repr__(self) -> str:
        return f"<TensorArray {self._handle.op.name} dtype={self._dtype.name} flow={self._flow.name}>"


def build_ta_with_new_flow(old_ta: TensorArray, flow: Tensor) -> TensorArray:
    """A TensorArray sharing ``old_ta``'s handle, size and learnt element shape, in the state ``flow``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     ta = TensorArray(tf.float32, size=2)
        ...     same = build_ta_with_new_flow(ta, tf.identity(ta.flow))
        >>> same.handle is ta.handle, same.flow is ta.flow
        (True, False)
    """
    new_ta = TensorArray(
        old_ta.dtype,
        handle=old_ta.handle,
        flow=flow,
        infer_shape=old_ta._infer_shape,
        colocate_with_first_write_call=old_ta._colocate_with_first_write_call,
    )
    new_ta._dynamic_size = old_ta._dynamic_size
    new_ta._size = old_ta._size
    new_ta._colocate_with = old_ta._colocate_with
    new_ta._element_shape = old_ta._element_shape
    return new_ta
