#!/usr/bin/env bash
# Set up, then run the main job: train the 784-100-10 network on scikit-learn's bundled digits.
# Extra arguments go to the training script, e.g. `bash scripts/main.sh --steps 1000 --optimizer sgd`.
# Exits non-zero if set-up fails or the final test accuracy is below the script's threshold.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"

bash scripts/setup.sh
exec python3 -m dtf_notebook.examples.train_digits --local-cluster "$@"
