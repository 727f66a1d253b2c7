"""Five public TF1 model scripts (this folder), run as programs with only their import line changed: under real
TensorFlow and under dtf_notebook, from the same initial variable values, they must print the same losses -- in a
local session, and with their variables on the ps task of a local cluster (1 ps + 1 worker: TF's in-process
servers, a dtf_notebook LocalCluster).

Tolerances: both libraries compute in float32 with different kernels and reduction orders, so their values differ
in the last bits from the first step on, and training amplifies such differences over the steps (most where the
loss falls steeply: ptb_word_lm's third epoch, and Adam's normalised steps in mnist_deep). The first printed loss
(the initial model's) must agree to 1e-5; the later ones to a per-script relative tolerance: 1e-4 to 1e-3 for the
convex or slowly trained models, 1e-2 to 5e-2 for the others.

How far the runs drift apart depends on the initial values: over 28 random initializations of fully_connected_feed,
26 ended within 3e-6 of TF and two 1.6e-4 and 2.8e-4 away. So TF draws its initial values with a fixed graph-level
seed (``run_script.py --seed``) and every run of a test compares the same two trajectories; the tolerances cover the
drift seen over many initializations, not only the seeded one.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "run_script.py")
sys.path.insert(0, HERE)
from run_script import DTF_IMPORT, TF_IMPORT, source_for  # noqa: E402

sys.path.remove(HERE)


@dataclasses.dataclass
class Case:
    script: str
    args: list[str]  # "{tmp}" is the test's temporary directory
    losses: str  # a regex whose group 1 is a printed loss (or perplexity)
    rtol: float
    accuracies: str | None = None  # a regex whose group 1 is a printed accuracy or count (compared within atol)
    atol: float = 0.0
    # The last `tail` losses are compared within `tail_rtol`: where a script trains at a high learning rate, the
    # float-level differences between torch's kernels and Eigen's (summation order) grow step by step, so a run
    # that matches TF to 1e-6 for most of its steps can end a few percent away.
    tail: int = 0
    tail_rtol: float = 0.0


CASES = {
    "mnist_softmax": Case("mnist_softmax.py", ["--max_steps", "301"], r"loss = (\S+)", 1e-4, r"accuracy (\S+)", 0.01),
    "mnist_deep": Case(
        "mnist_deep.py",
        ["--max_steps", "201", "--keep_prob", "1.0"],
        r"loss = (\S+)",
        3e-2,
        r"test accuracy (\S+)",
        0.01,
        # Adam on a conv net: float-level differences in the convolutions' summation order leave the step-100 loss
        # up to ~1.2% from TF's (a CI run on the ps layout: 0.2363 against 0.2391) and the last printed one up to
        # ~2% (0.0505 against 0.0513)
        tail=1,
        tail_rtol=5e-2,
    ),
    # Most initializations end within 3e-6 of TF's step-300 loss; two of 28 ended 1.6e-4 and 2.8e-4 away (one in a
    # CI run: 1.217513 against 1.21717).
    "fully_connected_feed": Case(
        "fully_connected_feed.py",
        ["--max_steps", "301", "--log_dir", "{tmp}/logs"],
        r"loss = (\S+)",
        1e-3,
        r"Num correct: (\d+)",
        2,
    ),
    # The convolutions' summation order differs from Eigen's from the first step: over eight seeds the step-10 loss
    # ended up to 0.72% from TF's, and in two whole-suite runs on random initial values 1.006% (3.6127 against
    # 3.5767) and 2.17% (4.3759 against 4.2831).
    "cifar10_train": Case(
        "cifar10_train.py",
        ["--max_steps", "41", "--batch_size", "32", "--distort_inputs=false", "--train_dir", "{tmp}/train"],
        r"loss = (\S+)",
        3e-2,
        tail=3,
        tail_rtol=5e-2,
    ),
    # lr 1.0: from about its 28th printed perplexity on the run drifts from TF by up to 5e-3, and the valid and test
    # perplexities by up to 16%
    "ptb_word_lm": Case(
        "ptb_word_lm.py",
        ["--model", "test", "--data_path", "{tmp}/ptb"],
        r"erplexity: (\S+)",
        1e-2,
        tail=8,
        tail_rtol=0.3,
    ),
}
CLUSTER_CASES = sorted(CASES)
SEED = ["--seed", "1"]  # TF's graph-level seed: the same initial values in every run


def _run(lib: str, case: Case, tmp: str, *options: str, env: dict[str, str] | None = None) -> tuple[str, str]:
    os.makedirs(os.path.join(tmp, "ptb"), exist_ok=True)
    args = [a.replace("{tmp}", tmp) for a in case.args]
    env = dict(env or os.environ, TEST_TMPDIR=tmp, TMPDIR=tmp)
    command = [sys.executable, RUNNER, "--lib", lib, *options, case.script, *args]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600, cwd=tmp)
    if result.returncode != 0:
        raise AssertionError(f"{case.script} under {lib} failed ({result.returncode}):\n{result.stderr[-4000:]}")
    return result.stdout, result.stderr


def _values(pattern: str | None, out: str) -> list[float]:
    return [float(m.group(1)) for m in re.finditer(pattern, out)] if pattern else []


def _compare(case: Case, theirs: str, mine: str) -> None:
    tf_losses, losses = _values(case.losses, theirs), _values(case.losses, mine)
    assert len(tf_losses) >= 3 and len(losses) == len(tf_losses), (theirs, mine)
    np.testing.assert_allclose(losses[0], tf_losses[0], rtol=1e-5, err_msg="initial loss")
    head = len(tf_losses) - case.tail
    np.testing.assert_allclose(losses[:head], tf_losses[:head], rtol=case.rtol, err_msg=f"{case.script}: losses")
    tail = f"{case.script}: last {case.tail} losses"
    np.testing.assert_allclose(losses[head:], tf_losses[head:], rtol=case.tail_rtol, err_msg=tail)
    tf_accuracies, accuracies = _values(case.accuracies, theirs), _values(case.accuracies, mine)
    assert len(accuracies) == len(tf_accuracies)
    np.testing.assert_allclose(accuracies, tf_accuracies, atol=case.atol, err_msg=f"{case.script}: accuracies")


def _devices(stderr: str) -> list[str]:
    found = re.search(r"run_script: variable devices (\[.*\])", stderr)
    assert found, stderr[-3000:]
    return eval(found.group(1), {})  # the runner prints a list of strings


@pytest.mark.parametrize("name", sorted(CASES))
def test_only_the_import_line_differs(name):
    path = os.path.join(HERE, CASES[name].script)
    ours, theirs = source_for(path, "dtf").splitlines(), source_for(path, "tf").splitlines()
    changed = [line for line in difflib.ndiff(ours, theirs) if line[:1] in "+-"]
    assert changed == [f"- {DTF_IMPORT}", f"+ {TF_IMPORT}"]


@pytest.mark.slow
@pytest.mark.tf_oracle
@pytest.mark.parametrize("name", sorted(CASES))
def test_script_reaches_tf_losses_in_a_local_session(name, tmp_path):
    pytest.importorskip("tensorflow")
    case, tmp, init = CASES[name], str(tmp_path), str(tmp_path / "init.pkl")
    theirs, _ = _run("tf", case, tmp, "--save-init", init, *SEED)
    mine, _ = _run("dtf", case, tmp, "--load-init", init)
    _compare(case, theirs, mine)


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.tf_oracle
@pytest.mark.parametrize("name", CLUSTER_CASES)
def test_script_reaches_tf_losses_with_its_variables_on_a_ps_task(name, tmp_path):
    pytest.importorskip("tensorflow")
    from dtf_notebook.notebook.local_cluster import LocalCluster

    case, tmp, init = CASES[name], str(tmp_path), str(tmp_path / "init.pkl")
    on_ps = ["--ps_tasks", "1"]
    # The runner starts TF's ps and worker servers in its process and puts the worker's target for {master}.
    tf_case = dataclasses.replace(case, args=[*case.args, "--master", "{master}", *on_ps])
    theirs, tf_log = _run("tf", tf_case, tmp, "--tf-cluster", "--save-init", init, *SEED)
    with LocalCluster(jobs={"ps": 1, "worker": 1}) as cluster:
        dtf_case = dataclasses.replace(case, args=[*case.args, "--master", cluster.target("worker", 0), *on_ps])
        mine, log = _run("dtf", dtf_case, tmp, "--load-init", init, env=cluster.client_env())
    for devices in (_devices(tf_log), _devices(log)):
        assert devices and all(d.startswith("/job:ps/task:0") for d in devices), devices
    _compare(case, theirs, mine)
