"""The programs_*.py files of this folder are whole TF1 programs that the cluster tests start once per task (they read
their model directory from argv and train when imported), never modules for pytest to import."""

collect_ignore_glob = ["programs_*.py"]
