"""``Tensor``: a symbolic handle to one output of an ``Operation``.

Arithmetic operators (``+ - * / // % ** @``, unary ``-``, comparisons and
``[]`` slicing) are installed by the ops modules through
:meth:`Tensor._override_operator`, so this module needs no op definitions.

Example:
    >>> import dtf_notebook as tf
    >>> a = tf.constant([1.0, 2.0], name="a")
    >>> a.name, a.dtype, a.shape.as_list()
    ('a:0', tf.float32, [2])
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework import dtypes, tensor_shape
from dtf_notebook.framework.default_session import run_in_default_session


class Tensor:
    """One output of an operation: its name is ``"op_name:index"``.

    Args:
        op: The producing Operation.
        value_index: Which output of ``op`` this is.
        dtype: The element type.
        shape: The static shape (may be partial).
        is_ref: True for a reference to a variable (TF1's ``float32_ref``).

    Example:
        >>> import dtf_notebook as tf
        >>> x = tf.placeholder(tf.float32, [None, 3], name="x")
        >>> str(x.shape), x.op.type
        ('(?, 3)', 'Placeholder')
    """

    __slots__ = ("_op", "_value_index", "_dtype", "_shape", "_is_ref", "_consumers", "__weakref__")
    # Lets numpy hand binary operators with a Tensor on the right to us.
    __array_priority__ = 100

    def __init__(self, op: Any, value_index: int, dtype: dtypes.DType, shape: Any = None, is_ref: bool = False) -> None:
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = tensor_shape.as_shape(shape)
        self._is_ref = is_ref
        self._consumers: list[Any] = []

    @property
    def op(self) -> Any:
        return self._op

    @property
    def value_index(self) -> int:
        return self._value_index

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def is_ref(self) -> bool:
        """True when this output is a reference to a variable rather than a value."""
        return self._is_ref

    @property
    def graph(self) -> Any:
        return self._op.graph

    @property
    def name(self) -> str:
        return f"{self._op.name}:{self._value_index}"

    @property
    def device(self) -> str:
        return self._op.device

    @property
    def shape(self) -> tensor_shape.TensorShape:
        return self._shape

    def get_shape(self) -> tensor_shape.TensorShape:
        """The static shape (same as ``shape``)."""
        return self._shape

    def set_shape(self, shape: Any) -> None:
        """Refines the static shape.

        Raises:
            ValueError: ``shape`` is incompatible with what is already known.
        """
        self._shape = self._shape.merge_with(shape)

    def consumers(self) -> list[Any]:
        """The operations that take this tensor as an input."""
        return list(self._consumers)

    def eval(self, feed_dict: Any = None, session: Any = None) -> Any:
        """Evaluates this tensor in ``session`` (default: the default session).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Session():
            ...     print(tf.constant(2.0).eval())
            2.0
        """
        return run_in_default_session(self, feed_dict, session)

    def _as_node_def_input(self) -> str:
        return self._op.name if self._value_index == 0 else f"{self._op.name}:{self._value_index}"

    def __repr__(self) -> str:
        ref = "_ref" if self._is_ref else ""
        return f"<tf.Tensor '{self.name}' shape={self._shape} dtype={self._dtype.name}{ref}>"

    __str__ = __repr__

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: Any) -> bool:
        # TF1 graph tensors compare by identity; use tf.equal for elementwise equality.
        return self is other

    def __ne__(self, other: Any) -> bool:
        return self is not other

    def __bool__(self) -> bool:
        raise TypeError(
            "Using a `tf.Tensor` as a Python `bool` is not allowed. Use `if t is not None:` "
            "instead of `if t:` to test if a tensor is defined, and use TensorFlow ops such as "
            "tf.cond to execute subgraphs conditioned on the value of a tensor."
        )

    def __len__(self) -> int:
        first = self._shape[0].value if self._shape.ndims else None
        if first is None:
            raise TypeError(f"len is not well defined for tensor {self.name!r} of shape {self._shape}")
        return first

    def __iter__(self):
        if self._shape.ndims is None:
            raise TypeError("Cannot iterate over a tensor with unknown shape.")
        if self._shape.ndims == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        first = self._shape[0].value
        if first is None:
            raise TypeError("Cannot iterate over a tensor with unknown first dimension.")
        for i in range(first):
            yield self[i]

    @classmethod
    def _override_operator(cls, operator: str, func: Any) -> None:
        """Installs ``func`` as the operator method ``operator`` (e.g. ``"__add__"``)."""
        setattr(cls, operator, func)


#: Operator names installed by ops modules on Tensor and Variable.
OVERLOADABLE_OPERATORS = (
    "__add__",
    "__radd__",
    "__sub__",
    "__rsub__",
    "__mul__",
    "__rmul__",
    "__div__",
    "__rdiv__",
    "__truediv__",
    "__rtruediv__",
    "__floordiv__",
    "__rfloordiv__",
    "__mod__",
    "__rmod__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__and__",
    "__rand__",
    "__or__",
    "__ror__",
    "__xor__",
    "__rxor__",
    "__getitem__",
    "__pow__",
    "__rpow__",
    "__invert__",
    "__neg__",
    "__abs__",
    "__matmul__",
    "__rmatmul__",
)
