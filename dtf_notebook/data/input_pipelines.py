"""One-call input pipelines of ``tf.data.experimental``: ``make_csv_dataset``, ``make_batched_features_dataset`` and
``parse_example_dataset``, built from the core transformations exactly as TF builds them.

``make_csv_dataset`` does what TF does while building the graph, on the client: it globs the files, reads the
column names from the first file's header and infers each column's dtype from the first rows (int32, int64, float32,
float64 or string, the narrowest that fits every value seen). The pipeline itself then reads the files where its
iterator runs: file names (shuffled), ``CsvDataset`` per file interleaved ``num_parallel_reads`` at a time, shuffled
and repeated ``num_epochs`` times, batched (full batches only when it repeats forever), turned into a dict of
columns (and the label), prefetched.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> from dtf_notebook.lib.io import file_io
    >>> file_io.write_string_to_file("memory://csv_doc/a.csv", "x,name,y\\n1,a,0.5\\n2,b,1.5\\n3,c,2.5\\n")
    >>> with tf.Graph().as_default():
    ...     ds = make_csv_dataset("memory://csv_doc/*.csv", 2, label_name="y", num_epochs=1, shuffle=False)
    ...     features, label = ds.make_one_shot_iterator().get_next()
    ...     with tf.Session() as sess:
    ...         f, l = sess.run([features, label])
    >>> dict(ds.output_types[0]), f["name"].tolist(), l.tolist()
    ({'x': tf.int32, 'name': tf.string}, [b'a', b'b'], [0.5, 1.5])
    >>> file_io.rmtree("memory://csv_doc")
"""

from __future__ import annotations

import collections
import csv
import gzip
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from dtf_notebook.data.dataset_ops import AUTOTUNE, DatasetV1
from dtf_notebook.data.readers import CsvDataset, TFRecordDataset
from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.lib.io.gfile import GFile
from dtf_notebook.lib.io.matching_paths import glob
from dtf_notebook.ops.io.parsing_config import VarLenFeature
from dtf_notebook.ops.io.parsing_ops import parse_example
from dtf_notebook.ops.io.reader_ops import ReaderBase
from dtf_notebook.ops.op_helpers import constant_value

__all__ = ["make_csv_dataset", "make_batched_features_dataset", "parse_example_dataset"]

_CSV_TYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64, dtypes.string)


# ---- what TF reads from the files while building the graph --------------------------------------------------------
def _file_names(file_pattern: Any) -> list[str]:
    """The files matching a glob or a list of globs, sorted (TF's ``_get_file_names`` without shuffling)."""
    if isinstance(file_pattern, list):
        if not file_pattern:
            raise ValueError("Argument `file_pattern` should not be empty.")
        names = [name for entry in file_pattern for name in glob(entry)]
    else:
        names = list(glob(file_pattern))
    if not names:
        raise ValueError(f"No files match `file_pattern` {file_pattern}.")
    return sorted(names)


def _text_lines(path: str, compression: str, encoding: str) -> Iterator[str]:
    raw = GFile(path, "rb")
    stream = gzip.GzipFile(fileobj=raw) if compression == "GZIP" else raw
    try:
        while line := stream.readline():
            yield line.decode(encoding)
    finally:
        raw.close()


def _probe_compression(compression_type: Any) -> str:
    if compression_type is None:
        return ""
    value = constant_value(compression_type) if isinstance(compression_type, Tensor) else compression_type
    if value is None:
        raise ValueError(
            f"Received unknown `compression_type` {compression_type}. Expected: GZIP, ZLIB or  (empty string)."
        )
    if isinstance(value, np.ndarray):
        value = value.reshape(()).item()
    if isinstance(value, bytes):
        value = value.decode()
    if value == "ZLIB":
        raise ValueError(f"`compression_type` {compression_type} is not supported for probing columns.")
    if value not in ("", "GZIP"):
        raise ValueError(
            f"Received unknown `compression_type` {compression_type}. Expected: GZIP, ZLIB or  (empty string)."
        )
    return value


def _reader(path: str, delim: str, use_quote_delim: bool, compression: str, encoding: str) -> Any:
    quoting = csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE
    return csv.reader(_text_lines(path, compression, encoding), delimiter=delim, quoting=quoting)


def _infer_column_names(names: list[str], delim: str, use_quote_delim: bool, compression: str, enc: str) -> list[str]:
    def header(path: str) -> list[str]:
        try:
            return next(_reader(path, delim, use_quote_delim, compression, enc))
        except StopIteration:
            raise ValueError(f"Failed when reading the header line of {path}. Is it an empty file?") from None

    columns = header(names[0])
    for path in names[1:]:
        if header(path) != columns:
            raise ValueError(
                "All input CSV files should have the same column names in the header row. File "
                f"{path} has different column names."
            )
    return columns


def _fits_int32(text: str) -> bool:
    try:
        return bool(np.int32(text) == np.int64(text))
    except (ValueError, OverflowError):
        return False


def _fits_int64(text: str) -> bool:
    try:
        np.int64(text)
        return True
    except (ValueError, OverflowError):
        return False


def _fits_float(text: str, np_type: Any) -> bool:
    try:
        with np.errstate(over="ignore"):  # too large for the type: inf, which is the answer sought
            return bool(np_type(text) < np.inf)
    except ValueError:
        return False


_TYPE_CHECKS: list[tuple[dtypes.DType, Callable[[str], bool]]] = [
    (dtypes.int32, _fits_int32),
    (dtypes.int64, _fits_int64),
    (dtypes.float32, lambda text: _fits_float(text, np.float32)),
    (dtypes.float64, lambda text: _fits_float(text, np.float64)),
    (dtypes.string, lambda text: True),
]


def _infer_type(text: str, na_value: str, previous: dtypes.DType | None) -> dtypes.DType | None:
    """The narrowest type that holds ``text`` and every value the column had before (TF's rule)."""
    if text in ("", na_value):
        return previous
    allowed = [t for t, _ in _TYPE_CHECKS]
    for i, (dtype, fits) in enumerate(_TYPE_CHECKS):
        if fits(text) and (previous is None or previous in allowed[: i + 1]):
            return dtype
    return dtypes.string


def _infer_column_defaults(
    names: list[str],
    num_cols: int,
    options: dict[str, Any],
    header: bool,
    rows: int | None,
    select: Sequence[int] | None,
) -> list[Tensor]:
    columns = list(range(num_cols)) if select is None else list(select)
    inferred: list[dtypes.DType | None] = [None] * len(columns)
    seen = 0
    for path in names:
        reader = _reader(path, options["delim"], options["quote"], options["compression"], options["encoding"])
        row_num = 1
        if header:
            next(reader, None)
            row_num += 1
        for record in reader:
            if rows is not None and seen >= rows:
                break
            if len(record) != num_cols:
                raise ValueError(
                    f"Problem inferring types: CSV row {row_num} has {len(record)} number of fields. Expected: "
                    f"{num_cols}."
                )
            for j, c in enumerate(columns):
                inferred[j] = _infer_type(record[c], options["na_value"], inferred[j])
            row_num += 1
            seen += 1
        if rows is not None and seen >= rows:
            break
    types = [t or dtypes.string for t in inferred]
    return [convert_to_tensor([0 if t is not dtypes.string else ""], dtype=t) for t in types]


def _repeated(values: Sequence[Any]) -> set[Any]:
    ordered = sorted(values)
    return {a for a, b in zip(ordered[:-1], ordered[1:]) if a == b}


def _sorted_column_indices(select_columns: Sequence[Any], column_names: list[str]) -> list[int]:
    index = {n: i for i, n in enumerate(column_names)}
    out = []
    for v in select_columns:
        if isinstance(v, int):
            if v < 0 or v >= len(column_names):
                raise ValueError(
                    f"Column index {v} specified in `select_columns` should be > 0  and <= {len(column_names)}, "
                    "which is the number of columns."
                )
            out.append(v)
        elif v not in index:
            raise ValueError(f"Column {v} specified in `select_columns` must be of one of the columns: {index.keys()}.")
        else:
            out.append(index[v])
    if len(set(out)) != len(select_columns):
        raise ValueError(f"The `select_columns` argument contains duplicate columns: {_repeated(out)}.")
    return sorted(set(out))


def _shuffle_and_repeat(dataset: DatasetV1, num_epochs: Any, shuffle: bool, buffer_size: int, seed: Any) -> DatasetV1:
    if shuffle:
        dataset = dataset.shuffle(buffer_size, seed)
    if num_epochs != 1:
        dataset = dataset.repeat(num_epochs)
    return dataset


def _interleave_files(dataset: DatasetV1, make: Callable[[Any], DatasetV1], num_readers: Any) -> DatasetV1:
    """One dataset per file name, ``num_readers`` files read at a time, one record from each in turn."""
    if num_readers == AUTOTUNE:
        return dataset.interleave(make, num_parallel_calls=AUTOTUNE)
    return dataset.interleave(make, cycle_length=num_readers, block_length=1)


# ---- the pipelines -------------------------------------------------------------------------------------------------
def make_csv_dataset(
    file_pattern: Any,
    batch_size: int,
    column_names: Sequence[str] | None = None,
    column_defaults: Sequence[Any] | None = None,
    label_name: str | None = None,
    select_columns: Sequence[Any] | None = None,
    field_delim: str = ",",
    use_quote_delim: bool = True,
    na_value: str = "",
    header: bool = True,
    num_epochs: int | None = None,
    shuffle: bool = True,
    shuffle_buffer_size: int = 10000,
    shuffle_seed: int | None = None,
    prefetch_buffer_size: Any = None,
    num_parallel_reads: Any = None,
    sloppy: bool = False,
    num_rows_for_inference: int | None = 100,
    compression_type: Any = None,
    ignore_errors: bool = False,
    encoding: str = "utf-8",
) -> DatasetV1:
    """Batches of CSV records as ``({column: batch}, label_batch)`` (or the dict alone without ``label_name``).

    Column names come from the header of the files (``header=True``) unless given, defaults (and so dtypes) are
    inferred from the first ``num_rows_for_inference`` rows unless given; ``select_columns`` (names or indices)
    keeps some columns. ``num_epochs=None`` repeats forever and keeps only full batches (a static batch size).
    ``sloppy`` allows any order, which this runtime does not use (its order is the deterministic one).

    Raises:
        ValueError: no file matches, the header cannot be read or differs between files, column names repeat, a
            row has another number of fields while inferring types, ``label_name`` or a selected column is not a
            column, or ``select_columns`` and ``column_defaults`` differ in length (TF's messages).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> from dtf_notebook.lib.io import file_io
        >>> file_io.write_string_to_file("memory://csv_doc2/a.csv", "a,b\\n1,x\\n2,y\\n")
        >>> with tf.Graph().as_default():
        ...     make_csv_dataset("memory://csv_doc2/a.csv", 4, select_columns=["b"]).output_shapes
        OrderedDict([('b', TensorShape([4]))])
        >>> file_io.rmtree("memory://csv_doc2")
    """
    if num_parallel_reads is None:
        num_parallel_reads = 1
    if prefetch_buffer_size is None:
        prefetch_buffer_size = AUTOTUNE
    names = _file_names(file_pattern)
    dataset = DatasetV1.from_tensor_slices(names)
    if shuffle:
        dataset = dataset.shuffle(len(names), shuffle_seed)

    options: dict[str, Any] = {
        "delim": field_delim,
        "quote": use_quote_delim,
        "na_value": na_value,
        "encoding": encoding,
        "compression": "",
    }
    if column_names is None or column_defaults is None:
        options["compression"] = _probe_compression(compression_type)
    if column_names is None:
        if not header:
            raise ValueError("Expected `column_names` or `header` arguments. Neither is provided.")
        column_names = _infer_column_names(names, field_delim, use_quote_delim, options["compression"], encoding)
    column_names = list(column_names)
    if len(column_names) != len(set(column_names)):
        raise ValueError(
            f"Either `column_names` argument or CSV header row contains duplicate column names: "
            f"{_repeated(column_names)}."
        )
    select = None if select_columns is None else _sorted_column_indices(select_columns, column_names)
    if column_defaults is not None:
        defaults = [convert_to_tensor([], dtype=d) if d in _CSV_TYPES else d for d in column_defaults]
    else:
        defaults = _infer_column_defaults(names, len(column_names), options, header, num_rows_for_inference, select)
    if select is not None and len(defaults) != len(select):
        raise ValueError(
            "If specified, `column_defaults` and `select_columns` must have the same length: `column_defaults` has "
            f"length {len(defaults)}, `select_columns` has length {len(select)}."
        )
    if select is not None and len(column_names) > len(select):
        column_names = [column_names[i] for i in select]
    if label_name is not None and label_name not in column_names:
        raise ValueError(f"`label_name` provided must be one of the columns: {column_names}. Received: {label_name}.")

    def file_to_dataset(filename: Any) -> DatasetV1:
        records = CsvDataset(
            filename,
            record_defaults=defaults,
            field_delim=field_delim,
            use_quote_delim=use_quote_delim,
            na_value=na_value,
            select_cols=select,
            header=header,
            compression_type=compression_type,
        )
        return records.ignore_errors() if ignore_errors else records

    def to_features(*columns: Any) -> Any:
        features = collections.OrderedDict(zip(column_names, columns))
        if label_name is not None:
            label = features.pop(label_name)
            return features, label
        return features

    dataset = _interleave_files(dataset, file_to_dataset, num_parallel_reads)
    dataset = _shuffle_and_repeat(dataset, num_epochs, shuffle, shuffle_buffer_size, shuffle_seed)
    # Batch before the map, as TF does: the map then runs once per batch.
    dataset = dataset.batch(batch_size, drop_remainder=num_epochs is None)
    return dataset.map(to_features).prefetch(prefetch_buffer_size)


def parse_example_dataset(
    features: Mapping[str, Any], num_parallel_calls: Any = 1, deterministic: Any = None
) -> Callable[[DatasetV1], DatasetV1]:
    """For ``Dataset.apply``: batches of serialized ``Example`` records parsed into ``{key: Tensor or SparseTensor}``
    (``tf.parse_example`` on each batch).

    Raises:
        ValueError: ``features`` is None.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     ds = DatasetV1.from_tensors([b""]).apply(parse_example_dataset({"k": tf.VarLenFeature(tf.int64)}))
        ...     ds.output_classes["k"].__name__
        'SparseTensor'
    """
    if features is None:
        raise ValueError("Argument `features` is required, but not specified.")

    def parse(records: Tensor) -> dict[str, Any]:
        parsed = parse_example(records, features)
        for key, feature in features.items():
            if isinstance(feature, VarLenFeature):  # TF's dataset knows the batch size of their dense shape too
                shape = records.shape.concatenate([None])
                known = parsed[key]._dense_shape_default
                parsed[key]._dense_shape_default = shape if known is None else shape.merge_with(known)
        return parsed

    return lambda dataset: dataset.map(parse, num_parallel_calls)


def make_batched_features_dataset(
    file_pattern: Any,
    batch_size: int,
    features: Mapping[str, Any],
    reader: Callable[..., DatasetV1] | None = None,
    label_key: str | None = None,
    reader_args: Sequence[Any] | None = None,
    num_epochs: int | None = None,
    shuffle: bool = True,
    shuffle_buffer_size: int = 10000,
    shuffle_seed: int | None = None,
    prefetch_buffer_size: Any = None,
    reader_num_threads: Any = None,
    parser_num_threads: Any = None,
    sloppy_ordering: bool = False,
    drop_final_batch: bool = False,
) -> DatasetV1:
    """Batches of ``Example`` records read by ``reader`` (``TFRecordDataset``) from the files matching
    ``file_pattern`` (found where the iterator runs), parsed with ``features`` into
    ``{key: Tensor or SparseTensor}`` (and the ``label_key`` feature apart).

    Raises:
        TypeError: ``reader`` is a queue-based ``tf.ReaderBase`` class (TF's message).
        ValueError: ``label_key`` is not a key of ``features``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     features = {"x": tf.FixedLenFeature([2], tf.float32), "tags": tf.VarLenFeature(tf.string)}
        ...     ds = make_batched_features_dataset("/data/*.tfrecord", 32, features, num_epochs=1)
        ...     ds.output_shapes["x"], ds.output_classes["tags"].__name__
        (TensorShape([None, 2]), 'SparseTensor')
    """
    if reader is None:
        reader = TFRecordDataset
    if isinstance(reader, type) and issubclass(reader, ReaderBase):
        raise TypeError(
            "The `reader` argument must return a `Dataset` object. `tf.ReaderBase` subclasses are not supported. For "
            "example, pass `tf.data.TFRecordDataset` instead of `tf.TFRecordReader`."
        )
    args = list(reader_args or ())
    dataset = DatasetV1.list_files(file_pattern, shuffle=shuffle, seed=shuffle_seed)
    dataset = _interleave_files(dataset, lambda filename: reader(filename, *args), reader_num_threads or 1)
    if dataset.output_types == (dtypes.string, dtypes.string):
        dataset = dataset.map(lambda _, value: value)
    dataset = _shuffle_and_repeat(dataset, num_epochs, shuffle, shuffle_buffer_size, shuffle_seed)
    dataset = dataset.batch(batch_size, drop_remainder=drop_final_batch or num_epochs is None)
    dataset = dataset.apply(parse_example_dataset(features, parser_num_threads or 2))
    if label_key:
        if label_key not in features:
            raise ValueError(
                f"The `label_key` provided ({label_key}) must be one of the `features` keys: {features.keys()}."
            )
        dataset = dataset.map(lambda x: (x, x.pop(label_key)))
    return dataset.prefetch(AUTOTUNE if prefetch_buffer_size is None else prefetch_buffer_size)
