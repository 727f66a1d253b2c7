"""Protocol buffers' base-128 varints, read from bytes (the readers of checkpoint tables and bundles, serialized
string lists, and the layout check of ``parse_example`` share it).

Example:
    >>> read_varint(b"\\x96\\x01rest", 0)
    (150, 2)
"""

from __future__ import annotations

__all__ = ["read_varint"]


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """The unsigned varint at ``data[pos:]`` and the position after it.

    Raises:
        ValueError: the bytes end inside the varint, or it runs past 10 bytes (64 bits).

    Example:
        >>> read_varint(b"\\x80", 0)
        Traceback (most recent call last):
        ...
        ValueError: truncated varint
    """
    result = shift = 0
    while pos < len(data):
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")
    raise ValueError("truncated varint")
