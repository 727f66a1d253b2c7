from dtf_notebook.train.session_run_hook import *  # noqa: F403
