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
# Graphviz's `dot`/`sfdp` draw the notebook's placement graph. Without root (or apt-get) this only warns:
# the placement widget then falls back to a table, and its drawing tests are skipped.
if ! command -v dot >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        log "graphviz (apt-get)"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null \
            || log "warning: could not install graphviz; placement graphs will show as tables"
    else
        log "warning: graphviz's dot is missing and cannot be installed here (needs root and apt-get)"
    fi
fi

# --- 2. PyTorch, pinned, BEFORE anything else --------------------------------------------------
# torch==2.13.0 comes from pip's configured find-links (a local CPU wheel). Installing it first means
# the package's `torch>=2.1` requirement is already satisfied and pip never resolves another torch.
log "torch==2.13.0"
"${PIP[@]}" "torch==2.13.0"

# --- 3. This package (editable) with the test extras -------------------------------------------
log "dtf_notebook (editable) + test and notebook extras"
"${PIP[@]}" -e ".[test,notebook]"

log "ok: $("$PYTHON" -c 'import torch, dtf_notebook; print("torch", torch.__version__, "| dtf_notebook", dtf_notebook.__file__)')"
