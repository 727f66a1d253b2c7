"""``TestCase.assertProtoEquals`` and ``tf.test.Benchmark``: a TF1 test file with proto assertions and benchmark
classes run as a program under real TF and here (the same test outcomes; with ``--benchmark_filter`` the same
benchmarks run and the same report files written, read back as TF's ``BenchmarkEntries``), then the failure
messages, which TF 2.21 cannot produce with the protobuf runtime installed here (its number normalization reads a
field attribute that protobuf 6 removed)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import unittest

import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.protos.test_log_pb import BenchmarkEntries
from dtf_notebook.testing.benchmark import chrome_trace

_PROGRAM = textwrap.dedent(
    """
    import importlib
    import os

    tf = importlib.import_module(os.environ["TF_MODULE"])
    tf.disable_eager_execution()


    class ProtoTest(tf.test.TestCase):
        def test_text_equals(self):
            self.assertProtoEquals("value: 0.1 value: 2", tf.train.FloatList(value=[0.1, 2.0]))

        def test_bytes_text_equals(self):
            self.assertProtoEquals(b"inter_op_parallelism_threads: 2", tf.ConfigProto(inter_op_parallelism_threads=2))

        def test_message_equals(self):
            feature = tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 2]))
            self.assertProtoEquals(tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 2])), feature)

        def test_nested_text_equals(self):
            summary = tf.Summary(value=[tf.Summary.Value(tag="loss", simple_value=0.5)])
            self.assertProtoEquals("value { tag: 'loss' simple_value: 0.5 }", summary)

        def test_graph_def_with_versions(self):
            self.assertProtoEqualsVersion("", tf.Graph().as_graph_def())

        def test_fails_other_types(self):
            self.assertProtoEquals(tf.train.Int64List(), tf.train.FloatList(value=[0.1]))

        def test_fails_not_a_proto(self):
            self.assertProtoEquals(3, tf.train.FloatList(value=[0.1]))


    class AddBenchmark(tf.test.Benchmark):
        def benchmark_report(self):
            self.report_benchmark(
                iters=5, wall_time=0.5, cpu_time=0.25, throughput=2.0, extras={"n": 3, "device": "cpu"},
                metrics=[{"name": "accuracy", "value": 0.9, "min_value": 0.5}],
            )

        def benchmark_named(self):
            self.report_benchmark(iters=1, name="custom/name")

        def benchmark_op(self):
            with tf.Graph().as_default(), tf.Session() as sess:
                x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
                result = self.run_op_benchmark(
                    sess, tf.matmul(x, x), min_iters=3, burn_iters=1, mbs=1, store_memory_usage=False
                )
                assert set(result) == {"iters", "wall_time", "extras", "name", "throughput"}, result
                assert {"wall_time_mean", "wall_time_stdev"} <= set(result["extras"]), result

        def not_a_benchmark(self):
            raise AssertionError("never run")


    class OtherBenchmark(tf.test.Benchmark):
        def benchmark_other(self):
            self.report_benchmark(iters=2)


    if __name__ == "__main__":
        tf.test.main()
    """
)


def _run(module: str, tmp_path, *args: str, reports: str | None = None) -> subprocess.CompletedProcess:
    script = tmp_path / f"proto_benchmark_{module.split('.')[0]}.py"
    script.write_text(_PROGRAM)
    env = dict(os.environ, TF_MODULE=module, TEST_TMPDIR=str(tmp_path), TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("TEST_REPORT_FILE_PREFIX", None)
    if reports is not None:
        env["TEST_REPORT_FILE_PREFIX"] = reports
    return subprocess.run(
        [sys.executable, str(script), *args], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path
    )


def _outcomes(result: subprocess.CompletedProcess) -> dict[str, str]:
    names = re.findall(r"^        def (test_\w+)\(", _PROGRAM, re.M)
    outcomes = dict.fromkeys(names, "ok")
    for kind, name in re.findall(r"^(FAIL|ERROR): (test_\w+) ", result.stderr, re.M):
        outcomes[name] = kind
    return outcomes


def _read_reports(directory) -> dict[str, BenchmarkEntries]:
    return {p.name: BenchmarkEntries.FromString(p.read_bytes()) for p in sorted(directory.iterdir())}


@pytest.mark.slow
@pytest.mark.tf_oracle
def test_a_tf1_test_file_with_protos_and_benchmarks_behaves_as_under_tf(tmp_path):
    pytest.importorskip("tensorflow")
    ours, theirs = _run("dtf_notebook.compat.v1", tmp_path), _run("tensorflow.compat.v1", tmp_path)
    assert _outcomes(ours) == _outcomes(theirs), (ours.stderr[-2000:], theirs.stderr[-2000:])
    assert {k for k, v in _outcomes(ours).items() if v != "ok"} == {"test_fails_other_types", "test_fails_not_a_proto"}
    assert "never run" not in ours.stderr and "AddBenchmark" not in ours.stdout  # tests only, no benchmark

    for module, name in (("dtf_notebook.compat.v1", "ours"), ("tensorflow.compat.v1", "tf")):
        (tmp_path / name).mkdir()
        result = _run(module, tmp_path, "--benchmark_filter=AddBenchmark", reports=str(tmp_path / name) + "/")
        assert result.returncode == 0, result.stderr[-3000:]
        assert "Ran " not in result.stderr  # the benchmarks instead of the tests
    ours_reports, tf_reports = _read_reports(tmp_path / "ours"), _read_reports(tmp_path / "tf")
    assert (
        sorted(ours_reports)
        == sorted(tf_reports)
        == [
            "AddBenchmark.benchmark_op",
            "AddBenchmark.benchmark_report",
            "AddBenchmark.custom__name",
        ]
    )
    for key in ("AddBenchmark.benchmark_report", "AddBenchmark.custom__name"):
        assert ours_reports[key] == tf_reports[key]
    op_ours, op_tf = (
        ours_reports["AddBenchmark.benchmark_op"].entry[0],
        tf_reports["AddBenchmark.benchmark_op"].entry[0],
    )
    assert (op_ours.name, op_ours.iters, sorted(op_ours.extras)) == (op_tf.name, op_tf.iters, sorted(op_tf.extras))
    assert op_ours.wall_time > 0 and op_ours.throughput == pytest.approx(1 / op_ours.wall_time)


def test_benchmarks_print_their_report_and_take_tf1s_flag(tmp_path):
    result = _run("dtf_notebook.compat.v1", tmp_path, "--benchmarks=OtherBenchmark")
    assert result.returncode == 0, result.stderr[-3000:]
    assert 'name: "OtherBenchmark.benchmark_other"' in result.stdout and "iters: 2" in result.stdout
    assert "AddBenchmark" not in result.stdout
    missing = _run("dtf_notebook.compat.v1", tmp_path, "--benchmark_filter=NoSuchBenchmark")
    assert missing.returncode != 0 and "No benchmarks matched the pattern: 'NoSuchBenchmark'" in missing.stderr


def test_a_report_file_is_never_overwritten(tmp_path, monkeypatch):
    class OnceBenchmark(tf.test.Benchmark):
        def benchmark_once(self):
            self.report_benchmark(iters=1)

    monkeypatch.setenv("TEST_REPORT_FILE_PREFIX", str(tmp_path) + "/")
    OnceBenchmark().benchmark_once()
    assert BenchmarkEntries.FromString((tmp_path / "OnceBenchmark.benchmark_once").read_bytes()).entry[0].iters == 1
    with pytest.raises(OSError, match="File already exists"):
        OnceBenchmark().benchmark_once()


def test_report_arguments_are_checked_and_a_traced_run_gives_a_chrome_trace(capsys):
    class CheckedBenchmark(tf.test.Benchmark):
        pass

    bench = CheckedBenchmark()
    with pytest.raises(TypeError, match="extras must be a dict"):
        bench.report_benchmark(extras=[1])
    with pytest.raises(TypeError, match="metric must has a 'value' field"):
        bench.report_benchmark(metrics=[{"name": "m"}])
    with pytest.raises(ValueError, match="Unable to determine calling Benchmark class"):
        bench._get_name()  # called from no benchmark method
    with tf.Graph().as_default(), tf.Session() as sess:
        result = bench.run_op_benchmark(sess, tf.constant(1.0) + 1.0, min_iters=2, store_trace=True)
    assert 'name: "CheckedBenchmark.test_report_arguments' not in capsys.readouterr().out
    trace = result["extras"]["full_trace_chrome_format"]
    assert '"ph": "X"' in trace and '"op": "Add"' in trace
    assert chrome_trace(tf.RunMetadata().step_stats) == '{\n    "traceEvents": []\n}'


class _Case(tf.test.TestCase):
    __test__ = False  # a helper, not tests to collect

    def runTest(self):  # noqa: N802 - unittest's name
        pass


def _failure(expected, actual, **kwargs) -> str:
    case = _Case()
    with pytest.raises(AssertionError) as raised:
        case.assertProtoEquals(expected, actual, **kwargs)
    return str(raised.value)


def test_a_difference_fails_with_the_diff_of_the_text_formats():
    message = _failure("value: 0.2 value: 3", tf.train.FloatList(value=[0.1, 3.0]))
    assert "- value: 0.2\n?          ^\n+ value: 0.1\n?          ^" in message
    message = _failure("value { tag: 'loss' }", tf.Summary(value=[tf.Summary.Value(tag="acc")]), msg="summaries")
    assert '-   tag: "loss"' in message and '+   tag: "acc"' in message and "summaries" in message


def test_relative_tolerance_and_number_normalization():
    case = _Case()
    close = tf.Summary(value=[tf.Summary.Value(tag="x", simple_value=1.0001)])
    case.assertProtoEquals("value { tag: 'x' simple_value: 1.0 }", close, relative_tolerance=1e-3)
    assert "simple_value" in _failure("value { tag: 'x' simple_value: 1.0 }", close, relative_tolerance=1e-6)
    # The messages compared are copies: normalizing numbers leaves the caller's alone.
    values = tf.train.FloatList(value=[0.123456789])
    _failure("value: 1.0", values)
    assert values.value[0] == pytest.approx(0.123456789, rel=1e-7)


def test_test_case_gains_the_proto_assertions_and_build_queries():
    assert issubclass(tf.test.TestCase, unittest.TestCase)
    assert tf.test.is_built_with_xla() is False
    assert isinstance(tf.test.is_built_with_rocm(), bool)
    assert type(tf.test.benchmark_config()).__name__ == "ConfigProto"
