"""End-to-end test of the main job: the TF1 784-100-10 script running on dtf_notebook."""

import math

import pytest

from dtf_notebook.examples import train_digits


def test_train_digits_reaches_accuracy(capsys):
    metrics = train_digits.main(["--steps", "200"])
    assert metrics["global_step"] == 200
    assert metrics["steps"] == 200
    assert math.isfinite(metrics["test_loss"])
    assert metrics["test_accuracy"] > 0.8
    out = capsys.readouterr().out
    assert "step" in out and "train-acc" in out
    assert "test accuracy" in out


@pytest.mark.parametrize("optimizer", ["sgd", "momentum"])
def test_train_digits_other_optimizers(optimizer):
    metrics = train_digits.main(["--steps", "200", "--optimizer", optimizer])
    assert metrics["optimizer"] == optimizer
    assert metrics["test_accuracy"] > 0.8


def test_cli_exit_status_follows_threshold():
    assert train_digits.cli(["--steps", "20", "--min-accuracy", "0.0"]) == 0
    assert train_digits.cli(["--steps", "0", "--min-accuracy", "1.01"]) == 1


@pytest.mark.cluster
def test_train_digits_on_a_local_cluster_matches_local_training():
    local = train_digits.main(["--steps", "100"])
    distributed = train_digits.main(["--steps", "100", "--local-cluster"])
    assert distributed["global_step"] == 100
    assert distributed["test_loss"] == pytest.approx(local["test_loss"], rel=1e-4)
