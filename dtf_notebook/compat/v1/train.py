"""``tf.train``: optimizers, the global step and (with later layers) savers, servers and hooks."""

from dtf_notebook.distributed.cluster_spec import ClusterSpec
from dtf_notebook.distributed.server import Server
from dtf_notebook.train.optimizers import *  # noqa: F403
from dtf_notebook.train.training_util import *  # noqa: F403
from dtf_notebook.train.session_run_hook import *  # noqa: F403
