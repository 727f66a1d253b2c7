"""Parsing and writing event-file messages: one ``Event`` holding a 10,000-value histogram.

Measures ``Event.FromString`` and ``SerializeToString`` with this package's protobuf classes
(``dtf_notebook.protos.summary_pb``, on the installed protobuf runtime), with TF's own generated classes when
``tensorflow`` is installed (the same runtime, as a reference), and with the hand-written pure-Python codec that
``dtf_notebook.summary`` used before issue 15 when it is still importable (``dtf_notebook.summary.proto``; it is
gone from the package since, so that row is only printed when run on an older checkout).

Run: ``python benchmarks/bench_protos.py``

Example output (figures from ``docs/benchmarks.md``):
    event with a 10,000-value histogram: 160,053 bytes
    protobuf (dtf_notebook.protos)   parse   ... us   serialize   ... us
"""

from __future__ import annotations

import importlib
import sys

import numpy as np
from _common import timed


def _histogram_event(event_cls: type, values: np.ndarray) -> object:
    event = event_cls(wall_time=1.5, step=7)
    histo = event.summary.value.add(tag="weights").histo
    histo.min, histo.max, histo.num = float(values.min()), float(values.max()), float(values.size)
    histo.sum, histo.sum_squares = float(values.sum()), float((values**2).sum())
    histo.bucket_limit.extend(np.sort(values).tolist())
    histo.bucket.extend(np.ones(values.size).tolist())
    return event


def _row(label: str, event_cls: type, data: bytes, values: np.ndarray) -> None:
    parse = timed(lambda: event_cls.FromString(data), repeats=50)
    event = _histogram_event(event_cls, values)
    write = timed(event.SerializeToString, repeats=50)
    print(f"{label:<34} parse {parse * 1e6:>10.1f} us   serialize {write * 1e6:>10.1f} us")


def main() -> None:
    from dtf_notebook.protos.summary_pb import Event

    values = np.random.default_rng(0).normal(size=10_000)
    data = _histogram_event(Event, values).SerializeToString()
    print(f"event with a 10,000-value histogram: {len(data):,} bytes")
    _row("protobuf (dtf_notebook.protos)", Event, data, values)
    try:
        from tensorflow.core.util import event_pb2
    except ImportError:
        print("tensorflow not installed: no reference row")
    else:
        _row("protobuf (TF's event_pb2)", event_pb2.Event, data, values)
    try:
        legacy = importlib.import_module("dtf_notebook.summary.messages")
        legacy_event = legacy.Event
        if legacy_event.__module__ == "dtf_notebook.summary.messages":
            _row("hand-written codec (before)", legacy_event, data, values)
    except (ImportError, AttributeError):
        pass
    sys.stdout.flush()


if __name__ == "__main__":
    main()
