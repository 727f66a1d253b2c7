"""What the input-pipeline tests share: real TensorFlow as the oracle, input files they write, and draining a
pipeline until its ``OutOfRangeError``."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.protos.example_pb import BytesList, Example, Feature, Features, FloatList, Int64List

#: A session config whose blocking ops give up after a few seconds, so a wrong test fails instead of hanging.
TIMEOUT_MS = 20000


def real():
    """Real TensorFlow's compat.v1 (the test is skipped when it is not installed)."""
    return pytest.importorskip("tensorflow").compat.v1


def session(lib: Any, **kwargs: Any) -> Any:
    return lib.Session(config=lib.ConfigProto(operation_timeout_in_ms=TIMEOUT_MS), **kwargs)


def both(fn: Callable[[Any], Any]) -> tuple[Any, Any]:
    """``fn(lib)`` in a fresh graph of each library: ``(ours, tensorflow's)``."""
    results = []
    for lib in (tf, real()):
        with lib.Graph().as_default():
            results.append(fn(lib))
    return results[0], results[1]


def plain(value: Any) -> Any:
    """A fetched value as plain, comparable Python data (SparseTensorValues as their three parts)."""
    if hasattr(value, "indices") and hasattr(value, "dense_shape"):
        return ("sparse", plain(value.indices), plain(value.values), plain(value.dense_shape))
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray | np.generic):
        return value.tolist()
    return value


def drain(lib: Any, fetches: Any, init_local: bool = True, limit: int = 1000) -> tuple[list[Any], Any]:
    """Runs ``fetches`` with the graph's queue runners until ``OutOfRangeError``: ``(results, the error)``."""
    results: list[Any] = []
    with session(lib) as sess:
        sess.run(lib.global_variables_initializer())
        if init_local:
            sess.run(lib.local_variables_initializer())
        coord = lib.train.Coordinator()
        threads = lib.train.start_queue_runners(sess, coord)
        error = None
        try:
            for _ in range(limit):
                results.append(plain(sess.run(fetches)))
        except lib.errors.OutOfRangeError as e:
            error = e
        finally:
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    return results, error


def error_message(error: Exception) -> str:
    """The first line of an op error's own message (TF's is prefixed by its graph-execution preamble)."""
    text = getattr(error, "message", str(error))
    lines = [line for line in text.splitlines() if line.strip()]
    for line in lines:
        if not line.startswith(("Graph execution error", "Detected at node", "Node: ", "  ", "\t", "Original stack")):
            return line
    return lines[0] if lines else ""


def example(**features: Any) -> bytes:
    """A serialized ``tf.train.Example``: floats, ints and bytes lists by the Python type of their values."""
    feature = {}
    for key, values in features.items():
        values = list(values)
        if values and isinstance(values[0], float):
            feature[key] = Feature(float_list=FloatList(value=values))
        elif values and isinstance(values[0], bytes):
            feature[key] = Feature(bytes_list=BytesList(value=values))
        elif values:
            feature[key] = Feature(int64_list=Int64List(value=values))
        else:
            feature[key] = Feature()
    return Example(features=Features(feature=feature)).SerializeToString()


def write_csv_files(directory: Any, files: int = 3, rows: int = 5, header: bool = True) -> list[str]:
    """CSV files ``part-<i>.csv`` with rows ``id,value,word`` (some values missing, some words quoted)."""
    names = []
    for f in range(files):
        path = os.path.join(str(directory), f"part-{f}.csv")
        lines = ["id,value,word"] if header else []
        for r in range(rows):
            i = f * rows + r
            value = "" if i % 4 == 3 else f"{i * 0.5}"
            word = f'"w,{i}"' if i % 3 == 0 else f"w{i}"
            lines.append(f"{i},{value},{word}")
        with open(path, "w") as out:
            out.write("\n".join(lines) + ("\n" if f % 2 == 0 else ""))  # odd files end without a newline
        names.append(path)
    return names


def write_tfrecord_files(
    directory: Any, files: int = 2, rows: int = 6, compression: str | None = None, pixels: int = 4
) -> list[str]:
    """TFRecord files of Examples with ``x`` (``pixels`` floats), ``label`` (int64) and ``tags`` (0-2 strings)."""
    names = []
    options = tf.python_io.TFRecordOptions(compression) if compression else None
    for f in range(files):
        path = os.path.join(str(directory), f"data-{f}.tfrecord")
        with tf.python_io.TFRecordWriter(path, options) as writer:
            for r in range(rows):
                i = f * rows + r
                writer.write(
                    example(
                        x=[float(i) + p / 10 for p in range(pixels)],
                        label=[i % 10],
                        tags=[f"t{i}".encode()] * (i % 3),
                    )
                )
        names.append(path)
    return names
