"""``%dtf_cluster run``: a TF_CONFIG program started once per task from a notebook, waited for, its ps stopped."""

from __future__ import annotations

import json
import os

import pytest

pytest.importorskip("IPython")
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402

pytestmark = pytest.mark.cluster

ESTIMATOR_PROGRAM = os.path.join(os.path.dirname(__file__), "..", "estimator", "programs_train_and_evaluate.py")


@pytest.fixture(scope="module")
def shell(runtime_dir):
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "dtf_notebook")
    yield ip
    ip.run_line_magic("unload_ext", "dtf_notebook")


def test_run_gives_each_task_its_tf_config_and_stops_the_ps(shell, tmp_path, capsys):
    program = tmp_path / "show.py"
    program.write_text(
        "import json, os, sys\n"
        "config = json.loads(os.environ['TF_CONFIG'])\n"
        "print(config['task']['type'], config['task']['index'], sorted(config['cluster']), sys.argv[1:])\n"
        "if config['task']['type'] == 'ps':\n"
        "    import time; time.sleep(600)\n"
    )
    run = shell.run_line_magic("dtf_cluster", f"run {program} --workers 2 --evaluator -- --flag x")
    out = capsys.readouterr().out
    assert "Started chief:0, worker:0, worker:1, ps:0, evaluator:0" in out
    codes = run.exit_codes()
    assert [codes[t] for t in ("chief:0", "worker:0", "worker:1", "evaluator:0")] == [0, 0, 0, 0]
    assert codes["ps:0"] != 0  # stopped: it serves until then
    assert run.logs("worker", 1).split("\n")[0] == "worker 1 ['chief', 'ps', 'worker'] ['--flag', 'x']"
    assert run.logs("evaluator", 0).startswith("evaluator 0")
    assert all(not t.running() for t in run.tasks)


def test_run_refuses_a_missing_program(shell):
    from IPython.core.error import UsageError

    with pytest.raises(UsageError, match="No program file"):
        shell.run_line_magic("dtf_cluster", "run /nonexistent/program.py")


@pytest.mark.slow
def test_run_an_estimator_train_and_evaluate(shell, tmp_path, capsys):
    model_dir = tmp_path / "model"
    run = shell.run_line_magic(
        "dtf_cluster", f"run {ESTIMATOR_PROGRAM} --workers 0 --ps 1 --evaluator --timeout 400 -- {model_dir}"
    )
    codes = run.exit_codes()
    assert codes["chief:0"] == 0 and codes["evaluator:0"] == 0, capsys.readouterr().out
    with open(model_dir / "final_eval.json") as f:
        assert json.load(f)["global_step"] == 60
