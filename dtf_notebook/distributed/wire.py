"""The wire format: what one task process sends another, as ZeroMQ multipart messages.

A message is ``[header, *tensor frames]``:

- frame 0 is a msgpack map (``use_bin_type``; strings are UTF-8 ``str``, byte strings ``bin``);
  its ``"tensors"`` key lists one meta per tensor (see :mod:`.tensor_codec`), the rest of the
  map is the caller's plain data (None, bool, int, float, str, bytes, lists, str-keyed maps);
- then each tensor's frames, in order: ``meta["chunks"]`` raw payload frames per tensor.

Nothing from the wire is ever evaluated or unpickled. :func:`decode_message` checks every size
against :class:`WireLimits` before it allocates, rejects msgpack extension types (timestamps
included), non-string map keys and invalid UTF-8, and raises :class:`WireError` (an
``InvalidArgumentError``) naming the problem, so a server can answer with an error reply.

Send the frames with ``socket.send_multipart(frames, copy=False)`` (pyzmq copies frames below
its ``copy_threshold``, 64 KiB, anyway) and receive with ``recv_multipart(copy=False)``: those
frames are writable, so a one-frame tensor decodes as a view of the received frame (no copy).

Chunk size. ``python benchmarks/bench_wire.py --repeats 15`` moves a 64 MiB float32 payload
between two processes over ``tcp://127.0.0.1`` (PAIR sockets; 2-vCPU VM, Python 3.11, pyzmq 27.3,
libzmq 4.3.5; median GB/s over interleaved rounds; a 256 MiB run, ``--mib 256 --repeats 9``, agrees)::

    raw pyzmq, 64 MiB as ...                copy=True   copy=False
    one frame                                  0.35        1.23
    64 x 1 MiB frames of one message           0.38        1.80
    64 separate 1 MiB messages                 1.04        2.42

    encode_message -> send(copy=False) -> recv(copy=False) -> decode_message, by chunk_bytes:
    64 KiB 0.84 | 256 KiB 0.79 | 1 MiB 1.37 | 4 MiB 1.43 | 16 MiB 1.19 | one 64 MiB frame 1.09
    (256 MiB run: 0.69 | 0.98 | 1.78 | 1.86 | 1.70 | one frame 1.21)

So: always ``copy=False`` (``copy=True`` is 3-4x slower for large frames); 1-4 MiB frames beat
one huge frame by 25-50% (glibc reuses 1 MiB blocks, while each 64 MiB frame is a fresh mmap
whose pages fault in) even though the receiver then gathers the frames with one memcpy
(~6 GB/s here: 10.6 ms per 64 MiB); frames of 256 KiB and less lose to per-frame overhead.
1 MiB and 4 MiB are within noise of each other; 1 MiB bounds the memory one frame pins, so
``CHUNK_BYTES = 1 MiB``. Encoding is zero-copy (~12 us per message whatever the size), a
one-frame writable decode ~10 us, strings ~1.2 ms/MB to encode and ~2.3 ms/MB to decode, and a
graph def (encode, pack, unpack, decode) ~14 us per node.

Example:
    >>> import numpy as np
    >>> frames = encode_message({"step": 7}, [np.arange(3, dtype=np.int64)])
    >>> len(frames)
    2
    >>> header, arrays = decode_message(frames)
    >>> header, arrays[0].tolist()
    ({'step': 7}, [0, 1, 2])
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import msgpack

from dtf_notebook import errors
from dtf_notebook.distributed.graph_codec import decode_graph_def, encode_graph_def
from dtf_notebook.distributed.tensor_codec import (
    CHUNK_BYTES,
    DEFAULT_LIMITS,
    WireError,
    WireLimits,
    byte_view,
    check_meta,
    chunk_sizes,
    decode_tensor,
    decode_tensor_torch,
    decode_views,
    encode_tensor,
)

__all__ = [
    "CHUNK_BYTES",
    "DEFAULT_LIMITS",
    "WireError",
    "WireLimits",
    "check_meta",
    "chunk_sizes",
    "decode_error",
    "decode_graph_def",
    "decode_counted",
    "decode_message",
    "decode_tensor",
    "decode_tensor_torch",
    "encode_error",
    "encode_graph_def",
    "encode_message",
    "encode_tensor",
    "unpack_header",
    "unpack_message",
]

_TENSORS = "tensors"


def encode_message(
    header: dict[str, Any],
    tensors: Sequence[Any] = (),
    chunk_bytes: int = CHUNK_BYTES,
    limits: WireLimits = DEFAULT_LIMITS,
    check: bool = True,
) -> list[Any]:
    """Encodes a header and tensors as the frames of one multipart message.

    Args:
        header: Plain data with string keys; the key ``"tensors"`` is reserved for the codec.
            Tuples travel as lists.
        tensors: Values :func:`encode_tensor` accepts (numpy, torch, bytes).
        chunk_bytes: Largest tensor frame.
        limits: The packed header must fit ``limits.max_header_bytes``.
        check: Check that the header is plain data before sending (the receiver always checks; the
            transport skips this for the headers its own services build, on every request and reply).

    Returns:
        ``[packed header, *buffers]``; buffers are memoryviews of the tensors' memory.

    Raises:
        WireError: the header is not a str-keyed dict of plain data, is too big, or a tensor cannot travel.

    Example:
        >>> frames = encode_message({"op": "ping"})
        >>> len(frames), type(frames[0]).__name__
        (1, 'bytes')
    """
    if not isinstance(header, dict):
        raise WireError(None, None, f"A message header must be a dict, got {type(header).__name__}")
    if _TENSORS in header:
        raise WireError(None, None, f"The header key {_TENSORS!r} is reserved for the tensor metas")
    if check:  # so that a sender learns about a header its peer would reject
        _check_plain(header, "header", 0, limits.max_depth, (list, tuple))
    metas, frames = [], []
    for tensor in tensors:
        meta, buffers = encode_tensor(tensor, chunk_bytes)
        metas.append(meta)
        frames.extend(buffers)
    try:
        packed = msgpack.packb({**header, _TENSORS: metas}, use_bin_type=True)
    except (TypeError, ValueError, OverflowError) as e:
        raise WireError(None, None, f"Header is not plain data: {e}") from None
    if len(packed) > limits.max_header_bytes:
        raise WireError(None, None, f"Header of {len(packed)} bytes exceeds the limit of {limits.max_header_bytes}")
    if 1 + len(frames) > limits.max_frames:
        raise WireError(None, None, f"Message of {1 + len(frames)} frames exceeds the limit of {limits.max_frames}")
    return [packed, *frames]


def unpack_message(
    frames: Sequence[Any], limits: WireLimits = DEFAULT_LIMITS
) -> tuple[dict[str, Any], list[tuple[dict[str, Any], list[memoryview]]]]:
    """Validates a message and splits it into its header and ``(meta, frames)`` per tensor.

    The tensors are not decoded yet, so a receiver can decode each one where it is needed
    (e.g. :func:`decode_tensor_torch` straight onto a GPU).

    Raises:
        WireError: any frame or header problem (see :func:`decode_message`).

    Example:
        >>> import numpy as np
        >>> header, parts = unpack_message(encode_message({"a": 1}, [np.zeros(2)]))
        >>> header, parts[0][0]["shape"], len(parts[0][1])
        ({'a': 1}, [2], 1)
    """
    header, parts, _ = _unpack(frames, limits, metas=True)
    return header, parts


def _unpack(frames: Sequence[Any], limits: WireLimits, metas: bool = False) -> tuple[dict[str, Any], list[Any], int]:
    """:func:`unpack_message`, giving each tensor's ``check_meta`` result instead of its meta unless ``metas``, and
    the bytes of all frames."""
    if not isinstance(frames, Sequence) or isinstance(frames, bytes | bytearray | memoryview | str):
        raise WireError(None, None, f"A message must be a list of frames, got {type(frames).__name__}")
    count = len(frames)
    if not 1 <= count <= limits.max_frames:
        raise WireError(None, None, f"A message must have 1 to {limits.max_frames} frames, got {count}")
    views = list(map(byte_view, frames))
    header, checked_metas = _unpack_metas(views[0], limits)
    parts, pos = [], 1
    for index, (meta, checked) in enumerate(checked_metas):
        end = pos + checked[3]
        if end > count:
            raise WireError(None, None, f"Tensor {index} needs frames up to {end}, message has {count}")
        parts.append((meta if metas else checked, views[pos:end]))
        pos = end
    if pos != count:
        raise WireError(None, None, f"The tensor metas account for {pos} frames, message has {count}")
    return header, parts, sum(map(len, views))  # (flat byte views: their length is their size)


def unpack_header(
    frame: Any, limits: WireLimits = DEFAULT_LIMITS
) -> tuple[dict[str, Any], list[tuple[dict[str, Any], tuple[str, tuple[int, ...], int, int]]]]:
    """Validates a header frame; returns the header (without ``"tensors"``) and each tensor's
    ``(meta, check_meta(meta))``.

    Raises:
        WireError: see :func:`decode_message`.

    Example:
        >>> import numpy as np
        >>> header, metas = unpack_header(encode_message({"a": 1}, [np.zeros(2)])[0])
        >>> header, metas[0][1]
        ({'a': 1}, ('float64', (2,), 16, 1))
    """
    return _unpack_metas(byte_view(frame), limits)


def _unpack_metas(
    view: memoryview, limits: WireLimits
) -> tuple[dict[str, Any], list[tuple[dict[str, Any], tuple[str, tuple[int, ...], int, int]]]]:
    header = _load_header(view, limits)
    metas = header.pop(_TENSORS, None)
    # The metas are left to check_meta, whose checks are stricter than plain data's.
    _check_plain(header, "header", 0, limits.max_depth, (list,))
    if not isinstance(metas, list):
        raise WireError(None, None, f"The header's {_TENSORS!r} entry must be a list of tensor metas")
    checked = []
    for index, meta in enumerate(metas):
        try:
            checked.append((meta, check_meta(meta, limits)))
        except WireError as e:
            raise WireError(None, None, f"Tensor {index}: {e.message}") from None
    return header, checked


def decode_message(frames: Sequence[Any], limits: WireLimits = DEFAULT_LIMITS) -> tuple[dict[str, Any], list[Any]]:
    """Decodes a message into its header (without ``"tensors"``) and a list of numpy arrays.

    Raises:
        WireError: wrong frame count, a header that is too big, not msgpack, not a map, uses
            extension types, non-string keys or invalid UTF-8, or a tensor meta or payload that
            does not match its frames (see :func:`decode_tensor`).

    Example:
        >>> decode_message([b"\\x90"])
        Traceback (most recent call last):
        ...
        dtf_notebook.distributed.tensor_codec.WireError: A message header must be a msgpack map, got list
    """
    header, arrays, _ = decode_counted(frames, limits)
    return header, arrays


def decode_counted(frames: Sequence[Any], limits: WireLimits = DEFAULT_LIMITS) -> tuple[dict[str, Any], list[Any], int]:
    """:func:`decode_message`, and the bytes of all the message's frames (what a receiver counts against a peer).

    Example:
        >>> import numpy as np
        >>> header, arrays, nbytes = decode_counted(encode_message({}, [np.zeros(4, np.int8)]))
        >>> arrays[0].tolist(), nbytes > 4
        ([0, 0, 0, 0], True)
    """
    header, parts, nbytes = _unpack(frames, limits)
    arrays = []
    for index, (checked, views) in enumerate(parts):
        try:
            arrays.append(decode_views(checked, views))
        except WireError as e:
            raise WireError(None, None, f"Tensor {index}: {e.message}") from None
    return header, arrays, nbytes


def _reject_ext(code: int, data: bytes) -> Any:
    raise WireError(None, None, f"msgpack extension type {code} is not allowed in a header")


def _unpack_header(view: memoryview, limits: WireLimits) -> dict[str, Any]:
    """The header map in ``view``, checked to be plain data."""
    header = _load_header(view, limits)
    _check_plain(header, "header", 0, limits.max_depth, (list,))
    return header


def _load_header(view: memoryview, limits: WireLimits) -> dict[str, Any]:
    """The header map in ``view``, not yet checked to be plain data."""
    if view.nbytes > limits.max_header_bytes:
        raise WireError(None, None, f"Header of {view.nbytes} bytes exceeds the limit of {limits.max_header_bytes}")
    try:
        header = msgpack.unpackb(view, raw=False, strict_map_key=True, use_list=True, ext_hook=_reject_ext)
    except UnicodeDecodeError as e:
        raise WireError(None, None, f"Header holds invalid UTF-8: {e.reason}") from None
    except (msgpack.UnpackException, ValueError, TypeError) as e:
        raise WireError(None, None, f"Header is not valid msgpack: {type(e).__name__} {e}".rstrip()) from None
    if type(header) is not dict:
        raise WireError(None, None, f"A message header must be a msgpack map, got {type(header).__name__}")
    return header


_SCALARS = frozenset((bool, int, float, str, bytes, type(None)))
_STR = frozenset((str,))
# Per kind of sequence a header may hold: the types a plain container may hold, and those that are containers.
_ALLOWED = {seqs: (_SCALARS | {dict, *seqs}, frozenset((dict, *seqs))) for seqs in ((list,), (list, tuple))}


def _is_plain(value: Any, depth: int, max_depth: int, sequences: tuple[type, ...]) -> bool:
    # The check every message pays, so its loops run in C (set checks over map(type, ...)): no strings built, no
    # exceptions; _explain_not_plain says what is wrong.
    kind = type(value)
    if kind is dict:
        if depth > max_depth or not _STR.issuperset(map(type, value)):
            return False
        items: Any = value.values()
    elif kind in sequences:
        if depth > max_depth:
            return False
        items = value
    else:
        return kind in _SCALARS
    if _SCALARS.issuperset(map(type, items)):
        return True
    allowed, containers = _ALLOWED.get(sequences) or (_SCALARS | {dict, *sequences}, frozenset((dict, *sequences)))
    if not allowed.issuperset(map(type, items)):
        return False
    for item in itertools.compress(items, map(containers.__contains__, map(type, items))):
        if not _is_plain(item, depth + 1, max_depth, sequences):
            return False
    return True


def _check_plain(value: Any, where: str, depth: int, max_depth: int, sequences: tuple[type, ...]) -> None:
    # msgpack decodes timestamps into objects and allows bytes keys: only plain data may pass
    if not _is_plain(value, depth, max_depth, sequences):
        _explain_not_plain(value, where, depth, max_depth, sequences)
        raise WireError(None, None, f"{where} is not plain data")  # the two checks agree; never reached


def _explain_not_plain(value: Any, where: str, depth: int, max_depth: int, sequences: tuple[type, ...]) -> None:
    kind = type(value)
    if (kind is dict or kind in sequences) and depth > max_depth:
        raise WireError(None, None, f"{where} is nested deeper than {max_depth}")
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                raise WireError(None, None, f"{where} has a non-string key {key!r:.40}")
            _explain_not_plain(item, f"{where}[{key!r:.40}]", depth + 1, max_depth, sequences)
    elif kind in sequences:
        for i, item in enumerate(value):
            _explain_not_plain(item, f"{where}[{i}]", depth + 1, max_depth, sequences)
    elif value is not None and kind not in (bool, int, float, str, bytes):
        raise WireError(None, None, f"{where} holds a {kind.__name__}, which is not plain data")


def encode_error(exc: BaseException) -> dict[str, Any]:
    """An error as plain data: ``{"code": int, "message": str}`` (non-OpErrors become UNKNOWN).

    Example:
        >>> encode_error(errors.NotFoundError(None, None, "No such variable: x"))
        {'code': 5, 'message': 'No such variable: x'}
        >>> encode_error(KeyError("k"))
        {'code': 2, 'message': "KeyError: 'k'"}
    """
    if isinstance(exc, errors.OpError):
        return {"code": exc.error_code, "message": exc.message}
    return {"code": errors.UNKNOWN, "message": f"{type(exc).__name__}: {exc}"}


def decode_error(data: Any) -> errors.OpError:
    """Rebuilds the OpError subclass for an encoded error (unknown codes give ``UnknownError``).

    Raises:
        WireError: ``data`` is not ``{"code": int, "message": str}``.

    Example:
        >>> e = decode_error({"code": 14, "message": "worker 1 is gone"})
        >>> type(e).__name__, e.message
        ('UnavailableError', 'worker 1 is gone')
        >>> type(decode_error({"code": 99, "message": "?"})).__name__
        'UnknownError'
    """
    if not isinstance(data, dict) or set(data) != {"code", "message"}:
        raise WireError(None, None, f"An encoded error must be a map with keys 'code' and 'message', got {data!r:.80}")
    code, message = data["code"], data["message"]
    if type(code) is not int or not isinstance(message, str):
        raise WireError(None, None, f"An encoded error needs an int code and a str message, got {data!r:.80}")
    cls = errors.exception_type_from_error_code(code)
    if cls is errors.UnknownError and code != errors.UNKNOWN:
        message = f"{message} (error code {code})"
    return cls(None, None, message)
