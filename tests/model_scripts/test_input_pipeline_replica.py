"""input_pipeline_replica.py (this folder), a TF1 program training a linear regression from CSV or TFRecord files
through queues (string_input_producer, TextLineReader/decode_csv or TFRecordReader/parse_single_example,
batch/shuffle_batch, queue runners under a Coordinator) or through tf.data (TextLineDataset/TFRecordDataset, map,
shard, shuffle, batch, repeat, one-shot iterator), run as a whole program: one process per task (a ps and one or
two workers on loopback ports) with --job_name/--task_index flags as its authors intended, under real TensorFlow
(its own servers) and under dtf_notebook, from the same files. The files are written here, by dtf_notebook
(``tf.python_io.TFRecordWriter``, ``tf.train.Example``), so TF's readers read files written here too.

With one worker and no shuffling the pipeline's order is fixed and the model starts at zero, so every printed loss
and the final weights and bias must equal TF's (to float32 rounding over 100 steps). With shuffling and two
workers racing each other, the order and the interleaving of updates differ from run to run even under one library;
the comparison is of the outcome: each worker runs its epochs out, the global step counts every worker's steps,
and the model converges to the weights the data was made with, under both libraries alike.
"""

from __future__ import annotations

import difflib
import os
import re
import sys

import numpy as np
import pytest
from task_processes import run_tasks

import dtf_notebook.compat.v1 as tf

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = "input_pipeline_replica.py"
DEADLINE = 180  # seconds for a whole run; a hang fails the test instead of blocking it
TRUE_WEIGHTS = np.array([1.5, -2.0, 0.5, 3.0], np.float32)
TRUE_BIAS = 0.7
ROWS_PER_FILE = 100
FILES = 2


def _examples(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(ROWS_PER_FILE, len(TRUE_WEIGHTS))).astype(np.float32)
    y = x @ TRUE_WEIGHTS + TRUE_BIAS + 0.01 * rng.normal(size=ROWS_PER_FILE).astype(np.float32)
    return x, y.astype(np.float32)


def write_files(directory: str) -> None:
    """Two CSV files (a header line, then x1..x4,y rows) and two TFRecord files of ``tf.train.Example`` records
    (``x``: 4 floats, ``y``: 1 float) holding the same rows."""
    for index in range(FILES):
        x, y = _examples(index)
        with open(os.path.join(directory, f"train-{index}.csv"), "w") as f:
            f.write("x1,x2,x3,x4,y\n")
            for row, target in zip(x, y):
                f.write(",".join(repr(float(v)) for v in (*row, target)) + "\n")
        with tf.python_io.TFRecordWriter(os.path.join(directory, f"train-{index}.tfrecord")) as writer:
            for row, target in zip(x, y):
                features = {
                    "x": tf.train.Feature(float_list=tf.train.FloatList(value=row)),
                    "y": tf.train.Feature(float_list=tf.train.FloatList(value=[target])),
                }
                writer.write(tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString())


def _run_cluster(lib: str, tmp: str, workers: int, args: list[str]) -> list[str]:
    """Runs a ps and ``workers`` worker processes of the script under ``lib``; returns the workers' stdout."""
    return [run.out for run in run_tasks(lib, SCRIPT, tmp, workers, args, deadline=DEADLINE)]


def _floats(pattern: str, text: str) -> list[float]:
    return [float(v) for v in re.findall(pattern, text)]


def _final(out: str) -> tuple[np.ndarray, float, int]:
    """A worker's final weights, bias and global step."""
    weights = re.search(r"weights = (.*)", out)
    assert weights, out[-2000:]
    (bias,) = _floats(r"bias = (\S+)", out)
    (step,) = _floats(r"global step (\d+)", out)
    return np.array(weights.group(1).split(), np.float32), bias, int(step)


def test_only_the_import_line_differs():
    sys.path.insert(0, HERE)
    try:
        from run_script import DTF_IMPORT, TF_IMPORT, source_for
    finally:
        sys.path.remove(HERE)
    path = os.path.join(HERE, SCRIPT)
    ours, theirs = source_for(path, "dtf").splitlines(), source_for(path, "tf").splitlines()
    changed = [line for line in difflib.ndiff(ours, theirs) if line[:1] in "+-"]
    assert changed == [f"- {DTF_IMPORT}", f"+ {TF_IMPORT}"]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    directory = str(tmp_path_factory.mktemp("input_pipeline_data"))
    write_files(directory)
    return directory


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.tf_oracle
@pytest.mark.parametrize("pipeline", ["queue", "dataset"])
@pytest.mark.parametrize("fmt", ["csv", "tfrecord"])
def test_one_worker_prints_tfs_losses_and_ends_with_tfs_model(pipeline, fmt, data_dir, tmp_path):
    pytest.importorskip("tensorflow")
    args = [f"--train_files={data_dir}/train-*.{fmt}", f"--input={pipeline}", "--num_epochs=5"]
    (theirs,) = _run_cluster("tf", str(tmp_path), 1, args)
    (mine,) = _run_cluster("dtf", str(tmp_path), 1, args)
    steps = FILES * ROWS_PER_FILE * 5 // 10
    assert f"epoch limit reached after {steps} steps" in theirs, theirs[-2000:]
    assert f"epoch limit reached after {steps} steps" in mine, mine[-2000:]
    tf_losses, losses = (_floats(r"loss = (\S+)", out) for out in (theirs, mine))
    assert len(tf_losses) == steps // 5 and len(losses) == len(tf_losses), mine[-2000:]
    np.testing.assert_allclose(losses[0], tf_losses[0], rtol=1e-5, err_msg="first printed loss")
    np.testing.assert_allclose(losses, tf_losses, rtol=1e-4, atol=1e-6, err_msg="printed losses")
    (tf_weights, tf_bias, tf_step), (weights, bias, step) = _final(theirs), _final(mine)
    assert step == tf_step == steps
    np.testing.assert_allclose(weights, tf_weights, rtol=1e-5, atol=1e-6, err_msg="final weights")
    np.testing.assert_allclose(bias, tf_bias, rtol=1e-5, atol=1e-6, err_msg="final bias")
    np.testing.assert_allclose(weights, TRUE_WEIGHTS, atol=0.02)


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.tf_oracle
@pytest.mark.parametrize(("pipeline", "fmt"), [("queue", "tfrecord"), ("dataset", "csv")])
def test_two_shuffling_workers_converge_as_under_tf(pipeline, fmt, data_dir, tmp_path):
    pytest.importorskip("tensorflow")
    args = [f"--train_files={data_dir}/train-*.{fmt}", f"--input={pipeline}", "--num_epochs=10", "--shuffle"]
    # Each worker reads half the examples (its file, or its shard of the dataset) for 10 epochs.
    steps = ROWS_PER_FILE * 10 // 10
    for lib in ("tf", "dtf"):
        outputs = _run_cluster(lib, str(tmp_path), 2, args)
        for index, out in enumerate(outputs):
            assert f"Worker {index}: done training, epoch limit reached after {steps} steps" in out, (lib, out)
            weights, bias, step = _final(out)
            assert steps <= step <= 2 * steps, (lib, out)
            np.testing.assert_allclose(weights, TRUE_WEIGHTS, atol=0.05, err_msg=f"{lib} worker {index}")
            np.testing.assert_allclose(bias, TRUE_BIAS, atol=0.05, err_msg=f"{lib} worker {index}")
