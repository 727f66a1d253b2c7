"""Static tensor shapes with unknown dimensions and unknown rank (TF1's TensorShape).

``TensorShape([None, 784])`` is a matrix with an unknown number of rows;
``TensorShape(None)`` has unknown rank. Indexing returns TF1's
:class:`Dimension` objects, so ``shape[1].value`` works as in TF1 scripts.

Example:
    >>> s = TensorShape([None, 784])
    >>> s.as_list(), s.ndims, s[1].value
    ([None, 784], 2, 784)
    >>> s.merge_with([100, None]).as_list()
    [100, 784]
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


class Dimension:
    """One dimension of a shape: an int or unknown (``None``).

    Example:
        >>> Dimension(3) + 2, Dimension(None).value
        (Dimension(5), None)
    """

    __slots__ = ("_value",)

    def __init__(self, value: Any) -> None:
        if isinstance(value, Dimension):
            value = value.value
        if value is None:
            self._value = None
        else:
            try:
                self._value = int(value.__index__())
            except AttributeError:
                raise TypeError(f"Dimension value must be integer or None, got {value!r}") from None
            if self._value < 0:
                raise ValueError(f"Dimension {self._value} must be >= 0")

    @property
    def value(self) -> int | None:
        return self._value

    def __repr__(self) -> str:
        return f"Dimension({self._value!r})"

    def __str__(self) -> str:
        return "?" if self._value is None else str(self._value)

    def __int__(self) -> int:
        if self._value is None:
            raise TypeError("Cannot convert an unknown Dimension to an int.")
        return self._value

    __index__ = __int__

    def __eq__(self, other: Any) -> Any:
        other = as_dimension(other) if other is None or isinstance(other, int | Dimension) else None
        if other is None:
            return NotImplemented
        if self._value is None or other.value is None:
            return None
        return self._value == other.value

    def __ne__(self, other: Any) -> Any:
        eq = self.__eq__(other)
        return eq if eq is None or eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return hash(self._value)

    def __bool__(self) -> bool:
        return self._value is not None and self._value != 0

    def is_compatible_with(self, other: Any) -> bool:
        other = as_dimension(other)
        return self._value is None or other.value is None or self._value == other.value

    def merge_with(self, other: Any) -> Dimension:
        other = as_dimension(other)
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {other} are not compatible")
        return Dimension(self._value if self._value is not None else other.value)

    def _arith(self, other: Any, fn) -> Dimension:
        other = as_dimension(other)
        if self._value is None or other.value is None:
            return Dimension(None)
        return Dimension(fn(self._value, other.value))

    def __add__(self, other: Any) -> Dimension:
        return self._arith(other, lambda a, b: a + b)

    __radd__ = __add__

    def __sub__(self, other: Any) -> Dimension:
        return self._arith(other, lambda a, b: a - b)

    def __rsub__(self, other: Any) -> Dimension:
        return as_dimension(other) - self

    def __mul__(self, other: Any) -> Dimension:
        return self._arith(other, lambda a, b: a * b)

    __rmul__ = __mul__

    def __floordiv__(self, other: Any) -> Dimension:
        return self._arith(other, lambda a, b: a // b)

    def __mod__(self, other: Any) -> Dimension:
        return self._arith(other, lambda a, b: a % b)

    def __lt__(self, other: Any) -> Any:
        other = as_dimension(other)
        return None if self._value is None or other.value is None else self._value < other.value

    def __le__(self, other: Any) -> Any:
        other = as_dimension(other)
        return None if self._value is None or other.value is None else self._value <= other.value

    def __gt__(self, other: Any) -> Any:
        other = as_dimension(other)
        return None if self._value is None or other.value is None else self._value > other.value

    def __ge__(self, other: Any) -> Any:
        other = as_dimension(other)
        return None if self._value is None or other.value is None else self._value >= other.value


def as_dimension(value: Any) -> Dimension:
    """Returns ``value`` as a Dimension.

    Example:
        >>> as_dimension(4).value
        4
    """
    return value if isinstance(value, Dimension) else Dimension(value)


def dimension_value(dim: Any) -> int | None:
    """The int (or None) inside a Dimension, int or None.

    Example:
        >>> dimension_value(Dimension(7)), dimension_value(None)
        (7, None)
    """
    return dim.value if isinstance(dim, Dimension) else dim


class TensorShape:
    """A possibly partial static shape.

    Args:
        dims: None (unknown rank), or an iterable of ints / None / Dimension.

    Example:
        >>> TensorShape([2, None]).is_compatible_with([2, 5])
        True
    """

    __slots__ = ("_dims",)

    def __init__(self, dims: Any = None) -> None:
        if isinstance(dims, TensorShape):
            self._dims = dims._dims
        elif dims is None:
            self._dims: tuple[int | None, ...] | None = None
        elif isinstance(dims, int | Dimension):
            self._dims = (dimension_value(Dimension(dims)),)
        else:
            try:
                self._dims = tuple(dimension_value(as_dimension(d)) for d in dims)
            except TypeError:
                raise TypeError(f"A shape must be a list of integers or None, got {dims!r}") from None

    @property
    def dims(self) -> list[Dimension] | None:
        return None if self._dims is None else [Dimension(d) for d in self._dims]

    @property
    def ndims(self) -> int | None:
        return None if self._dims is None else len(self._dims)

    rank = ndims

    def __len__(self) -> int:
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __bool__(self) -> bool:
        return self._dims is not None

    def __iter__(self) -> Iterator[Dimension]:
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(Dimension(d) for d in self._dims)

    def __getitem__(self, key: Any) -> Any:
        if self._dims is None:
            return unknown_shape() if isinstance(key, slice) else Dimension(None)
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return Dimension(self._dims[key])

    def as_list(self) -> list[int | None]:
        """The dimensions as a list of ints and Nones.

        Raises:
            ValueError: the rank is unknown.
        """
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def as_tuple(self) -> tuple[int | None, ...] | None:
        """The dimensions as a tuple, or None for unknown rank (plain data for graph defs)."""
        return self._dims

    def num_elements(self) -> int | None:
        """The number of elements, or None when any dimension is unknown."""
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:
            n *= d
        return n

    def is_fully_defined(self) -> bool:
        return self._dims is not None and all(d is not None for d in self._dims)

    def is_compatible_with(self, other: Any) -> bool:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self._dims, other._dims))

    def assert_is_compatible_with(self, other: Any) -> None:
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {as_shape(other)} are incompatible")

    def merge_with(self, other: Any) -> TensorShape:
        """The most specific shape compatible with both.

        Raises:
            ValueError: the shapes are incompatible.
        """
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        self.assert_same_rank(other)
        try:
            return TensorShape([Dimension(a).merge_with(b) for a, b in zip(self._dims, other._dims)])
        except ValueError:
            raise ValueError(f"Shapes {self} and {other} are not compatible") from None

    def assert_same_rank(self, other: Any) -> None:
        other = as_shape(other)
        if self.ndims is not None and other.ndims is not None and self.ndims != other.ndims:
            raise ValueError(f"Shapes {self} and {other} must have the same rank")

    def assert_has_rank(self, rank: int) -> None:
        if self.ndims not in (None, rank):
            raise ValueError(f"Shape {self} must have rank {rank}")

    def with_rank(self, rank: int) -> TensorShape:
        self.assert_has_rank(rank)
        return self if self._dims is not None else TensorShape([None] * rank)

    def with_rank_at_least(self, rank: int) -> TensorShape:
        if self.ndims is not None and self.ndims < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def concatenate(self, other: Any) -> TensorShape:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return unknown_shape()
        return TensorShape(self._dims + other._dims)

    def __eq__(self, other: Any) -> bool:
        try:
            other = as_shape(other)
        except TypeError:
            return NotImplemented
        return self._dims == other._dims

    def __hash__(self) -> int:
        return hash(self._dims)

    def __repr__(self) -> str:
        if self._dims is None:
            return "TensorShape(None)"
        return f"TensorShape({list(self._dims)!r})"

    def __str__(self) -> str:
        if self._dims is None:
            return "<unknown>"
        inner = ", ".join("?" if d is None else str(d) for d in self._dims)
        return f"({inner},)" if len(self._dims) == 1 else f"({inner})"


def as_shape(shape: Any) -> TensorShape:
    """Converts a list, tuple, None or TensorShape into a TensorShape.

    Example:
        >>> as_shape((3, None)).as_list()
        [3, None]
    """
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank: int | None = None) -> TensorShape:
    """A shape of unknown dimensions, of unknown rank unless ``rank`` is given.

    Example:
        >>> unknown_shape(2).as_list()
        [None, None]
    """
    return TensorShape(None if rank is None else [None] * rank)


def scalar() -> TensorShape:
    """The shape of a scalar, ``()``.

    Example:
        >>> scalar().as_list(), scalar().ndims
        ([], 0)
    """
    return TensorShape([])


def vector(length: int | None) -> TensorShape:
    """The shape of a vector.

    Example:
        >>> vector(3).as_list(), vector(None).as_list()
        ([3], [None])
    """
    return TensorShape([length])


def matrix(rows: int | None, cols: int | None) -> TensorShape:
    """The shape of a matrix.

    Example:
        >>> matrix(None, 784).as_list()
        [None, 784]
    """
    return TensorShape([rows, cols])


def broadcast_shapes(a: TensorShape, b: TensorShape) -> TensorShape:
    """Static numpy-style broadcast of two shapes (unknown where it cannot be told).

    Raises:
        ValueError: the shapes cannot broadcast.

    Example:
        >>> broadcast_shapes(TensorShape([None, 3]), TensorShape([3])).as_list()
        [None, 3]
    """
    if a.ndims is None or b.ndims is None:
        return unknown_shape()
    da, db = list(a.as_tuple()), list(b.as_tuple())
    n = max(len(da), len(db))
    da = [1] * (n - len(da)) + da
    db = [1] * (n - len(db)) + db
    out: list[int | None] = []
    for x, y in zip(da, db):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None or y is None:
            out.append(x if y is None else y)
        elif x == y:
            out.append(x)
        else:
            raise ValueError(f"Incompatible shapes for broadcasting: {a} and {b}")
    return TensorShape(out)
