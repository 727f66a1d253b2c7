"""Large messages as a stream of small ZeroMQ messages, reassembled in place as they arrive.

A ZeroMQ multipart message is delivered only once all its frames are in, so a 64 MiB tensor sent as one
message of 64 frames leaves the receiver idle while the bytes cross and then copies everything at once.
Sent as a *stream* (one head message, then one message per 1 MiB chunk), the receiver copies each chunk
into the tensor's final buffer while the next one is still on the wire, and the 1 MiB receive buffers are
recycled by the allocator; the tensors themselves land in buffers of a :class:`.BufferPool`, reused once
nothing refers to them, instead of a fresh 64 MiB block faulting in page by page at every step.

Stream messages start with the byte ``0xC1``, which msgpack never uses, so a receiver tells them from an
ordinary message (whose first frame is a msgpack map) by one byte:

- head: ``[0xC1 "H" stream_id:u64 parts:u32, header]`` — the header lists every tensor's meta;
- part: ``[0xC1 "P" stream_id:u64, chunk]`` — one payload frame, in the order of the metas.

The sender must put a stream's messages on one connection back to back in order (ZeroMQ keeps the order of a
connection's messages). The receiver checks each part against the size its meta announced, bounds how many
streams may be open at once and how long one may stay incomplete, and drops parts of streams it does not know.

Example:
    >>> import numpy as np
    >>> from dtf_notebook.distributed import wire
    >>> frames = wire.encode_message({"id": 3}, [np.arange(6, dtype=np.float32)], chunk_bytes=8)
    >>> messages = stream_messages(frames, stream_id=1, min_bytes=0)
    >>> len(messages)          # head + 3 parts
    4
    >>> assembler = StreamAssembler()
    >>> [assembler.feed("peer", m) for m in messages[:-1]]
    [None, None, None]
    >>> header, tensors = assembler.feed("peer", messages[-1])
    >>> header["id"], tensors[0].tolist()
    (3, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.distributed import wire
from dtf_notebook.distributed.tensor_codec import byte_view, chunk_sizes
from dtf_notebook.runtime.buffer_pool import RECEIVE_POOL

STREAM_BYTES = 4 << 20
"""Messages whose tensors hold at least this many bytes travel as streams (smaller ones gain nothing)."""

_MARK = 0xC1
_HEAD = b"\xc1H"
_PART = b"\xc1P"
_HEAD_LEN = 2 + 8 + 4
_PART_LEN = 2 + 8


class StreamError(wire.WireError):
    """A stream that cannot be completed; ``header`` is the request it carried, when its head was valid.

    Example:
        >>> error = StreamError("Stream 7 from peer stayed incomplete for 30 s", {"id": 3, "method": "SendTensor"})
        >>> error.request_id, isinstance(error, wire.WireError), error.message
        (3, True, 'Stream 7 from peer stayed incomplete for 30 s')
    """

    def __init__(self, message: str, header: dict[str, Any] | None = None, reserved: int = 0) -> None:
        super().__init__(None, None, message)
        self.header = header
        #: Bytes the dropped stream had been admitted with (see ``StreamAssembler``'s ``admit``); 0 before that.
        self.reserved = reserved

    @property
    def request_id(self) -> Any:
        """The id of the request the stream carried (None when its head was not valid)."""
        return None if self.header is None else self.header.get("id")


def stream_messages(frames: Sequence[Any], stream_id: int, min_bytes: int = STREAM_BYTES) -> list[list[Any]]:
    """Splits an encoded message (``wire.encode_message``) into the messages to send, in order.

    Small messages come back unchanged as a one-element list.

    Example:
        >>> stream_messages([b"\\x80"], stream_id=5)
        [[b'\\x80']]
    """
    payload = frames[1:]
    if len(payload) < 2 or sum(map(len, payload)) < min_bytes:  # (encode_message's frames: flat byte views)
        return [list(frames)]
    sid = stream_id.to_bytes(8, "little")
    head = [_HEAD + sid + len(payload).to_bytes(4, "little"), frames[0]]
    return [head, *([_PART + sid, chunk] for chunk in payload)]


class _Partial:
    """One stream being received: its header, the tensors being filled, and where the next part goes."""

    __slots__ = ("header", "slots", "results", "collected", "next", "born", "nbytes")

    def __init__(self, header: dict[str, Any], metas: list[Any], nbytes: int, born: float) -> None:
        self.header = header
        self.born = born
        self.next = 0
        self.nbytes = nbytes
        # One slot per expected part: (tensor index, byte offset, size).
        self.slots: list[tuple[int, int, int]] = []
        self.results: list[Any] = []
        self.collected: dict[int, list[Any]] = {}
        for index, (meta, (dtype, shape, nbytes, chunks)) in enumerate(metas):
            if dtype in ("string", "bool"):
                # Checked and decoded as a whole once complete (lengths; bytes other than 0/1).
                self.results.append(meta)
                self.collected[index] = []
            else:
                self.results.append(RECEIVE_POOL.take(nbytes).view(np.dtype(dtype)).reshape(shape))
            offset = 0
            for size in chunk_sizes(nbytes, chunks):
                self.slots.append((index, offset, size))
                offset += size

    def add(self, chunk: memoryview) -> bool:
        """Places one part; True when the stream is complete."""
        index, offset, size = self.slots[self.next]
        if chunk.nbytes != size:
            raise StreamError(
                f"Stream part {self.next} holds {chunk.nbytes} bytes, its tensor meta announced {size}",
                self.header,
                self.nbytes,
            )
        self.next += 1
        if index in self.collected:
            self.collected[index].append(chunk)
        else:
            flat = self.results[index].reshape(-1).view(np.uint8)
            flat[offset : offset + size] = np.frombuffer(chunk, dtype=np.uint8)
        return self.next == len(self.slots)

    def finish(self, limits: wire.WireLimits) -> list[Any]:
        for index, frames in self.collected.items():
            self.results[index] = wire.decode_tensor(self.results[index], frames, limits)
        return self.results


class StreamAssembler:
    """Turns the messages arriving from peers back into ``(header, tensors)``, streams included.

    One assembler serves one receiving loop (it is not thread-safe); ``key`` names the peer (a ROUTER
    identity, an address), since each peer's messages arrive in order but peers interleave.

    Args:
        limits: Wire limits applied to headers and tensor metas.
        max_open: Streams that may be incomplete at once; a new one beyond it is refused (``ResourceExhaustedError``)
            and no stream already arriving is pushed out for it.
        max_open_bytes: Bytes that incomplete streams may announce in all (their buffers are reserved at the
            head); a stream that does not fit is refused the same way (one bigger than all of it, as malformed).
        stale_after: Seconds after which an incomplete stream is dropped (its sender died or lied).
        on_drop: Told ``(peer key, StreamError)`` for each incomplete stream dropped (stale, or replaced), so
            the request it carried can still be answered; the error's ``header`` is that request.
        admit: Called ``(peer key, announced bytes)`` for each valid stream head before any buffer is reserved;
            an ``OpError`` it raises refuses the stream (``feed`` raises it, and the stream's parts are dropped).

    After ``feed`` returns a message, :attr:`last_nbytes` holds the bytes it announced and :attr:`last_streamed`
    whether it came as a stream.

    Example:
        >>> from dtf_notebook.distributed import wire
        >>> StreamAssembler().feed("peer", wire.encode_message({"a": 1}))    # an ordinary message
        ({'a': 1}, [])
    """

    def __init__(
        self,
        limits: wire.WireLimits | None = None,
        max_open: int = 64,
        max_open_bytes: int = 16 << 30,
        stale_after: float = 60.0,
        on_drop: Callable[[Hashable, StreamError], None] | None = None,
        admit: Callable[[Hashable, int], None] | None = None,
    ) -> None:
        self._limits = limits or wire.DEFAULT_LIMITS
        self._on_drop = on_drop
        self._admit = admit
        self.last_nbytes = 0
        self.last_streamed = False
        self._max_open = max_open
        self._max_open_bytes = max_open_bytes
        self._stale_after = stale_after
        self._open: dict[tuple[Hashable, int], _Partial] = {}

    def __len__(self) -> int:
        return len(self._open)

    def feed(self, key: Hashable, frames: Sequence[Any]) -> tuple[dict[str, Any], list[Any]] | None:
        """Takes one received message; returns the complete message it finishes, else None.

        Raises:
            WireError: a malformed message or stream head (:class:`StreamError` for a part that does not
                fit its stream; the stream is dropped).
        """
        first = byte_view(frames[0]) if frames else None
        if first is None or first.nbytes < 2 or first[0] != _MARK:
            header, tensors, self.last_nbytes = wire.decode_counted(frames, self._limits)
            self.last_streamed = False
            return header, tensors
        kind = bytes(first[:2])
        if kind == _HEAD:
            return self._head(key, first, frames)
        if kind == _PART and first.nbytes == _PART_LEN and len(frames) == 2:
            stream = (key, int.from_bytes(first[2:10], "little"))
            partial = self._open.get(stream)
            if partial is None:
                return None  # the rest of a stream dropped earlier (stale, or its head was refused)
            try:
                done = partial.add(byte_view(frames[1]))
            except StreamError:
                del self._open[stream]
                raise
            if not done:
                return None
            del self._open[stream]
            try:
                tensors = partial.finish(self._limits)
            except wire.WireError as e:  # e.g. a bool byte other than 0/1: the stream ends here, refused
                raise StreamError(e.message, partial.header, partial.nbytes) from None
            self.last_nbytes, self.last_streamed = partial.nbytes, True
            return partial.header, tensors
        raise wire.WireError(None, None, "Malformed stream message")

    def _head(self, key: Hashable, first: memoryview, frames: Sequence[Any]) -> None:
        if first.nbytes != _HEAD_LEN or len(frames) != 2:
            raise wire.WireError(None, None, "Malformed stream head")
        stream_id = int.from_bytes(first[2:10], "little")
        parts = int.from_bytes(first[10:14], "little")
        header, metas = wire.unpack_header(frames[1], self._limits)
        announced = sum(checked[2] for _, checked in metas)
        if announced > self._max_open_bytes:
            raise StreamError(
                f"Stream of {announced} bytes exceeds the {self._max_open_bytes} bytes a receiver reserves",
                header,
            )
        needed = sum(len(chunk_sizes(checked[2], checked[3])) for _, checked in metas)
        if needed != parts or not 2 <= parts < self._limits.max_frames:
            raise StreamError(f"Stream head announces {parts} parts, its tensor metas need {needed}", header)
        if (key, stream_id) in self._open:  # a sender reusing the id of a stream still open: the old one is over
            self._drop((key, stream_id), "was replaced by a new stream of the same id")
        now = time.monotonic()
        self._expire(now)
        held = sum(p.nbytes for p in self._open.values())
        if len(self._open) >= self._max_open or held + announced > self._max_open_bytes:
            # Full: the newcomer waits its turn; streams of other senders are never pushed out for it.
            raise errors.ResourceExhaustedError(
                None,
                None,
                f"This task is receiving {len(self._open)} large requests ({held} bytes) already, its limit; "
                "send again shortly",
            )
        if self._admit is not None:
            self._admit(key, announced)  # raises to refuse, before any buffer is reserved
        self._open[(key, stream_id)] = _Partial(header, metas, announced, now)
        return None

    def expire(self, now: float | None = None) -> None:
        """Drops the streams incomplete for longer than ``stale_after`` (a receiving loop calls this now and
        then, so that a stream whose sender went quiet is reported even when no other stream arrives).

        Example:
            >>> from dtf_notebook.distributed import wire
            >>> dropped = []
            >>> assembler = StreamAssembler(stale_after=0.0, on_drop=lambda peer, e: dropped.append(e.request_id))
            >>> head = stream_messages(wire.encode_message({"id": 4}, [b"x" * 8] * 2), 1, min_bytes=0)[0]
            >>> assembler.feed("peer", head), assembler.expire(), dropped
            (None, None, [4])
        """
        self._expire(time.monotonic() if now is None else now)

    def _expire(self, now: float) -> None:
        for stream, partial in list(self._open.items()):
            if now - partial.born > self._stale_after:
                self._drop(stream, f"stayed incomplete for more than {self._stale_after:g} s")

    def _drop(self, stream: tuple[Hashable, int], why: str) -> None:
        partial = self._open.pop(stream)
        if self._on_drop is not None:
            error = StreamError(f"Stream {stream[1]} from its sender {why}", partial.header, partial.nbytes)
            self._on_drop(stream[0], error)

    def request_of(self, frames: Sequence[Any]) -> dict[str, Any] | None:
        """The header of a message (or stream head) that failed to decode, when that much of it is readable.

        Example:
            >>> from dtf_notebook.distributed import wire
            >>> frames = wire.encode_message({"id": 3, "method": "SendTensor"}, [b"x"])
            >>> StreamAssembler().request_of([frames[0], b"frame that does not match its meta"])["id"]
            3
        """
        try:
            first = byte_view(frames[0])
            if first.nbytes >= 2 and first[0] == _MARK:
                if bytes(first[:2]) != _HEAD or len(frames) != 2:
                    return None
                first = byte_view(frames[1])
            return wire._unpack_header(first, self._limits)
        except wire.WireError:
            return None

    def forget(self, key: Hashable) -> None:
        """Drops the incomplete streams of one peer (it disconnected or restarted)."""
        for stream in [s for s in self._open if s[0] == key]:
            del self._open[stream]


__all__ = ["STREAM_BYTES", "StreamAssembler", "StreamError", "stream_messages"]
