"""``tf.app.run`` and ``tf.flags``: a TF1-style script run as a program under TF and here, and the FLAGS wrapper.

The script is what TF1 trainers look like (``mnist_replica.py``): flags defined at import, read in
``main`` after ``tf.app.run()``; it is started as a subprocess with only its import switched.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from unittest import mock

import pytest
from absl import flags as absl_flags

import dtf_notebook.compat.v1 as tf
from dtf_notebook.platform.flags import _FlagValuesWrapper

_SCRIPT = textwrap.dedent(
    """
    import importlib
    import json
    import os

    tf = importlib.import_module(os.environ["TF_MODULE"])
    flags = tf.app.flags
    FLAGS = flags.FLAGS
    flags.DEFINE_string("job_name", "", "One of 'ps', 'worker'")
    flags.DEFINE_integer("task_index", 0, "Index of task within the job")
    flags.DEFINE_float("learning_rate", 0.01, "Initial learning rate")
    flags.DEFINE_boolean("sync_replicas", False, "Use the sync_replicas (synchronized replicas) mode")
    flags.DEFINE_bool("verbose", True, "Say more")
    flags.DEFINE_list("ps_hosts", ["localhost:2222"], "Comma-separated list of hostname:port pairs")
    flags.DEFINE_enum("optimizer", "sgd", ["sgd", "adam"], "Which optimizer")
    flags.DEFINE_multi_string("tag", [], "Tags, repeatable")
    flags.DEFINE_multi_integer("seed", [1], "Seeds, repeatable")
    tf.flags.DEFINE_string(flag_name="data_dir", default_value="/tmp/mnist-data", docstring="Data directory")
    EARLY = FLAGS.task_index if os.environ.get("READ_EARLY") else None  # read before tf.app.run parses


    def main(argv):
        names = ["job_name", "task_index", "learning_rate", "sync_replicas", "verbose", "ps_hosts", "optimizer",
                 "tag", "seed", "data_dir"]
        print("RESULT " + json.dumps({"flags": {n: getattr(FLAGS, n) for n in names}, "argv": argv[1:],
                                      "early": EARLY, "parsed": FLAGS.is_parsed()}))
        return int(os.environ.get("EXIT_CODE", "0"))


    if __name__ == "__main__":
        tf.app.run()
    """
)

_FULL_ARGS = [
    "--job_name=worker",
    "--task_index=1",
    "--learning_rate",
    "0.5",
    "--sync_replicas",
    "--noverbose",
    "--ps_hosts=a:1,b:2",
    "--optimizer=adam",
    "--tag",
    "x",
    "--tag=y",
    "--seed=3",
    "--seed=4",
    "--data_dir=/d",
]

# name -> (arguments, extra environment)
_SCENARIOS = {
    "all_flag_kinds_read_early": (_FULL_ARGS, {"READ_EARLY": "1"}),
    "unknown_flags_left_in_argv": (["--task_index=2", "--not_defined=7", "positional"], {"EXIT_CODE": "3"}),
    "help": (["--help"], {}),
    "bad_value": (["--task_index=abc"], {}),
}


def _run(script: str, module: str, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    environment = {**os.environ, "TF_MODULE": module, "TF_CPP_MIN_LOG_LEVEL": "3", **env}
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True, env=environment, timeout=240)


def _result(out: str) -> dict | None:
    lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
    return json.loads(lines[0][len("RESULT ") :]) if lines else None


@pytest.mark.slow
@pytest.mark.tf_oracle
def test_tf1_script_flags_behave_as_under_tensorflow(tmp_path):
    pytest.importorskip("tensorflow")
    script = tmp_path / "trainer.py"
    script.write_text(_SCRIPT)
    jobs = [(name, module) for name in _SCENARIOS for module in ("tensorflow.compat.v1", "dtf_notebook.compat.v1")]
    with ThreadPoolExecutor(4) as pool:
        runs = dict(zip(jobs, pool.map(lambda job: _run(str(script), job[1], *_SCENARIOS[job[0]]), jobs)))
    for name in _SCENARIOS:
        theirs, ours = runs[name, "tensorflow.compat.v1"], runs[name, "dtf_notebook.compat.v1"]
        assert ours.returncode == theirs.returncode, (name, ours.stderr[-2000:], theirs.stderr[-2000:])
        assert _result(ours.stdout) == _result(theirs.stdout), name
        if name == "help":  # absl lists the script's own flags, with their help and defaults
            assert ours.stdout == theirs.stdout
        if name == "bad_value":
            error = re.compile(r"FATAL Flags parsing error.*")
            assert error.findall(ours.stderr) == error.findall(theirs.stderr), name

    full = _result(runs["all_flag_kinds_read_early", "dtf_notebook.compat.v1"].stdout)
    assert full["flags"]["ps_hosts"] == ["a:1", "b:2"] and full["early"] == 1
    # The early read parsed sys.argv once and tf.app.run parses it again: repeatable flags collect twice, as in TF.
    assert full["flags"]["seed"] == [3, 4, 3, 4]
    unknown = runs["unknown_flags_left_in_argv", "dtf_notebook.compat.v1"]
    assert unknown.returncode == 3 and _result(unknown.stdout)["argv"] == ["--not_defined=7", "positional"]
    assert "--task_index: Index of task within the job" in runs["help", "dtf_notebook.compat.v1"].stdout


def test_flags_module_is_absl_with_tf1_additions():
    assert tf.app.flags is tf.flags
    assert tf.flags.FlagValues is absl_flags.FlagValues
    assert tf.flags.UnrecognizedFlagError is absl_flags.UnrecognizedFlagError
    assert isinstance(tf.flags.FLAGS, absl_flags.FlagValues)  # the wrapper answers for its class, as TF's
    for name in ("DEFINE_enum", "DEFINE_list", "DEFINE_multi_string", "DEFINE_multi_integer", "mark_flag_as_required"):
        assert getattr(tf.flags, name) is getattr(absl_flags, name)


def test_reading_a_flag_before_parsing_parses_sys_argv():
    values = _FlagValuesWrapper(absl_flags.FlagValues())
    tf.flags.DEFINE_integer("task_index", 0, "Task.", flag_values=values)
    tf.flags.DEFINE_string(flag_name="job_name", default_value="worker", docstring="Job.", flag_values=values)
    with mock.patch.object(sys, "argv", ["trainer.py", "--task_index=4", "--job_name=ps"]):
        assert not values.is_parsed()
        assert (values.task_index, values.job_name) == (4, "ps")
    assert values.is_parsed() and values["task_index"].value == 4
    values.task_index = 5  # assignment goes to the flag
    assert values.task_index == 5 and "task_index" in values


def test_reading_a_flag_before_parsing_rejects_unknown_flags_like_tf():
    values = _FlagValuesWrapper(absl_flags.FlagValues())
    tf.flags.DEFINE_integer("task_index", 0, "Task.", flag_values=values)
    with mock.patch.object(sys, "argv", ["trainer.py", "--nope=1"]), pytest.raises(absl_flags.UnrecognizedFlagError):
        _ = values.task_index
    with pytest.raises(AttributeError):  # dunder probes (inspect, copy) never parse
        _ = values.__wrapped__


def test_app_run_passes_unknown_flags_through_and_exits_with_mains_value():
    import logging

    root_handlers = logging.getLogger().handlers[:]
    seen = []
    try:
        with pytest.raises(SystemExit) as exit_info:
            tf.app.run(lambda argv: seen.append(argv) or 7, argv=["prog", "--undefined_flag=1", "rest"])
    finally:
        logging.getLogger().handlers[:] = root_handlers  # absl's run installs its handler on the root logger
    assert exit_info.value.code == 7 and seen == [["prog", "--undefined_flag=1", "rest"]]
