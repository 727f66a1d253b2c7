"""``tf.test.Benchmark``: benchmark classes, ``report_benchmark``, ``run_op_benchmark`` and running them by regex.

Every subclass of :class:`Benchmark` is registered when it is defined; ``tf.test.main()`` runs the tests of a file,
or, given ``--benchmark_filter=REGEX`` (TF 2's flag; TF1's ``--benchmarks=REGEX`` too), the methods named
``benchmark*`` of the registered classes whose ``module.Class.method`` name matches (``all``: every one) instead.
A report is a ``BenchmarkEntries`` protobuf (TF's ``test_log.proto``): printed in text format, or, when the
environment names a file prefix in ``TEST_REPORT_FILE_PREFIX``, written to ``<prefix><Class.method>`` (``/`` in the
name becoming ``__``), as TF does.

Example:
    >>> import io, contextlib
    >>> class AddBenchmark(Benchmark):
    ...     def benchmark_add(self):
    ...         self.report_benchmark(iters=3, wall_time=0.25, extras={"device": "cpu"})
    >>> out = io.StringIO()
    >>> with contextlib.redirect_stdout(out):
    ...     run_benchmarks("AddBenchmark")
    >>> print(out.getvalue().split("\\n")[1])
      name: "AddBenchmark.benchmark_add"
"""

from __future__ import annotations

import json
import logging
import math
import numbers
import os
import re
import sys
import time
from collections.abc import Sequence
from typing import Any

__all__ = ["Benchmark", "benchmark_config", "run_benchmarks", "benchmarks_main", "TEST_REPORTER_TEST_ENV"]

#: The environment variable naming the file prefix benchmark reports are written to (TF's).
TEST_REPORTER_TEST_ENV = "TEST_REPORT_FILE_PREFIX"

_log = logging.getLogger(__name__)
_REGISTRY: set[type] = set()


class _BenchmarkRegistrar(type):
    """Registers every concrete benchmark class when it is defined."""

    def __new__(mcs, name: str, bases: tuple, attrs: dict[str, Any]) -> type:  # noqa: N804 - a metaclass
        cls = super().__new__(mcs, name, bases, attrs)
        if not cls.is_abstract():
            _REGISTRY.add(cls)
        return cls


def _report(
    name: str,
    iters: int | None = None,
    cpu_time: float | None = None,
    wall_time: float | None = None,
    throughput: float | None = None,
    extras: dict[str, Any] | None = None,
    metrics: list[dict[str, Any]] | None = None,
) -> None:
    """One ``BenchmarkEntries`` report, printed or written to the report file (TF's ``_global_report_benchmark``)."""
    from dtf_notebook.lib.io import file_io
    from dtf_notebook.lib.io.gfile import GFile
    from dtf_notebook.protos.test_log_pb import BenchmarkEntries

    _log.info(
        "Benchmark [%s] iters: %d, wall_time: %g, cpu_time: %g,throughput: %g, extras: %s, metrics: %s",
        name,
        -1 if iters is None else iters,
        -1 if wall_time is None else wall_time,
        -1 if cpu_time is None else cpu_time,
        -1 if throughput is None else throughput,
        str(extras) if extras else "None",
        str(metrics) if metrics else "None",
    )
    entries = BenchmarkEntries()
    entry = entries.entry.add(name=name)
    for field, value in (
        ("iters", iters),
        ("cpu_time", cpu_time),
        ("wall_time", wall_time),
        ("throughput", throughput),
    ):
        if value is not None:
            setattr(entry, field, value)
    if extras is not None:
        if not isinstance(extras, dict):
            raise TypeError("extras must be a dict")
        for key, value in extras.items():
            if isinstance(value, numbers.Number):
                entry.extras[key].double_value = value
            else:
                entry.extras[key].string_value = str(value)
    if metrics is not None:
        if not isinstance(metrics, list):
            raise TypeError("metrics must be a list")
        for metric in metrics:
            if "name" not in metric:
                raise TypeError("metric must has a 'name' field")
            if "value" not in metric:
                raise TypeError("metric must has a 'value' field")
            added = entry.metrics.add(name=metric["name"], value=metric["value"])
            if "min_value" in metric:
                added.min_value.value = metric["min_value"]
            if "max_value" in metric:
                added.max_value.value = metric["max_value"]
    prefix = os.environ.get(TEST_REPORTER_TEST_ENV)
    if prefix is None:
        print(str(entries))
        return
    path = prefix + name.replace("/", "__")
    if file_io.exists(path):
        raise OSError(f"File already exists: {path}")
    with GFile(path, "wb") as out:
        out.write(entries.SerializeToString())


class Benchmark(metaclass=_BenchmarkRegistrar):
    """Base class of benchmarks (``tf.test.Benchmark``): subclasses are registered, their ``benchmark*`` methods
    run by ``tf.test.main()`` with ``--benchmark_filter``, and report with :meth:`report_benchmark` or
    :meth:`run_op_benchmark`."""

    @classmethod
    def is_abstract(cls) -> bool:
        """Whether this is the base class itself (not registered)."""
        return len(cls.mro()) <= 2

    def _get_name(self, overwrite_name: str | None = None) -> str:
        """``Class.method`` of the outermost method of a benchmark on the stack (or ``Class.overwrite_name``)."""
        frames = []
        frame = sys._getframe(1)
        while frame is not None:
            frames.append(frame)
            frame = frame.f_back
        for frame in reversed(frames):
            owner = frame.f_locals.get("self")
            if isinstance(owner, Benchmark):
                return f"{type(owner).__name__}.{overwrite_name or frame.f_code.co_name}"
        raise ValueError("Unable to determine calling Benchmark class.")

    def report_benchmark(
        self,
        iters: int | None = None,
        cpu_time: float | None = None,
        wall_time: float | None = None,
        throughput: float | None = None,
        extras: dict[str, Any] | None = None,
        name: str | None = None,
        metrics: list[dict[str, Any]] | None = None,
    ) -> None:
        """Reports one benchmark entry named ``Class.method`` (or ``Class.name``).

        Args:
            iters: Iterations run.
            cpu_time, wall_time: Median or mean times in seconds.
            throughput: MB/s.
            extras: More values: numbers are kept as doubles, anything else as its string.
            name: The method part of the name, instead of the calling method's.
            metrics: Dicts with ``name`` and ``value`` (and optional ``min_value``/``max_value``).

        Raises:
            TypeError: ``extras`` is not a dict, ``metrics`` not a list, or a metric lacks ``name``/``value``.
            OSError: the report file exists already.
        """
        _report(self._get_name(name), iters, cpu_time, wall_time, throughput, extras, metrics)

    def run_op_benchmark(
        self,
        sess: Any,
        op_or_tensor: Any,
        feed_dict: Any = None,
        burn_iters: int = 2,
        min_iters: int = 10,
        store_trace: bool = False,
        store_memory_usage: bool = True,
        name: str | None = None,
        extras: dict[str, Any] | None = None,
        mbs: float = 0,
    ) -> dict[str, Any]:
        """Runs ``op_or_tensor`` ``burn_iters`` times, then times ``min_iters`` runs and reports their median wall
        time (and ``mbs`` / median as throughput).

        With ``store_trace`` or ``store_memory_usage``, one more run is traced (``FULL_TRACE``):
        ``store_trace`` returns (without reporting it) its Chrome trace as ``full_trace_chrome_format``;
        ``store_memory_usage`` reports the largest allocation per allocator that the trace records as
        ``allocator_maximum_num_bytes_<allocator>`` (this runtime's traces record none, so none is reported).

        Returns:
            What was reported (``iters``, ``wall_time``, ``extras``, ``name``, ``throughput``), with
            ``wall_time_mean`` and ``wall_time_stdev`` (and the trace) added to ``extras``.
        """
        for _ in range(burn_iters):
            sess.run(op_or_tensor, feed_dict=feed_dict)
        deltas = []
        for _ in range(min_iters):
            start = time.time()
            sess.run(op_or_tensor, feed_dict=feed_dict)
            deltas.append(time.time() - start)
        extras = extras if extras is not None else {}
        unreported: dict[str, Any] = {}
        if store_trace or store_memory_usage:
            step_stats = _traced_step_stats(sess, op_or_tensor, feed_dict)
            if store_trace:
                unreported["full_trace_chrome_format"] = chrome_trace(step_stats)
            if store_memory_usage:
                for allocator, num_bytes in _allocator_maximums(step_stats).items():
                    extras[f"allocator_maximum_num_bytes_{allocator}"] = num_bytes
        median = _median(deltas)
        values = {
            "iters": min_iters,
            "wall_time": median,
            "extras": extras,
            "name": name,
            "throughput": mbs / median if median else 0.0,
        }
        self.report_benchmark(**values)
        mean, stdev = _mean_and_stdev(deltas)
        unreported["wall_time_mean"] = mean
        unreported["wall_time_stdev"] = stdev
        values["extras"].update(unreported)
        return values

    def evaluate(self, tensors: Any) -> Any:
        """The values of ``tensors`` in the default session.

        Raises:
            ValueError: there is no default session.
        """
        from dtf_notebook.framework.default_session import get_default_session

        sess = get_default_session()
        if sess is None:
            raise ValueError("Benchmark.evaluate needs a default session: run it inside `with session.as_default():`")
        return sess.run(tensors)


def _median(x: Sequence[float]) -> float:
    if not x:
        return -1
    s = sorted(x)
    return (s[len(s) // 2] + s[(len(s) - 1) // 2]) / 2.0


def _mean_and_stdev(x: Sequence[float]) -> tuple[float, float]:
    if not x:
        return -1, -1
    mean = sum(x) / len(x)
    if len(x) == 1:
        return mean, -1
    return mean, math.sqrt(sum((e - mean) ** 2 for e in x) / (len(x) - 1))


def _traced_step_stats(sess: Any, op_or_tensor: Any, feed_dict: Any) -> Any:
    from dtf_notebook.protos.config_pb import RunMetadata, RunOptions

    metadata = RunMetadata()
    sess.run(
        op_or_tensor, feed_dict=feed_dict, options=RunOptions(trace_level=RunOptions.FULL_TRACE), run_metadata=metadata
    )
    return metadata.step_stats


def _allocator_maximums(step_stats: Any) -> dict[str, int]:
    """The largest bytes in use per allocator that the step's stats record (node memory peaks, output allocations)."""
    out: dict[str, int] = {}
    for device in step_stats.dev_stats:
        for node in device.node_stats:
            for memory in node.memory:
                out[memory.allocator_name] = max(out.get(memory.allocator_name, 0), memory.peak_bytes)
            for output in node.output:
                described = output.tensor_description.allocation_description
                if described.allocator_name:
                    name = described.allocator_name
                    out[name] = max(out.get(name, 0), described.allocated_bytes)
    return out


def chrome_trace(step_stats: Any) -> str:
    """A traced step as Chrome's trace-event JSON (``chrome://tracing``): one process per device, one complete
    event per op run.

    Example:
        >>> from dtf_notebook.protos.config_pb import StepStats
        >>> stats = StepStats()
        >>> node = stats.dev_stats.add(device="/cpu:0").node_stats.add(node_name="a", all_start_micros=5)
        >>> node.timeline_label = "a = Add(x, y)"
        >>> [e["ph"] for e in json.loads(chrome_trace(stats))["traceEvents"]]
        ['M', 'X']
    """
    events: list[dict[str, Any]] = []
    for pid, device in enumerate(step_stats.dev_stats):
        events.append({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": f"{device.device} Compute"}})
        for node in device.node_stats:
            label = node.timeline_label
            op = label.split(" = ", 1)[1].split("(", 1)[0] if " = " in label else node.node_name
            events.append(
                {
                    "ph": "X",
                    "cat": "Op",
                    "name": op,
                    "pid": pid,
                    "tid": node.thread_id,
                    "ts": node.all_start_micros,
                    "dur": node.all_end_rel_micros,
                    "args": {"name": node.node_name, "op": op},
                }
            )
    return json.dumps({"traceEvents": events}, indent=4)


def benchmark_config() -> Any:
    """The ``tf.ConfigProto`` TF's benchmarks run with (TF's turns off its graph rewriter's dependency optimizer;
    this runtime rewrites no graph, so it is the default config).

    Example:
        >>> type(benchmark_config()).__name__
        'ConfigProto'
    """
    from dtf_notebook.protos.config_pb import ConfigProto

    return ConfigProto()


def run_benchmarks(regex: str) -> None:
    """Runs the ``benchmark*`` methods of registered classes whose ``module.Class.method`` matches ``regex``
    (``"all"``: every one), one instance per class.

    Raises:
        ValueError: no benchmark matches.

    Example:
        >>> run_benchmarks("no such benchmark")
        Traceback (most recent call last):
        ...
        ValueError: No benchmarks matched the pattern: 'no such benchmark'
    """
    selected = []
    for cls in sorted(_REGISTRY, key=lambda c: f"{c.__module__}.{c.__qualname__}"):
        instance = None
        for attr in sorted(dir(cls)):
            if not attr.startswith("benchmark") or not callable(getattr(cls, attr)):
                continue
            full_name = f"{cls.__module__}.{cls.__name__}.{attr}"
            if regex == "all" or re.search(regex, full_name):
                selected.append(full_name)
                instance = instance or cls()
                getattr(instance, attr)()
    if not selected:
        raise ValueError(f"No benchmarks matched the pattern: '{regex}'")


_FLAGS = ("--benchmark_filter=", "-benchmark_filter=", "--benchmarks=", "-benchmarks=")


def benchmarks_main(true_main: Any, argv: list[str] | None = None) -> Any:
    """Runs the benchmarks ``argv`` asks for (``--benchmark_filter=REGEX`` or TF1's ``--benchmarks=REGEX``,
    removed from ``argv``), else ``true_main()``.

    Example:
        >>> benchmarks_main(lambda: "tests ran", ["prog"])
        'tests ran'
    """
    argv = sys.argv if argv is None else argv
    found = [arg for arg in argv if arg.startswith(_FLAGS)]
    if not found:
        return true_main()
    from absl import app

    argv.remove(found[0])
    regex = found[0].split("=", 1)[1]
    return app.run(lambda _: run_benchmarks(regex), argv=argv)
