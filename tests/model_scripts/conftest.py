"""The model scripts of this folder are programs run by test_model_scripts.py in processes of their own (they define
absl flags and switch TF's behaviour when imported), never modules for pytest to import."""

import os

collect_ignore = [
    name
    for name in os.listdir(os.path.dirname(os.path.abspath(__file__)))
    if name.endswith(".py") and not name.startswith("test_") and name not in ("conftest.py", "run_script.py")
]
