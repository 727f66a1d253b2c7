"""``tf.data.experimental.make_csv_dataset``, ``make_batched_features_dataset`` and ``parse_example_dataset`` against
real TensorFlow 1: the same files give the same batches (column dicts, labels, dtypes inferred from the rows, static
shapes, SparseTensors for ``VarLenFeature``) and the same errors while the graph is built."""

from __future__ import annotations

import gzip

import pytest

import dtf_notebook.compat.v1 as dtf
from dtf_notebook.lib.io.tf_record import TFRecordWriter
from tests.data.oracle import compare, real_tf, run

pytestmark = pytest.mark.tf_oracle

_CSV_A = 'id,name,score,big,ratio\n1,ann,0.5,3000000000,1e39\n2,bob,,4,2\n3,"c,d",1.25,5,3\n'
_CSV_B = "id,name,score,big,ratio\n4,eve,2.5,6,4\n5,,3.5,7,5\n6,fay,4.5,8,6\n7,gus,5.5,9,7\n"


@pytest.fixture
def csv_files(tmp_path):
    (tmp_path / "a.csv").write_text(_CSV_A)
    (tmp_path / "b.csv").write_text(_CSV_B)
    return str(tmp_path)


def _csv(directory, **kwargs):
    args = {"batch_size": 3, "num_epochs": 1, "shuffle": False, **kwargs}
    return lambda m: m.data.experimental.make_csv_dataset(directory + "/*.csv", **args)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"label_name": "score"},
        {"select_columns": ["name", "id"], "label_name": "id"},
        {"select_columns": [4, 0]},
        {"num_parallel_reads": 2},
        {"na_value": "bob"},
        {"num_rows_for_inference": 1},
        {"batch_size": 2, "num_epochs": 2},
    ],
    ids=["inferred", "label", "select_names", "select_indices", "parallel_reads", "na_value", "few_rows", "epochs"],
)
def test_make_csv_dataset_matches_tf(csv_files, kwargs):
    compare(_csv(csv_files, **kwargs))


def test_make_csv_dataset_with_names_defaults_and_no_header_matches_tf(tmp_path):
    (tmp_path / "data.csv").write_text("1;x;2.5\n2;y;\n3;z;4.5\n")
    compare(
        lambda m: m.data.experimental.make_csv_dataset(
            str(tmp_path / "data.csv"),
            2,
            column_names=["n", "s", "f"],
            column_defaults=[m.int64, [""], [-1.0]],
            field_delim=";",
            header=False,
            label_name="n",
            num_epochs=1,
            shuffle=False,
        )
    )


def test_make_csv_dataset_repeating_forever_has_a_static_batch_size(csv_files):
    got = compare(_csv(csv_files, num_epochs=None), limit=5)
    assert got["shapes"]["id"] == [3]


def test_make_csv_dataset_reads_gzip_and_skips_bad_rows(tmp_path):
    with gzip.open(tmp_path / "rows.csv.gz", "wt") as f:
        f.write("a,b\n1,2\n3,x\n5,6\n")
    compare(
        lambda m: m.data.experimental.make_csv_dataset(
            str(tmp_path / "rows.csv.gz"),
            2,
            column_defaults=[m.int32, m.int32],
            compression_type="GZIP",
            ignore_errors=True,
            num_epochs=1,
            shuffle=False,
        )
    )


def test_make_csv_dataset_shuffles_rows_and_files(csv_files):
    tf1 = real_tf()

    def rows(m):
        elements = run(m, _csv(csv_files, batch_size=1, shuffle=True, shuffle_seed=3))["elements"]
        return sorted(int(e["id"][0]) for e in elements)

    assert rows(dtf) == rows(tf1) == list(range(1, 8))


def test_make_csv_dataset_errors_match_tf(tmp_path, csv_files):
    tf1 = real_tf()
    (tmp_path / "other.csv").write_text("x,y\n1,2\n")
    (tmp_path / "dup.csv").write_text("x,x\n1,2\n")
    (tmp_path / "short.csv").write_text("x,y\n1,2\n3\n")
    calls = {
        "label": lambda m: _csv(csv_files, label_name="nope")(m),
        "no_names": lambda m: _csv(csv_files, header=False)(m),
        "duplicates": lambda m: m.data.experimental.make_csv_dataset(str(tmp_path / "dup.csv"), 1),
        "select_duplicates": lambda m: _csv(csv_files, select_columns=["id", 0])(m),
        "select_unknown": lambda m: _csv(csv_files, select_columns=["nope"])(m),
        "defaults_length": lambda m: _csv(csv_files, select_columns=["id"], column_defaults=[m.int32, m.string])(m),
        "headers_differ": lambda m: m.data.experimental.make_csv_dataset(str(tmp_path) + "/*.csv", 1),
        "short_row": lambda m: m.data.experimental.make_csv_dataset(str(tmp_path / "short.csv"), 1),
        "no_files": lambda m: m.data.experimental.make_csv_dataset(str(tmp_path / "none*.csv"), 1),
    }

    def outcome(m, call):
        with m.Graph().as_default():
            try:
                call(m)
            except (ValueError, TypeError) as e:
                return type(e).__name__, str(e).replace(str(tmp_path), "<dir>")
        return None

    for name, call in calls.items():
        assert outcome(dtf, call) == outcome(tf1, call), name


# ---- Example records -------------------------------------------------------------------------------------------
def _write_examples(path, start, count):
    with TFRecordWriter(path) as writer:
        for i in range(start, start + count):
            feature = {
                "x": dtf.train.Feature(float_list=dtf.train.FloatList(value=[i, -i])),
                "tags": dtf.train.Feature(bytes_list=dtf.train.BytesList(value=[b"t"] * (i % 3))),
                "label": dtf.train.Feature(int64_list=dtf.train.Int64List(value=[i % 2])),
            }
            writer.write(dtf.train.Example(features=dtf.train.Features(feature=feature)).SerializeToString())


@pytest.fixture
def record_files(tmp_path):
    _write_examples(str(tmp_path / "a.tfrecord"), 0, 4)
    _write_examples(str(tmp_path / "b.tfrecord"), 10, 3)
    return str(tmp_path)


def _features(m):
    return {
        "x": m.FixedLenFeature([2], m.float32),
        "tags": m.VarLenFeature(m.string),
        "label": m.FixedLenFeature([], m.int64),
    }


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"label_key": "label"},
        {"reader_num_threads": 2},
        {"drop_final_batch": True, "parser_num_threads": 1},
        {"num_epochs": 2, "batch_size": 4},
    ],
    ids=["plain", "label", "two_readers", "drop_final", "epochs"],
)
def test_make_batched_features_dataset_matches_tf(record_files, kwargs):
    args = {"batch_size": 3, "num_epochs": 1, "shuffle": False, **kwargs}
    compare(
        lambda m: m.data.experimental.make_batched_features_dataset(
            record_files + "/*.tfrecord", features=_features(m), **args
        )
    )


def test_make_batched_features_dataset_errors_match_tf(record_files):
    tf1 = real_tf()

    def outcome(m, **kwargs):
        with m.Graph().as_default():
            try:
                m.data.experimental.make_batched_features_dataset(record_files + "/*", 2, _features(m), **kwargs)
            except (ValueError, TypeError) as e:
                return type(e).__name__, str(e)
        return None

    for kwargs in ({"label_key": "nope"}, {"reader": "TFRecordReader"}):
        ours = outcome(dtf, **{k: getattr(dtf, v) if k == "reader" else v for k, v in kwargs.items()})
        theirs = outcome(tf1, **{k: getattr(tf1, v) if k == "reader" else v for k, v in kwargs.items()})
        assert ours == theirs
        assert ours is not None


def test_parse_example_dataset_matches_tf(record_files):
    compare(
        lambda m: (
            m.data.TFRecordDataset([record_files + "/a.tfrecord", record_files + "/b.tfrecord"])
            .batch(2)
            .apply(m.data.experimental.parse_example_dataset(_features(m)))
        )
    )
