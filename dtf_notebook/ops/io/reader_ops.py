"""TF1's readers: ``tf.TextLineReader``, ``tf.TFRecordReader``, ``tf.FixedLengthRecordReader``, ``tf.WholeFileReader``,
``tf.IdentityReader`` and their ops (``*ReaderV2`` handles, ``ReaderReadV2``, ``ReaderReadUpToV2``, ...).

A reader is a resource of the task its handle op runs on (see :mod:`dtf_notebook.runtime.readers`). ``read``
takes the queue of work units (file names, usually from ``tf.train.string_input_producer``): its op takes both
handles by reference, so it is built colocated with both, and the whole pipeline runs on the task that holds
them; no record passes through the client. A read waits on the queue like a dequeue (never past its step's
deadline) and fails with ``OutOfRangeError`` once the queue is closed and empty: the end of the input.

Example:
    >>> import dtf_notebook as tf
    >>> from dtf_notebook.lib.io import file_io
    >>> file_io.write_string_to_file("memory://reader_ops_doc/a.txt", "first\\nsecond\\n")
    >>> with tf.Graph().as_default():
    ...     names = tf.FIFOQueue(2, tf.string, shapes=[[]])
    ...     fill = names.enqueue("memory://reader_ops_doc/a.txt")
    ...     key, line = TextLineReader().read(names)
    ...     with tf.Session() as sess:
    ...         sess.run(fill)
    ...         print(sess.run([key, line]), sess.run(line))
    [b'memory://reader_ops_doc/a.txt:1', b'first'] b'second'
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, scalar
from dtf_notebook.lazy_modules import torch
from dtf_notebook.lib.io.tf_record import TFRecordOptions
from dtf_notebook.ops.data_flow.common import HANDLE_SPEC, expect_resource, handle_kernel, register_handle_op
from dtf_notebook.ops.op_helpers import make_op
from dtf_notebook.runtime.queues import FIFOQueueResource
from dtf_notebook.runtime.readers import SOURCES, ReaderResource

__all__ = [
    "ReaderBase",
    "TextLineReader",
    "TFRecordReader",
    "FixedLengthRecordReader",
    "WholeFileReader",
    "IdentityReader",
]

#: Each reader's attrs beyond container and shared_name, with their defaults.
_ATTRS: dict[str, dict[str, Any]] = {
    "TextLineReader": {"skip_header_lines": 0},
    "TFRecordReader": {"compression_type": ""},
    "FixedLengthRecordReader": {
        "header_bytes": 0,
        "record_bytes": 0,
        "footer_bytes": 0,
        "hop_bytes": 0,
        "encoding": "",
    },
    "WholeFileReader": {},
    "IdentityReader": {},
}


# ---- handle ops ------------------------------------------------------------------------------------
def _reader_infer(op: Operation) -> list:
    for attr, default in _ATTRS[op.type[:-2]].items():
        value = op.get_attr(attr)
        if not isinstance(value, type(default)) or isinstance(value, bool):
            raise TypeError(f"Attr '{attr}' of {op.type} '{op.name}' must be a {type(default).__name__}, got {value!r}")
    return [HANDLE_SPEC]


def _check_reader_attrs(op: Operation) -> None:
    """TF checks these when the reader's kernel is built, so they fail at run time as InvalidArgument."""
    kind = op.type[:-2]
    if kind == "FixedLengthRecordReader":
        for attr in ("header_bytes", "record_bytes", "footer_bytes", "hop_bytes"):
            if op.get_attr(attr) < 0:
                raise errors.InvalidArgumentError(None, op, f"{attr} must be >= 0 not {op.get_attr(attr)}")
    if kind in ("FixedLengthRecordReader", "TFRecordReader"):
        attr = "encoding" if kind == "FixedLengthRecordReader" else "compression_type"
        if op.get_attr(attr) not in ("", "ZLIB", "GZIP"):
            raise errors.InvalidArgumentError(None, op, f"Unsupported {attr} '{op.get_attr(attr)}' of {op.name}")
    if kind == "TextLineReader" and op.get_attr("skip_header_lines") < 0:
        raise errors.InvalidArgumentError(
            None, op, f"skip_header_lines must be >= 0 not {op.get_attr('skip_header_lines')}"
        )


def _make_reader(op: Operation, container: str, name: str, mgr: Any, device: str, files: Any) -> ReaderResource:
    _check_reader_attrs(op)
    kind = op.type[:-2]
    source = SOURCES[kind](op.get_attr)
    return ReaderResource(name, f"{kind} '{op.name}'", source, container, mgr, device, files)


def _verify_reader(op: Operation, resource: Any) -> None:
    reader = expect_resource(resource, ReaderResource, op)
    kind = op.type[:-2]
    if not reader.label.startswith(kind + " "):
        raise errors.InvalidArgumentError(
            None, op, f"Shared reader '{reader.name}' is a {reader.label.split()[0]}, but {op.name} asks for a {kind}"
        )


def _reader_kernel(op: Operation, ctx: Any) -> Any:
    return handle_kernel(partial(_make_reader, files=ctx.state.files), _verify_reader)(op, ctx)


for _kind in _ATTRS:
    register_handle_op(_kind + "V2", _reader_infer, _reader_kernel)


# ---- ops using a reader ----------------------------------------------------------------------------
def _string(value: bytes) -> np.ndarray:
    return np.array(value, dtype=object)


def _strings(values: list[bytes]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _read_kernel(op: Operation, ctx: Any) -> Any:
    def run(step: Any, reader: Any, queue: Any) -> tuple[np.ndarray, np.ndarray]:
        queue = expect_resource(queue, FIFOQueueResource, op)
        key, value = expect_resource(reader, ReaderResource, op).read(queue, step)
        return _string(key), _string(value)

    return run


def _read_up_to_kernel(op: Operation, ctx: Any) -> Any:
    def run(step: Any, reader: Any, queue: Any, n: Any) -> tuple[np.ndarray, np.ndarray]:
        queue = expect_resource(queue, FIFOQueueResource, op)
        keys, values = expect_resource(reader, ReaderResource, op).read_up_to(queue, int(n), step)
        return _strings(keys), _strings(values)

    return run


def _register_reading(op_type: str, outputs: list, kernel: Any) -> None:
    op_registry.register_op(
        op_type,
        infer=lambda op: outputs,
        kernel=kernel,
        grad=op_registry.NOT_DIFFERENTIABLE,
        ref_inputs=(0, 1),
        stateful=True,
        cpu_only=True,
        needs_step=True,
    )


_register_reading("ReaderReadV2", [(dtypes.string, scalar()), (dtypes.string, scalar())], _read_kernel)
_register_reading(
    "ReaderReadUpToV2", [(dtypes.string, TensorShape([None])), (dtypes.string, TensorShape([None]))], _read_up_to_kernel
)


def _register_query(op_type: str, outputs: list, fn: Any) -> None:
    def kernel(op: Operation, ctx: Any) -> Any:
        return lambda reader, *args: fn(expect_resource(reader, ReaderResource, op), *args)

    op_registry.register_op(
        op_type,
        infer=lambda op: outputs,
        kernel=kernel,
        grad=op_registry.NOT_DIFFERENTIABLE,
        ref_inputs=(0,),
        stateful=True,
        cpu_only=True,
    )


def _scalar_bytes(value: Any) -> bytes:
    item = np.asarray(value, dtype=object).reshape(-1)
    if item.size != 1:
        raise errors.InvalidArgumentError(None, None, f"A reader state must be a string scalar, got shape {item.shape}")
    return bytes(item[0])


_int64 = [(dtypes.int64, scalar())]
_register_query("ReaderNumRecordsProducedV2", _int64, lambda r: torch.tensor(r.num_records_produced()))
_register_query("ReaderNumWorkUnitsCompletedV2", _int64, lambda r: torch.tensor(r.num_work_units_completed()))
_register_query("ReaderSerializeStateV2", [(dtypes.string, scalar())], lambda r: _string(r.serialize_state()))
_register_query("ReaderRestoreStateV2", [], lambda r, state: r.restore_state(_scalar_bytes(state)))
_register_query("ReaderResetV2", [], lambda r: r.reset())


# ---- Python API ------------------------------------------------------------------------------------
def _queue_ref(queue: Any) -> Tensor:
    return queue if isinstance(queue, Tensor) else queue.queue_ref


class ReaderBase:
    """Base class of the readers (TF1's ``tf.ReaderBase``): records from the work units of a queue.

    A reader produces one record per ``read``; when it has finished a work unit (a file) it takes the next
    one from the queue it reads. Every method builds an op colocated with the reader.

    Args:
        reader_ref: The reader's handle (the output of its ``*ReaderV2`` op).
        supports_serialize: Whether TF serializes this reader's state (here every reader does; see
            :meth:`serialize_state`).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     reader = IdentityReader()
        >>> reader.reader_ref.op.type, reader.supports_serialize
        ('IdentityReaderV2', True)
    """

    def __init__(self, reader_ref: Tensor, supports_serialize: bool = False) -> None:
        self._reader_ref = reader_ref
        self._supports_serialize = supports_serialize

    @property
    def reader_ref(self) -> Tensor:
        """The reader's handle."""
        return self._reader_ref

    @property
    def supports_serialize(self) -> bool:
        """Whether TF can serialize this kind of reader's state."""
        return self._supports_serialize

    def _op(self, op_type: str, inputs: list, name: str | None) -> Operation:
        return make_op(op_type, [self._reader_ref, *inputs], {}, name=name or op_type)

    def read(self, queue: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
        """The next record: string scalars ``(key, value)``; takes a work unit from ``queue`` when needed.

        Args:
            queue: A queue of string scalars (or its handle).
            name: Op name (default ``ReaderReadV2``).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     work = tf.FIFOQueue(3, tf.string)
            ...     fill = work.enqueue_many([["a", "b"]])
            ...     key, value = IdentityReader().read(work)
            ...     with tf.Session() as sess:
            ...         sess.run(fill)
            ...         print(sess.run([key, value]))
            [b'a', b'a']
        """
        return tuple(self._op("ReaderReadV2", [_queue_ref(queue)], name).outputs)

    def read_up_to(self, queue: Any, num_records: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
        """Up to ``num_records`` records as string vectors ``(keys, values)``: fewer at the end of a work unit.

        Example:
            >>> import dtf_notebook as tf
            >>> from dtf_notebook.lib.io import file_io
            >>> file_io.write_string_to_file("memory://reader_ops_doc/up_to.txt", "1\\n2\\n3\\n")
            >>> with tf.Graph().as_default():
            ...     work = tf.FIFOQueue(3, tf.string)
            ...     fill = work.enqueue("memory://reader_ops_doc/up_to.txt")
            ...     keys, lines = TextLineReader().read_up_to(work, 2)
            ...     with tf.Session() as sess:
            ...         sess.run(fill)
            ...         print(sess.run(lines), sess.run(lines))
            [b'1' b'2'] [b'3']
        """
        n = convert_to_tensor(num_records, dtype=dtypes.int64, name="num_records")
        return tuple(self._op("ReaderReadUpToV2", [_queue_ref(queue), n], name).outputs)

    def num_records_produced(self, name: str | None = None) -> Tensor:
        """An int64 scalar: the records produced (successful reads) so far.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default(), tf.Session() as sess:
            ...     print(sess.run(IdentityReader().num_records_produced()))
            0
        """
        return self._op("ReaderNumRecordsProducedV2", [], name).outputs[0]

    def num_work_units_completed(self, name: str | None = None) -> Tensor:
        """An int64 scalar: the work units (files) finished so far.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     IdentityReader().num_work_units_completed().op.type
            'ReaderNumWorkUnitsCompletedV2'
        """
        return self._op("ReaderNumWorkUnitsCompletedV2", [], name).outputs[0]

    def serialize_state(self, name: str | None = None) -> Tensor:
        """A string scalar holding the reader's state, for :meth:`restore_state`.

        ``IdentityReader`` and ``WholeFileReader`` state is TF's ``ReaderBaseState`` bytes. TF cannot serialize
        the other readers; here their state also records how far the file in progress was read, so a restored
        reader reopens it there.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default(), tf.Session() as sess:
            ...     print(sess.run(IdentityReader().serialize_state()))
            b''
        """
        return self._op("ReaderSerializeStateV2", [], name).outputs[0]

    def restore_state(self, state: Any, name: str | None = None) -> Operation:
        """An op restoring a state from :meth:`serialize_state` (a bad state is an InvalidArgumentError and
        resets the reader).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     IdentityReader().restore_state(b"").type
            'ReaderRestoreStateV2'
        """
        state_t = convert_to_tensor(state, dtype=dtypes.string, name="state")
        return self._op("ReaderRestoreStateV2", [state_t], name)

    def reset(self, name: str | None = None) -> Operation:
        """An op returning the reader to its initial state (counters zero, no work unit in progress).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     IdentityReader().reset().type
            'ReaderResetV2'
        """
        return self._op("ReaderResetV2", [], name)


def _reader(kind: str, name: str | None, **attrs: Any) -> Tensor:
    values = {**_ATTRS[kind], **{k: v for k, v in attrs.items() if v is not None}}
    values.update(container="", shared_name="")
    return make_op(kind + "V2", [], values, name=name or kind + "V2").outputs[0]


class TextLineReader(ReaderBase):
    """A reader of text lines, newlines stripped; keys are ``file:line`` (TF1's ``tf.TextLineReader``).

    Args:
        skip_header_lines: Lines skipped at the start of every file (default 0).
        name: Op name (default ``TextLineReaderV2``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     TextLineReader(skip_header_lines=1).reader_ref.op.get_attr("skip_header_lines")
        1
    """

    def __init__(self, skip_header_lines: int | None = None, name: str | None = None) -> None:
        super().__init__(_reader("TextLineReader", name, skip_header_lines=skip_header_lines))


class TFRecordReader(ReaderBase):
    """A reader of the records of TFRecord files; keys are ``file:offset`` (TF1's ``tf.TFRecordReader``).

    Args:
        name: Op name (default ``TFRecordReaderV2``).
        options: A ``TFRecordOptions`` (or compression type) saying how the files are compressed.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     TFRecordReader(options=tf.io.TFRecordOptions("GZIP")).reader_ref.op.get_attr("compression_type")
        'GZIP'
    """

    def __init__(self, name: str | None = None, options: Any = None) -> None:
        compression = TFRecordOptions.get_compression_type_string(options)
        super().__init__(_reader("TFRecordReader", name, compression_type=compression))


class FixedLengthRecordReader(ReaderBase):
    """A reader of fixed-length records (TF1's ``tf.FixedLengthRecordReader``); keys are ``file:k``.

    Record ``k`` starts at ``header_bytes + k * hop_bytes`` and is produced when it and the footer fit in the file.

    Args:
        record_bytes: Bytes per record.
        header_bytes: Bytes skipped at the start of each file.
        footer_bytes: Bytes ignored at the end of each file.
        hop_bytes: Bytes from one record's start to the next (0: ``record_bytes``, records side by side).
        name: Op name (default ``FixedLengthRecordReaderV2``).
        encoding: ``"ZLIB"`` or ``"GZIP"`` for compressed files.

    Example:
        >>> import dtf_notebook as tf
        >>> from dtf_notebook.lib.io import file_io
        >>> file_io.write_string_to_file("memory://reader_ops_doc/cifar.bin", bytes(range(7)))
        >>> with tf.Graph().as_default():
        ...     work = tf.FIFOQueue(1, tf.string)
        ...     fill = work.enqueue("memory://reader_ops_doc/cifar.bin")
        ...     _, records = FixedLengthRecordReader(2, header_bytes=1).read_up_to(work, 5)
        ...     with tf.Session() as sess:
        ...         sess.run(fill)
        ...         print([list(r) for r in sess.run(records)])
        [[1, 2], [3, 4], [5, 6]]
    """

    def __init__(
        self,
        record_bytes: int,
        header_bytes: int | None = None,
        footer_bytes: int | None = None,
        hop_bytes: int | None = None,
        name: str | None = None,
        encoding: str | None = None,
    ) -> None:
        ref = _reader(
            "FixedLengthRecordReader",
            name,
            record_bytes=record_bytes,
            header_bytes=header_bytes,
            footer_bytes=footer_bytes,
            hop_bytes=hop_bytes,
            encoding=encoding,
        )
        super().__init__(ref)


class WholeFileReader(ReaderBase):
    """A reader whose record is a whole file: key its name, value its contents (TF1's ``tf.WholeFileReader``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     WholeFileReader().supports_serialize
        True
    """

    def __init__(self, name: str | None = None) -> None:
        super().__init__(_reader("WholeFileReader", name), supports_serialize=True)


class IdentityReader(ReaderBase):
    """A reader whose record is the work unit itself, as key and value (TF1's ``tf.IdentityReader``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     IdentityReader(name="ids").reader_ref.op.name
        'ids'
    """

    def __init__(self, name: str | None = None) -> None:
        super().__init__(_reader("IdentityReader", name), supports_serialize=True)
