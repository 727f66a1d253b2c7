"""The lab extension is built from its current sources, where the package says it is, and its TypeScript lints.

``scripts/setup.sh`` (or ``pip install``) builds ``extension/`` into ``dtf_notebook/lab/labextensions/dtf-notebook``;
these tests say when that build is missing or older than the sources, and run the type check and eslint again.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import dtf_notebook.lab as lab

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "extension"
BUILD = Path(lab.__file__).parent / lab._jupyter_labextension_paths()[0]["src"]
NPM = shutil.which("npm")


def _sources() -> list[Path]:
    files = [SOURCES / name for name in ("package.json", "package-lock.json", "tsconfig.json", ".eslintrc.js")]
    return files + sorted((SOURCES / "src").glob("*.ts")) + sorted((SOURCES / "style").glob("*"))


@pytest.mark.skipif(NPM is None and not (BUILD / "package.json").exists(), reason="npm is missing: nothing built it")
def test_the_build_is_there_and_newer_than_its_sources():
    built = BUILD / "package.json"
    assert built.exists(), f"The lab extension is not built ({built} is missing): run scripts/setup.sh"
    stale = [str(p.relative_to(ROOT)) for p in _sources() if p.stat().st_mtime > built.stat().st_mtime]
    assert stale == [], f"The lab extension's build is older than {stale}: run scripts/setup.sh"
    meta = json.loads(built.read_text())
    assert meta["name"] == lab.LABEXTENSION_NAME == lab._jupyter_labextension_paths()[0]["dest"]
    assert (BUILD / meta["jupyterlab"]["_build"]["load"]).exists()


@pytest.mark.slow
@pytest.mark.skipif(
    NPM is None or not (SOURCES / "node_modules").exists(), reason="npm or extension/node_modules is missing"
)
def test_the_typescript_type_checks_and_lints():
    result = subprocess.run([NPM, "run", "--silent", "lint"], cwd=SOURCES, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
