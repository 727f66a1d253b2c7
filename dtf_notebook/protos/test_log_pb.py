"""The benchmark messages of TF's ``test_log.proto`` (``BenchmarkEntries`` & co.), as ``tf.test.Benchmark`` writes them.

The schema is TF's (file ``xla/tsl/protobuf/test_log.proto``, package ``tensorflow``, the same field numbers), so a
benchmark file written here is read by TF's tools and the other way round. ``MetricEntry``'s bounds are
``google.protobuf.DoubleValue`` wrappers, whose file goes into this package's pool first.

Example:
    >>> entries = BenchmarkEntries()
    >>> entry = entries.entry.add(name="MyBenchmark.benchmark_add", iters=10, wall_time=0.5)
    >>> entry.extras["device"].string_value = "cpu"
    >>> BenchmarkEntries.FromString(entries.SerializeToString()).entry[0].extras["device"].string_value
    'cpu'
"""

from __future__ import annotations

from google.protobuf import wrappers_pb2

from dtf_notebook.protos import POOL, message_class
from dtf_notebook.protos.spec import add_spec_file

__all__ = ["BenchmarkEntries", "BenchmarkEntry", "EntryValue", "MetricEntry"]

_WRAPPERS = "google/protobuf/wrappers.proto"
try:
    POOL.FindFileByName(_WRAPPERS)
except KeyError:
    POOL.AddSerializedFile(wrappers_pb2.DESCRIPTOR.serialized_pb)

add_spec_file(
    "xla/tsl/protobuf/test_log.proto",
    [_WRAPPERS],
    [
        ("EntryValue", [("double_value", 1, "double", "kind"), ("string_value", 2, "string", "kind")]),
        (
            "MetricEntry",
            [
                ("name", 1, "string"),
                ("value", 2, "double"),
                ("min_value", 3, "google.protobuf.DoubleValue"),
                ("max_value", 4, "google.protobuf.DoubleValue"),
            ],
        ),
        (
            "BenchmarkEntry",
            [
                ("name", 1, "string"),
                ("iters", 2, "int64"),
                ("cpu_time", 3, "double"),
                ("wall_time", 4, "double"),
                ("throughput", 5, "double"),
                ("extras", 6, "map<string,tensorflow.EntryValue>"),
                ("metrics", 7, "repeated tensorflow.MetricEntry"),
            ],
        ),
        ("BenchmarkEntries", [("entry", 1, "repeated tensorflow.BenchmarkEntry")]),
    ],
)

EntryValue = message_class("tensorflow.EntryValue", __name__)
MetricEntry = message_class("tensorflow.MetricEntry", __name__)
BenchmarkEntry = message_class("tensorflow.BenchmarkEntry", __name__)
BenchmarkEntries = message_class("tensorflow.BenchmarkEntries", __name__)
