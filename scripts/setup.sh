#!/usr/bin/env bash
# Set up a fresh machine (or re-check an existing one) for dtf_notebook.
#
# Safe to run any number of times: every step is a no-op when it is already done.
# Works from any directory: it always acts on the repository that contains this script.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"

PYTHON="${PYTHON:-python3}"
PIP=("$PYTHON" -m pip install --quiet --disable-pip-version-check --no-input --root-user-action=ignore)

log() { printf '[setup] %s\n' "$*"; }

# --- 1. System packages (apt-get) ---------------------------------------------------------------
# Graphviz's `dot`/`sfdp` draw the notebook's placement graph; Debian's chromium is the browser that the browser
# tests drive through Playwright for Python (never `playwright install`: it downloads a browser build of its own).
# Skipped, with no apt-get update, when both programs are there. Without root (or apt-get) this only warns: the
# placement widget then falls back to a table, and the drawing and browser tests are skipped.
# Node and npm build the JupyterLab extension (extension/, step 3); nothing runs them afterwards.
apt_packages=()
command -v dot >/dev/null 2>&1 || apt_packages+=(graphviz)
command -v chromium >/dev/null 2>&1 || apt_packages+=(chromium)
command -v npm >/dev/null 2>&1 || apt_packages+=(nodejs npm)
if [ "${#apt_packages[@]}" -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        log "${apt_packages[*]} (apt-get)"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o Acquire::Retries=3 "${apt_packages[@]}" >/dev/null
    else
        log "warning: ${apt_packages[*]} missing and cannot be installed here (needs root and apt-get)"
    fi
fi

# --- 2. PyTorch, pinned, BEFORE anything else, then this package ----------------------------------
# torch==2.13.0 comes from pip's configured find-links (a local CPU wheel). Installing it first means
# the package's `torch>=2.1` requirement is already satisfied and pip never resolves another torch.
# Then this package in editable mode with its test and notebook extras (JupyterLab, nbclient, Playwright, ...).
# Both are skipped when scripts/installed.py finds them already met (pip takes seconds to find nothing to do).
if "$PYTHON" scripts/installed.py --extras test,notebook "torch==2.13.0" >/dev/null 2>&1; then
    log "torch==2.13.0 and dtf_notebook[test,notebook]: already installed"
else
    log "torch==2.13.0"
    "${PIP[@]}" "torch==2.13.0"
    log "dtf_notebook (editable) + test and notebook extras"
    "${PIP[@]}" "torch==2.13.0" -e ".[test,notebook]"
fi

# --- 3. The JupyterLab extension (extension/, TypeScript) ------------------------------------------------
# `pip install` builds it too (hatch-jupyter-builder), but a re-run skips pip: so it is type-checked, linted and
# built here whenever its sources are newer than the build in dtf_notebook/lab/labextensions/dtf-notebook
# (`npm ci` first when the lock file is newer than node_modules). The browser tests load it from there.
LABEXT_BUILD=dtf_notebook/lab/labextensions/dtf-notebook/package.json
if ! command -v npm >/dev/null 2>&1; then
    log "warning: npm missing: the JupyterLab extension is not built (its sidebar is missing; its tests skip)"
elif [ ! -f "$LABEXT_BUILD" ] || [ -n "$(find extension/src extension/style extension/package.json \
        extension/package-lock.json extension/tsconfig.json extension/.eslintrc.js -newer "$LABEXT_BUILD" \
        -print -quit)" ]; then
    if [ ! -d extension/node_modules ] || [ extension/package-lock.json -nt extension/node_modules ]; then
        log "npm ci (extension/)"
        (cd extension && npm ci --no-audit --no-fund --loglevel=error)
        touch extension/node_modules
    fi
    log "JupyterLab extension: lint (tsc --noEmit, eslint) and build"
    (cd extension && npm run --silent lint && npm run --silent build:prod >/dev/null)
else
    log "JupyterLab extension: already built"
fi

# --- 4. The package's bytecode ---------------------------------------------------------------------------------
# An editable install leaves the sources uncompiled, and where PYTHONDONTWRITEBYTECODE is set (as on the project's
# machines) Python never writes __pycache__ itself: every process (a script, each cluster's task template, every
# test's fresh interpreter) would compile the modules it imports from source again (about 400 for compat.v1: 0.6 s
# of its 0.9 s import). A wheel install compiles them; so does this step, rewriting only what is out of date.
log "bytecode of dtf_notebook (compileall)"
if ! "$PYTHON" -m compileall -q -j 0 dtf_notebook >/dev/null; then
    log "warning: some of dtf_notebook could not be byte-compiled (\`python -m compileall dtf_notebook\` says why)"
fi

log "ok: $("$PYTHON" -c 'import torch, dtf_notebook; print("torch", torch.__version__, "| dtf_notebook", dtf_notebook.__file__)')"
