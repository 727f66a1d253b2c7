"""Binder's build, done here: what repo2docker runs from ``binder/`` (runtime.txt's Python, apt.txt's packages,
postBuild) in a fresh virtual environment; then ``notebooks/01_clusters.ipynb`` runs top to bottom in a kernel of
that environment, and its ``jupyter lab`` and ``jupyter server`` land on that notebook.

postBuild installs torch from PyTorch's CPU wheel index, which cannot be reached from here: the tests set
``DTF_TORCH_INDEX_URL`` to "" so that pip takes torch==2.13.0 from its own configuration instead. apt.txt's
packages are checked as installed (scripts/setup.sh installs them) rather than installed again.
"""

from __future__ import annotations

import http.client
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("jupyter_client")

from jupyter_client.kernelspec import KernelSpecManager  # noqa: E402
from jupyter_client.manager import KernelManager  # noqa: E402
from packaging.specifiers import SpecifierSet  # noqa: E402

from dtf_notebook.distributed.local_process import free_port  # noqa: E402
from tests.notebook.process_util import clusters_left, stop_group  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINDER = os.path.join(ROOT, "binder")
FIRST_TUTORIAL = "notebooks/01_clusters.ipynb"
LANDING_PATH = f"/lab/tree/{FIRST_TUTORIAL}"
# Installing torch, JupyterLab and the rest into an empty environment takes minutes on the 2-core machine.
INSTALL_TIMEOUT_S = 1200
# Variables that would let the fresh environment see this machine's packages instead of its own.
LEAKY_VARIABLES = ("PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "VIRTUAL_ENV", "PIP_USER", "PIP_TARGET", "PIP_PREFIX")


def runtime_python() -> str:
    """The ``x.y`` of binder/runtime.txt's ``python-x.y`` line."""
    with open(os.path.join(BINDER, "runtime.txt")) as f:
        line = f.read().strip()
    assert line.startswith("python-"), f"binder/runtime.txt should read python-x.y, not {line!r}"
    return line.removeprefix("python-")


def clean_env(venv: str, **extra: str) -> dict[str, str]:
    """This process's environment with ``venv`` first on PATH and nothing pointing at other packages."""
    env = {k: v for k, v in os.environ.items() if k not in LEAKY_VARIABLES}
    env["PATH"] = os.path.join(venv, "bin") + os.pathsep + env.get("PATH", "")
    env.update(extra)
    return env


def run_to_end(cmd: list[str], log_path: str, **kw) -> None:
    """Runs ``cmd`` to its end with its output in ``log_path``; fails the test, quoting the log's end, if it fails.

    The command gets a process group of its own, killed whole if it runs past :data:`INSTALL_TIMEOUT_S`.
    """
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, **kw)
        try:
            rc = proc.wait(timeout=INSTALL_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            rc = "killed after its time limit"
    if rc != 0:
        with open(log_path) as f:
            tail = f.read()[-4000:]
        pytest.fail(f"{' '.join(cmd)} failed ({rc}):\n{tail}")


@pytest.fixture(scope="module")
def binder_env(tmp_path_factory):
    """A fresh virtual environment (no system site-packages) built by binder/postBuild, and its Jupyter config."""
    version = runtime_python()
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    if version != here:
        pytest.skip(f"Binder builds with Python {version} (binder/runtime.txt); this machine's python3 is {here}")
    base = tmp_path_factory.mktemp("binder")
    venv = str(base / "venv")
    config_dir = str(base / "jupyter_config")
    run_to_end([sys.executable, "-m", "venv", venv], str(base / "venv.log"), env=clean_env(venv))
    env = clean_env(venv, DTF_TORCH_INDEX_URL="", JUPYTER_CONFIG_DIR=config_dir)
    # repo2docker runs postBuild as a program from the repository root, with the environment's python on PATH.
    run_to_end([os.path.join(BINDER, "postBuild")], str(base / "postBuild.log"), cwd=ROOT, env=env)
    yield {"venv": venv, "python": os.path.join(venv, "bin", "python"), "config_dir": config_dir, "base": base}
    shutil.rmtree(venv, ignore_errors=True)


def test_runtime_python_meets_requires_python():
    import tomllib

    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        requires = tomllib.load(f)["project"]["requires-python"]
    assert SpecifierSet(requires).contains(runtime_python() + ".0"), (runtime_python(), requires)


def test_apt_packages_are_installed():
    if shutil.which("dpkg-query") is None:
        pytest.skip("no dpkg-query: not a Debian-like system, so apt.txt's packages cannot be checked")
    with open(os.path.join(BINDER, "apt.txt")) as f:
        packages = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    assert "graphviz" in packages
    for package in packages:
        status = subprocess.run(
            ["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True, check=False
        ).stdout
        assert status == "install ok installed", f"apt.txt's {package!r} is not installed: {status!r}"
    assert shutil.which("dot"), "graphviz is installed but its dot program is not on PATH"


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.timeout(INSTALL_TIMEOUT_S + 600)
def test_binder_environment_is_its_own(binder_env):
    with open(os.path.join(binder_env["venv"], "pyvenv.cfg")) as f:
        assert "include-system-site-packages = false" in f.read()
    probe = (
        "import json, sys, torch, dtf_notebook, jupyterlab, matplotlib, ipywidgets; "
        "print(json.dumps({'prefix': sys.prefix, 'torch': torch.__version__, 'cuda': torch.version.cuda, "
        "'torch_file': torch.__file__, 'package': dtf_notebook.__file__}))"
    )
    out = subprocess.run(
        [binder_env["python"], "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        env=clean_env(binder_env["venv"]),
        timeout=120,
    ).stdout
    found = json.loads(out.strip().splitlines()[-1])
    assert os.path.realpath(found["prefix"]) == os.path.realpath(binder_env["venv"])
    assert found["torch"].split("+")[0] == "2.13.0", found
    assert found["cuda"] is None, f"a CPU-only torch was expected, found one built for CUDA {found['cuda']}"
    assert os.path.realpath(found["torch_file"]).startswith(os.path.realpath(binder_env["venv"]))
    assert os.path.realpath(found["package"]) == os.path.join(os.path.realpath(ROOT), "dtf_notebook", "__init__.py")


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.timeout(INSTALL_TIMEOUT_S + 600)
def test_first_tutorial_runs_in_binder_environment(binder_env, runtime_dir, monkeypatch):
    kernels = binder_env["base"] / "kernels"
    (kernels / "binder").mkdir(parents=True, exist_ok=True)
    spec = {
        "argv": [binder_env["python"], "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (Binder environment)",
        "language": "python",
    }
    (kernels / "binder" / "kernel.json").write_text(json.dumps(spec))
    km = KernelManager(kernel_name="binder", kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernels)]))
    for name in LEAKY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", clean_env(binder_env["venv"])["PATH"])
    monkeypatch.setenv("MPLBACKEND", "agg")

    nb = nbformat.read(os.path.join(ROOT, FIRST_TUTORIAL), as_version=4)
    probe = "import json, sys, torch\nprint(json.dumps({'prefix': sys.prefix, 'torch': torch.__version__}))"
    nb.cells.append(nbformat.v4.new_code_cell(probe))
    client = nbclient.NotebookClient(
        nb, km=km, timeout=180, resources={"metadata": {"path": os.path.join(ROOT, "notebooks")}}
    )
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as e:
        pytest.fail(f"{FIRST_TUTORIAL} failed in the Binder environment: {e}")
    finally:
        if km.has_kernel:
            km.shutdown_kernel(now=True)

    found = json.loads(nb.cells[-1].outputs[0]["text"].strip())
    assert os.path.realpath(found["prefix"]) == os.path.realpath(binder_env["venv"])
    assert found["torch"].split("+")[0] == "2.13.0"
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o["output_type"] == "error"]
    assert errors == []
    # Nothing outlives the kernel: every cluster the notebook started is gone with its processes.
    assert clusters_left() == []


def get(port: int, path: str, token: str) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path, headers={"Authorization": f"token {token}"})
    response = conn.getresponse()
    response.read()
    conn.close()
    return response


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.timeout(INSTALL_TIMEOUT_S + 600)
@pytest.mark.parametrize("app", ["lab", "server"])
def test_jupyter_opens_on_first_tutorial(binder_env, app, tmp_path):
    port, token = free_port(), secrets.token_hex(16)
    env = clean_env(
        binder_env["venv"],
        JUPYTER_CONFIG_DIR=binder_env["config_dir"],
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
        JUPYTER_DATA_DIR=str(tmp_path / "data"),
        JUPYTER_TOKEN=token,
    )
    cmd = [
        os.path.join(binder_env["venv"], "bin", "jupyter"),
        app,
        "--no-browser",
        "--allow-root",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
    ]
    log_path = tmp_path / "jupyter.log"
    with open(log_path, "w") as log:
        server = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while True:
            assert server.poll() is None, f"jupyter {app} exited early:\n{log_path.read_text()[-3000:]}"
            try:
                landing = get(port, "/", token)
                break
            except OSError:
                assert time.monotonic() < deadline, f"jupyter {app} never answered:\n{log_path.read_text()[-3000:]}"
                time.sleep(0.5)
        assert landing.status == 302, landing.status
        assert landing.getheader("Location").split("?")[0].endswith(LANDING_PATH), landing.getheader("Location")
        assert get(port, f"/api/contents/{FIRST_TUTORIAL}?content=0", token).status == 200
        assert get(port, LANDING_PATH, token).status == 200
    finally:
        stop_group(server)
