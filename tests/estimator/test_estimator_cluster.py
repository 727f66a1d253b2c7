"""Whole Estimator programs on local multi-process clusters, one process per task with TF_CONFIG, as on Kubernetes:
``train_and_evaluate`` over chief + worker + ps + evaluator, and an Experiment run by ``learn_runner``."""

from __future__ import annotations

import json
import os

import pytest

from dtf_notebook.notebook.task_programs import launch_per_task
from dtf_notebook.train.checkpoint_management import latest_checkpoint
from dtf_notebook.train.checkpoint_utils import list_variables, load_variable

pytestmark = pytest.mark.slow

HERE = os.path.dirname(__file__)


def _fail_with_logs(run, codes):
    logs = "\n\n".join(f"--- {t.name}\n{run.logs(t.job, t.index)[-3000:]}" for t in run.tasks)
    pytest.fail(f"exit codes {codes}\n{logs}")


def test_train_and_evaluate_over_chief_worker_ps_and_evaluator(tmp_path):
    model_dir = str(tmp_path / "model")
    run = launch_per_task(
        os.path.join(HERE, "programs_train_and_evaluate.py"),
        {"chief": 1, "worker": 1, "ps": 1, "evaluator": 1},
        args=[model_dir],
    )
    try:
        codes = run.wait(timeout=400)
    finally:
        run.stop()
    if any(code != 0 for name, code in codes.items() if not name.startswith("ps")):
        _fail_with_logs(run, codes)
    assert "Start Tensorflow server." in run.logs("worker", 0)
    # The chief checkpointed the last step; the evaluator evaluated it and stopped by itself. Two workers train
    # asynchronously and each stops once it sees global_step >= 60, so a step of the other one may land after
    # that: 61, as in TensorFlow.
    checkpoint = latest_checkpoint(model_dir)
    last = int(load_variable(checkpoint, "global_step"))
    assert last in (60, 61)
    names = {name for name, _ in list_variables(checkpoint)}
    assert {"dnn/hiddenlayer_0/kernel", "dnn/logits/bias", "global_step"} <= names
    assert "Exiting evaluation, global step >= train max_steps." in run.logs("evaluator", 0)
    with open(os.path.join(model_dir, "final_eval.json")) as f:
        result = json.load(f)
    assert 60 <= result["global_step"] <= last
    assert result["accuracy"] > 0.8
    assert os.listdir(os.path.join(model_dir, "eval"))  # the evaluator's summaries
    # The evaluator's exporters: one final export, at most the two newest of the latest ones.
    exports = {name: os.listdir(os.path.join(model_dir, "export", name)) for name in ("final", "latest")}
    assert len(exports["final"]) == 1 and 1 <= len(exports["latest"]) <= 2
    final = os.path.join(model_dir, "export", "final", exports["final"][0])
    assert {"saved_model.pb", "variables"} <= set(os.listdir(final))
    assert int(load_variable(os.path.join(final, "variables", "variables"), "global_step")) >= 60


def test_experiment_run_by_learn_runner_on_master_worker_ps(tmp_path):
    model_dir = str(tmp_path / "model")
    run = launch_per_task(
        os.path.join(HERE, "programs_learn_runner.py"),
        {"master": 1, "worker": 1, "ps": 1},
        args=[model_dir],
        environment="cloud",
    )
    try:
        codes = run.wait(timeout=300)
    finally:
        run.stop()
    if any(code != 0 for name, code in codes.items() if not name.startswith("ps")):
        _fail_with_logs(run, codes)
    with open(os.path.join(model_dir, "master_eval.json")) as f:
        result = json.load(f)
    assert result["global_step"] >= 80
    assert result["average_loss"] < 0.5
    weights = load_variable(latest_checkpoint(model_dir), "linear/linear_model/x/weights")
    assert weights.reshape(-1)[0] > 1.0 and weights.reshape(-1)[1] < -0.3
