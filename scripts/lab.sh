#!/usr/bin/env bash
# Set up, then open the tutorials: JupyterLab on this machine's loopback address, on notebooks/01_clusters.ipynb.
# JupyterLab prints the URL to open (with its access token) and opens it in the default browser, if there is one.
# Extra arguments go to `jupyter lab`, e.g. `bash scripts/lab.sh --no-browser --port 8899`. Ctrl-C stops it.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"

bash scripts/setup.sh

FIRST_TUTORIAL="notebooks/01_clusters.ipynb"
args=(--ip=127.0.0.1 --ServerApp.root_dir="$REPO_ROOT" --LabApp.default_url="/lab/tree/$FIRST_TUTORIAL")
if [ "$(id -u)" -eq 0 ]; then
    args+=(--allow-root)  # Jupyter refuses to run as root without it (containers, CI machines)
fi

printf '[lab] JupyterLab opens %s; the URL to open is the http://127.0.0.1:... line below\n' "$FIRST_TUTORIAL"
exec python3 -m jupyter lab "${args[@]}" "$@"
