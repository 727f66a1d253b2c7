"""File datasets: ``TextLineDataset``, ``TFRecordDataset``, ``FixedLengthRecordDataset`` and ``CsvDataset``.

The files are opened where the iterator runs (a cluster's worker reads them itself), after the task's file-root
check, through fsspec. ``filenames`` is a string scalar or vector (files read one after another), or a dataset of
file names; with ``num_parallel_reads`` the files are interleaved ``num_parallel_reads`` at a time, one record from
each in turn, as TF's parallel interleave does in its deterministic order.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     ds = TFRecordDataset(["a.tfrecord", "b.tfrecord"], compression_type="GZIP")
    ...     ds.output_types, ds.output_shapes
    (tf.string, TensorShape([]))
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.data.dataset_ops import DatasetV1, _Source
from dtf_notebook.data.pipeline_spec import PipelineBuilder
from dtf_notebook.data.structure import TensorSpec
from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops.array_ops import reshape
from dtf_notebook.ops.io.decode_ops import decode_csv

__all__ = ["TextLineDataset", "TFRecordDataset", "FixedLengthRecordDataset", "CsvDataset"]


def _filenames(filenames: Any) -> Tensor:
    with name_scope("filenames"):
        t = convert_to_tensor(filenames, dtype=dtypes.string, name="filenames")
    if t.shape.ndims is not None and t.shape.ndims > 1:
        raise TypeError(f"`filenames` must be a `tf.Tensor` of rank 0 or 1, got shape {t.shape}")
    return t


def _string(value: Any, name: str) -> Tensor:
    return convert_to_tensor("" if value is None else value, dtype=dtypes.string, name=name)


def _int64(value: Any, name: str, default: int) -> Tensor:
    return convert_to_tensor(default if value is None else value, dtype=dtypes.int64, name=name)


class _FileDataset(DatasetV1):
    """A reader over ``filenames``; a dataset of names or ``num_parallel_reads`` make it an interleave."""

    def __init__(self, filenames: Any, num_parallel_reads: Any, make_one: Any) -> None:
        super().__init__(TensorSpec(dtypes.string, []))
        if isinstance(filenames, DatasetV1):
            if filenames.output_types is not dtypes.string:
                raise TypeError("`filenames` must be a `tf.data.Dataset` of `tf.string` elements.")
            names = filenames
        else:
            names = None
            tensor = _filenames(filenames)
        if names is None and num_parallel_reads is None:
            self._impl = make_one(tensor)
        else:
            if names is None:
                names = DatasetV1.from_tensor_slices(reshape(tensor, [-1]))
            if num_parallel_reads is None:
                self._impl = names.flat_map(make_one)
            else:
                self._impl = names.interleave(make_one, cycle_length=num_parallel_reads, block_length=1)

    def _build(self, builder: PipelineBuilder) -> dict[str, Any]:
        return self._impl._build(builder)


class TextLineDataset(_FileDataset):
    """The lines of text files (without ``\\n`` or ``\\r\\n``).

    Args:
        filenames: A string scalar or vector, or a dataset of file names.
        compression_type: ``""``/None, ``"ZLIB"`` or ``"GZIP"``.
        buffer_size: Bytes read at a time.
        num_parallel_reads: Files read at once (their lines interleaved).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     TextLineDataset("data.csv").skip(1).output_types
        tf.string
    """

    def __init__(
        self, filenames: Any, compression_type: Any = None, buffer_size: Any = None, num_parallel_reads: Any = None
    ) -> None:
        def one(names: Any) -> DatasetV1:
            inputs = [
                _filenames(names),
                _string(compression_type, "compression_type"),
                _int64(buffer_size, "buffer_size", 256 * 1024),
            ]
            return _Source("TextLineDataset", inputs, TensorSpec(dtypes.string, []))

        super().__init__(filenames, num_parallel_reads, one)


class TFRecordDataset(_FileDataset):
    """The records of TFRecord files (CRCs checked).

    Args:
        filenames: A string scalar or vector, or a dataset of file names.
        compression_type: ``""``/None, ``"ZLIB"`` or ``"GZIP"``.
        buffer_size: Bytes read at a time.
        num_parallel_reads: Files read at once (their records interleaved).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     TFRecordDataset(["a", "b"], num_parallel_reads=2).output_shapes
        TensorShape([])
    """

    def __init__(
        self, filenames: Any, compression_type: Any = None, buffer_size: Any = None, num_parallel_reads: Any = None
    ) -> None:
        def one(names: Any) -> DatasetV1:
            inputs = [
                _filenames(names),
                _string(compression_type, "compression_type"),
                _int64(buffer_size, "buffer_size", 256 * 1024),
            ]
            return _Source("TFRecordDataset", inputs, TensorSpec(dtypes.string, []))

        super().__init__(filenames, num_parallel_reads, one)


class FixedLengthRecordDataset(_FileDataset):
    """Records of ``record_bytes`` bytes between a ``header_bytes`` header and a ``footer_bytes`` footer.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     FixedLengthRecordDataset("cifar.bin", 3073).output_types
        tf.string
    """

    def __init__(
        self,
        filenames: Any,
        record_bytes: Any,
        header_bytes: Any = None,
        footer_bytes: Any = None,
        buffer_size: Any = None,
        compression_type: Any = None,
        num_parallel_reads: Any = None,
    ) -> None:
        def one(names: Any) -> DatasetV1:
            inputs = [
                _filenames(names),
                _int64(header_bytes, "header_bytes", 0),
                _int64(record_bytes, "record_bytes", 0),
                _int64(footer_bytes, "footer_bytes", 0),
                _int64(buffer_size, "buffer_size", 256 * 1024),
                _string(compression_type, "compression_type"),
            ]
            return _Source("FixedLengthRecordDataset", inputs, TensorSpec(dtypes.string, []))

        super().__init__(filenames, num_parallel_reads, one)


class CsvDataset(DatasetV1):
    """``tf.data.experimental.CsvDataset``: the records of CSV files as tuples, one tensor per selected column.

    Each file's lines (after its header line with ``header=True``) are decoded by ``decode_csv``: a default of
    ``record_defaults`` is a tensor or list (the column's dtype and its value when the field is empty) or a dtype
    (a required column). Lines are records (a quoted field does not span lines).

    Args:
        filenames: A string scalar or vector.
        record_defaults: One default or dtype per selected column (float32, float64, int32, int64 or string).
        compression_type: ``""``/None, ``"ZLIB"`` or ``"GZIP"``.
        buffer_size: Bytes read at a time.
        header: Skip the first line of every file.
        field_delim: The one-character field delimiter.
        use_quote_delim: Double quotes may enclose fields (and ``""`` is a quote inside one).
        na_value: A field equal to this takes the column's default.
        select_cols: The sorted indices of the columns to read (``record_defaults`` has one per index).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     ds = CsvDataset("data.csv", [tf.int32, [0.0], [""]], header=True)
        ...     ds.output_types
        (tf.int32, tf.float32, tf.string)
    """

    def __init__(
        self,
        filenames: Any,
        record_defaults: Any,
        compression_type: Any = None,
        buffer_size: Any = None,
        header: bool = False,
        field_delim: str = ",",
        use_quote_delim: bool = True,
        na_value: str = "",
        select_cols: Any = None,
    ) -> None:
        defaults = [convert_to_tensor([], dtype=d) if isinstance(d, dtypes.DType) else d for d in list(record_defaults)]

        def decode(line: Tensor) -> tuple[Tensor, ...]:
            columns = decode_csv(
                line,
                record_defaults=defaults,
                field_delim=field_delim,
                use_quote_delim=use_quote_delim,
                na_value=na_value,
                select_cols=select_cols,
            )
            return tuple(columns)

        def one(names: Any) -> DatasetV1:
            lines = TextLineDataset(names, compression_type=compression_type, buffer_size=buffer_size)
            return lines.skip(1) if header else lines

        names = DatasetV1.from_tensor_slices(reshape(_filenames(filenames), [-1]))
        # Each file has its own header line: the files are read one at a time.
        self._impl = names.flat_map(one).map(decode)
        super().__init__(self._impl._element_structure)

    def _build(self, builder: PipelineBuilder) -> dict[str, Any]:
        return self._impl._build(builder)
