"""Tensors as plain metadata plus raw byte buffers: the tensor half of the wire format.

:func:`encode_tensor` turns a numpy array, numpy scalar, torch tensor (any device) or ``bytes``
into ``(meta, buffers)``: ``meta = {"dtype", "shape", "nbytes", "chunks"}`` is plain data that
goes into a message's msgpack header, and ``buffers`` are ``meta["chunks"]`` memoryviews that
become raw ZeroMQ frames. For a C-contiguous CPU value the buffers are views of the value's own
memory (no copy); a non-contiguous or CUDA value costs exactly one copy to CPU memory.

Payload layout (little-endian; every supported host is):

- numeric dtypes: the C-order element bytes, ``prod(shape) * itemsize`` of them;
- ``string``: ``n`` uint64 element lengths, then the ``n`` byte strings back to back.

The payload is split into ``chunks = ceil(nbytes / chunk_bytes)`` frames of near-equal size
(:func:`chunk_sizes`), so a receiver can compute every frame size from the meta alone and could
receive frames straight into their final place. :func:`decode_tensor` accepts any split whose
lengths add up to ``nbytes``.

Decoding never trusts the meta: dtype, rank, dims and sizes are checked against
:class:`WireLimits` and any mismatch raises :class:`WireError`. A single writable frame (pyzmq
``copy=False`` frames, ``bytearray``) decodes with zero copies: the array is a view of the frame.
Several frames, or a read-only frame (``bytes``), cost exactly one copy into a fresh array.

Example:
    >>> import numpy as np
    >>> meta, buffers = encode_tensor(np.arange(6, dtype=np.int32).reshape(2, 3))
    >>> meta
    {'dtype': 'int32', 'shape': [2, 3], 'nbytes': 24, 'chunks': 1}
    >>> decode_tensor(meta, [bytearray(b) for b in buffers]).tolist()
    [[0, 1, 2], [3, 4, 5]]
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes

#: Default frame size for large tensors; chosen from the measurements in ``wire.py``'s docstring.
CHUNK_BYTES = 1 << 20

_NUMERIC: dict[str, np.dtype] = {
    d.name: d.np_dtype for d in dtypes.ALL_DTYPES if not d.is_string
}  # float16/32/64, bfloat16, int8/16/32/64, uint8, bool
_NAME_OF_NUMPY: dict[np.dtype, str] = {v: k for k, v in _NUMERIC.items()}
_STRING = "string"
_LENGTH_DTYPE = np.dtype("<u8")
_META_KEYS = frozenset(("dtype", "shape", "nbytes", "chunks"))
_INT = frozenset((int,))  # (bool is an int subclass, never a size: type checks, not isinstance)
_NUMERIC_ITEMSIZE: dict[str, int] = {name: d.itemsize for name, d in _NUMERIC.items()}
_ITEMSIZE: dict[str, int] = _NUMERIC_ITEMSIZE | {"string": 0}


class WireError(errors.InvalidArgumentError):
    """A message, tensor or graph could not be encoded or decoded; the message names the problem.

    It is an ``InvalidArgumentError`` (code 3), so a server answers a malformed request with an
    ordinary error reply. Construct it as ``WireError(None, None, message)``.

    Example:
        >>> e = WireError(None, None, "unknown dtype 'complex64'")
        >>> isinstance(e, errors.InvalidArgumentError), e.error_code, e.message
        (True, 3, "unknown dtype 'complex64'")
    """


@dataclass(frozen=True)
class WireLimits:
    """Upper bounds a decoder enforces before it allocates or parses anything.

    Attributes:
        max_header_bytes: Size of the msgpack header frame.
        max_tensor_bytes: Payload size of one tensor.
        max_frames: Frames in one message, header included.
        max_rank: Dimensions of one tensor.
        max_depth: Nesting of lists and maps in a header.

    Example:
        >>> WireLimits(max_rank=4).max_rank
        4
    """

    max_header_bytes: int = 16 << 20
    max_tensor_bytes: int = 4 << 30
    max_frames: int = 1 << 16
    max_rank: int = 32
    max_depth: int = 64


DEFAULT_LIMITS = WireLimits()


def chunk_sizes(nbytes: int, chunks: int) -> list[int]:
    """The frame sizes :func:`encode_tensor` uses: ``chunks`` near-equal parts of ``nbytes``.

    Example:
        >>> chunk_sizes(10, 3)
        [4, 3, 3]
    """
    if chunks <= 0:
        return []
    base, extra = divmod(nbytes, chunks)
    return [base + 1 if i < extra else base for i in range(chunks)]


def encode_tensor(value: Any, chunk_bytes: int = CHUNK_BYTES) -> tuple[dict[str, Any], list[memoryview]]:
    """Encodes one tensor value as ``(meta, buffers)``.

    Args:
        value: A numpy array or scalar, a torch tensor (CPU or CUDA), or ``bytes`` (a 0-d string).
            String tensors are numpy ``object`` arrays of ``bytes`` (``str`` elements are sent as UTF-8).
        chunk_bytes: Largest frame size; bigger payloads are split into several frames.

    Returns:
        The plain-data meta and the payload frames (memoryviews that keep ``value`` alive).

    Raises:
        WireError: the value's type or dtype cannot travel, or a string element is not bytes/str.

    Example:
        >>> meta, buffers = encode_tensor(np.zeros(3, np.float32), chunk_bytes=8)
        >>> meta["chunks"], [len(b) for b in buffers]
        (2, [6, 6])
    """
    if chunk_bytes <= 0:
        raise WireError(None, None, f"chunk_bytes must be positive, got {chunk_bytes}")
    name, shape, payload = _payload(value)
    nbytes = payload.nbytes
    if 0 < nbytes <= chunk_bytes:  # (most tensors: one frame)
        return {"dtype": name, "shape": shape, "nbytes": nbytes, "chunks": 1}, [payload]
    chunks = math.ceil(nbytes / chunk_bytes)
    buffers, pos = [], 0
    for size in chunk_sizes(nbytes, chunks):
        buffers.append(payload[pos : pos + size])
        pos += size
    return {"dtype": name, "shape": shape, "nbytes": nbytes, "chunks": chunks}, buffers


def _payload(value: Any) -> tuple[str, list[int], memoryview]:
    torch = sys.modules.get("torch")  # a value can only be a torch tensor if torch is already loaded
    if torch is not None and isinstance(value, torch.Tensor):
        return _torch_payload(value, torch)
    if isinstance(value, bytes | str):
        value = np.array(value.encode() if isinstance(value, str) else value, dtype=object)
    elif isinstance(value, np.generic):
        value = np.asarray(value)
    elif not isinstance(value, np.ndarray):
        raise WireError(
            None,
            None,
            f"Cannot encode a {type(value).__name__} as a tensor; pass a numpy array, scalar or torch tensor",
        )
    if value.dtype.kind in "OSU":
        return _STRING, list(value.shape), _string_payload(value)
    if not value.dtype.isnative:
        value = value.astype(value.dtype.newbyteorder("="))
    name = _NAME_OF_NUMPY.get(value.dtype)
    if name is None:
        raise WireError(None, None, f"Cannot encode numpy dtype {value.dtype} (no such TensorFlow dtype)")
    if not value.flags.c_contiguous:
        value = value.copy(order="C")  # the one copy a non-contiguous array costs
    return name, list(value.shape), memoryview(value.reshape(-1).view(np.uint8))


def _torch_payload(t: Any, torch: Any) -> tuple[str, list[int], memoryview]:
    name = _TORCH_NAMES.get(t.dtype) if _TORCH_NAMES else _torch_names(torch).get(t.dtype)
    if name is None or t.layout is not torch.strided:
        raise WireError(None, None, f"Cannot encode a torch tensor of dtype {t.dtype} and layout {t.layout}")
    # made contiguous where it lives (on a GPU that is cheap), so the host side pays one copy at most; each step
    # only when needed (this runs for every tensor a task sends: the usual tensor passes one test)
    if t.requires_grad or t.is_conj() or t.is_neg() or not t.is_contiguous() or t.device.type != "cpu":
        t = t.detach().resolve_conj().resolve_neg().contiguous().cpu()
    if name in _BYTE_VIEWED:
        # viewing as bytes keeps bfloat16 and bool exact; numpy has no bfloat16 for torch to export
        return name, list(t.shape), memoryview(t.reshape(-1).view(torch.uint8).numpy())
    array = t.numpy()
    return name, list(t.shape), memoryview(array).cast("B") if array.size else memoryview(b"")


_TORCH_NAMES: dict[Any, str] = {}  # torch dtype -> wire dtype name, filled on first use
_BYTE_VIEWED = frozenset({"bfloat16", "bool"})


def _torch_names(torch: Any) -> dict[Any, str]:
    for name in _NUMERIC:
        dtype = getattr(torch, name, None)
        if isinstance(dtype, torch.dtype):
            _TORCH_NAMES[dtype] = name
    return _TORCH_NAMES


def _string_payload(array: np.ndarray) -> memoryview:
    items = []
    for index, item in enumerate(array.reshape(-1).tolist()):
        if isinstance(item, str):
            item = item.encode()
        elif not isinstance(item, bytes):
            raise WireError(
                None, None, f"String tensor element {index} is a {type(item).__name__}, expected bytes or str"
            )
        items.append(item)
    lengths = np.fromiter(map(len, items), dtype=_LENGTH_DTYPE, count=len(items))
    return memoryview(b"".join([lengths.tobytes(), *items]))


def check_meta(meta: Any, limits: WireLimits = DEFAULT_LIMITS) -> tuple[str, tuple[int, ...], int, int]:
    """Validates a tensor meta from the wire; returns ``(dtype, shape, nbytes, chunks)``.

    Raises:
        WireError: a key is missing or unknown, a value has the wrong type, the dtype is unknown,
            the rank or a dim is out of range, or ``nbytes`` does not match shape × itemsize.

    Example:
        >>> check_meta({"dtype": "float32", "shape": [2], "nbytes": 8, "chunks": 1})
        ('float32', (2,), 8, 1)
    """
    # Every tensor of every message comes through here: the common case (a numeric tensor of at least one byte) in
    # one test, its loops in C; anything else, well formed or not, takes the checks that say what is wrong.
    if type(meta) is dict and meta.keys() == _META_KEYS:
        name, shape, nbytes, chunks = meta["dtype"], meta["shape"], meta["nbytes"], meta["chunks"]
        if (
            type(name) is str
            and type(shape) is list
            and type(nbytes) is int
            and type(chunks) is int
            and 0 < chunks <= nbytes <= limits.max_tensor_bytes
            and chunks <= limits.max_frames
            and len(shape) <= limits.max_rank
            and _INT.issuperset(map(type, shape))
            and (not shape or min(shape) >= 0)
            and math.prod(shape) * _NUMERIC_ITEMSIZE.get(name, 0) == nbytes  # (so no dim exceeds nbytes either)
        ):
            return name, tuple(shape), nbytes, chunks
    return _check_meta_slowly(meta, limits)


def _check_meta_slowly(meta: Any, limits: WireLimits) -> tuple[str, tuple[int, ...], int, int]:
    if type(meta) is not dict or meta.keys() != _META_KEYS:
        if not isinstance(meta, dict) or set(meta) != _META_KEYS:
            keys = sorted(map(str, meta)) if isinstance(meta, dict) else type(meta).__name__
            raise WireError(None, None, f"Tensor meta must be a map with keys {sorted(_META_KEYS)}, got {keys}")
    name, shape, nbytes, chunks = meta["dtype"], meta["shape"], meta["nbytes"], meta["chunks"]
    itemsize = _ITEMSIZE.get(name) if type(name) is str else None
    if itemsize is None:
        raise WireError(None, None, f"Unknown tensor dtype {name!r:.40}")
    if type(nbytes) is not int or not 0 <= nbytes <= limits.max_tensor_bytes:
        raise WireError(None, None, f"Tensor nbytes {nbytes!r} is not an int in [0, {limits.max_tensor_bytes}]")
    if type(chunks) is not int or not 0 <= chunks <= min(nbytes, limits.max_frames):
        raise WireError(None, None, f"Tensor chunks {chunks!r} is not an int in [0, min(nbytes, max_frames)]")
    if (chunks == 0) != (nbytes == 0):
        raise WireError(None, None, f"Tensor of {nbytes} bytes cannot travel in {chunks} frames")
    if type(shape) is not list or len(shape) > limits.max_rank:
        raise WireError(None, None, f"Tensor shape {shape!r} is not a list of at most {limits.max_rank} dims")
    count, nonzero = 1, 1  # the element count, and the product of the dims other than 0 (even an empty tensor
    limit = limits.max_tensor_bytes  # must not describe a huge shape: numpy would overflow)
    for dim in shape:
        if type(dim) is not int or not 0 <= dim <= limit:
            raise WireError(None, None, f"Tensor shape {shape!r} has a bad dim {dim!r}")
        count *= dim
        if dim:
            nonzero *= dim
    if nonzero > limit:
        raise WireError(None, None, f"Tensor shape {shape!r} is too large")
    if name == _STRING:
        if count * _LENGTH_DTYPE.itemsize > nbytes:
            raise WireError(None, None, f"String tensor of shape {shape} cannot fit its lengths in {nbytes} bytes")
    elif count * itemsize != nbytes:
        raise WireError(None, None, f"Tensor of shape {shape} and dtype {name} needs a different size than {nbytes}")
    return name, tuple(shape), nbytes, chunks


def _is_int(value: Any) -> bool:
    return type(value) is int  # bool is an int subclass but never a size


def byte_view(frame: Any) -> memoryview:
    """A flat byte memoryview of a frame (bytes, bytearray, memoryview, numpy array, zmq.Frame).

    Raises:
        WireError: the frame exposes no buffer, or a non-contiguous one.

    Example:
        >>> len(byte_view(np.zeros(2, np.float32)))
        8
    """
    try:
        view = memoryview(frame)
    except TypeError:
        raise WireError(None, None, f"Frame of type {type(frame).__name__} is not a bytes-like object") from None
    if view.format == "B" and view.ndim == 1:
        return view
    if not view.c_contiguous:
        raise WireError(None, None, "Frame buffer is not contiguous")
    return view.cast("B")


def decode_tensor(meta: Any, buffers: Sequence[Any], limits: WireLimits = DEFAULT_LIMITS) -> np.ndarray:
    """Rebuilds a writeable numpy array from a meta and its frames.

    A single writable frame is used in place (the array shares its memory); otherwise the frames
    are copied once into a fresh array. String tensors come back as ``object`` arrays of ``bytes``.

    Raises:
        WireError: the meta is invalid, the frame count or total size does not match it, or the
            payload is inconsistent (string lengths, bool bytes other than 0/1).

    Example:
        >>> meta, buffers = encode_tensor(np.array([b"ab", b""], dtype=object))
        >>> decode_tensor(meta, buffers)
        array([b'ab', b''], dtype=object)
    """
    return decode_checked(check_meta(meta, limits), buffers)


def decode_checked(checked: tuple[str, tuple[int, ...], int, int], buffers: Sequence[Any]) -> np.ndarray:
    """:func:`decode_tensor` of a meta :func:`check_meta` already checked (its result ``checked``).

    Example:
        >>> meta, buffers = encode_tensor(np.arange(3, dtype=np.int64))
        >>> decode_checked(check_meta(meta), buffers).tolist()
        [0, 1, 2]
    """
    return decode_views(checked, [byte_view(b) for b in buffers])


def decode_views(checked: tuple[str, tuple[int, ...], int, int], views: list[memoryview]) -> np.ndarray:
    """:func:`decode_checked` of frames already made flat byte views (:func:`byte_view`).

    Example:
        >>> meta, buffers = encode_tensor(np.arange(3, dtype=np.int32))
        >>> decode_views(check_meta(meta), [byte_view(b) for b in buffers]).tolist()
        [0, 1, 2]
    """
    name, shape, nbytes, chunks = checked
    if len(views) != chunks:
        raise WireError(None, None, f"Tensor meta announces {chunks} frames but {len(views)} arrived")
    received = views[0].nbytes if chunks == 1 else sum(v.nbytes for v in views)
    if received != nbytes:
        raise WireError(None, None, f"Tensor meta announces {nbytes} bytes but its frames hold {received}")
    if name == _STRING:
        return _decode_strings(shape, views)
    dtype = _NUMERIC[name]
    array = None
    if chunks == 1 and not views[0].readonly:
        array = np.frombuffer(views[0], dtype=dtype).reshape(shape)
        if not array.flags.aligned:
            array = None  # torch kernels expect aligned memory: take the copy path instead
    if array is None:
        array = np.empty(shape, dtype=dtype)
        _gather(views, array.reshape(-1).view(np.uint8))
    if dtype.kind == "b" and nbytes and array.reshape(-1).view(np.uint8).max() > 1:
        raise WireError(None, None, "Bool tensor holds byte values other than 0 and 1")
    return array


def _gather(views: list[memoryview], out: np.ndarray) -> None:
    pos = 0
    for view in views:
        out[pos : pos + view.nbytes] = np.frombuffer(view, dtype=np.uint8)
        pos += view.nbytes


def _decode_strings(shape: tuple[int, ...], views: list[memoryview]) -> np.ndarray:
    count = math.prod(shape)
    data = np.empty(sum(v.nbytes for v in views), dtype=np.uint8)
    _gather(views, data)
    head = count * _LENGTH_DTYPE.itemsize
    lengths = data[:head].view(_LENGTH_DTYPE)
    body = data[head:].tobytes()
    # max() first: a sum of huge forged lengths could wrap around in uint64
    longest = int(lengths.max()) if count else 0
    if longest > len(body) or (int(lengths.sum()) if count else 0) != len(body):
        raise WireError(None, None, f"String lengths do not add up to the {len(body)} payload bytes")
    out = np.empty(count, dtype=object)
    pos = 0
    for i, length in enumerate(lengths.tolist()):
        out[i] = body[pos : pos + length]
        pos += length
    return out.reshape(shape)


def decode_tensor_torch(
    meta: Any, buffers: Sequence[Any], device: Any = "cpu", limits: WireLimits = DEFAULT_LIMITS
) -> Any:
    """Like :func:`decode_tensor`, but returns a torch tensor on ``device`` (strings stay numpy).

    On the CPU the tensor shares memory with the decoded array (so with a single writable frame
    it is a view of the frame); other devices add the one host-to-device copy.

    Raises:
        WireError: as :func:`decode_tensor`.

    Example:
        >>> meta, buffers = encode_tensor(np.ones(2, np.float16))
        >>> decode_tensor_torch(meta, buffers)
        tensor([1., 1.], dtype=torch.float16)
    """
    import torch  # only callers that want torch tensors pay for importing it

    array = decode_tensor(meta, buffers, limits)
    if array.dtype == object:
        return array
    if meta["dtype"] == "bfloat16":
        tensor = torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    else:
        tensor = torch.from_numpy(array)
    device = torch.device(device)
    return tensor if device.type == "cpu" else tensor.to(device)
