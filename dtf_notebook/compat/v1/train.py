"""``tf.train``: optimizers, the global step and (with later layers) savers, servers and hooks."""

from dtf_notebook.distributed.cluster_spec import ClusterSpec
from dtf_notebook.protos.config_pb import ClusterDef, JobDef, ServerDef
from dtf_notebook.protos.example_pb import (
    BytesList,
    Example,
    Feature,
    FeatureList,
    FeatureLists,
    Features,
    FloatList,
    Int64List,
    SequenceExample,
)
from dtf_notebook.summary.summary_iterator import summary_iterator
from dtf_notebook.train import queue_runner
from dtf_notebook.train.basic_session_run_hooks import *  # noqa: F403
from dtf_notebook.train.checkpoint_init import init_from_checkpoint
from dtf_notebook.train.checkpoint_management import (
    checkpoint_exists,
    generate_checkpoint_state_proto,
    get_checkpoint_mtimes,
    get_checkpoint_state,
    latest_checkpoint,
    remove_checkpoint,
    update_checkpoint_state,
)
from dtf_notebook.train.checkpoint_saver_hook import *  # noqa: F403
from dtf_notebook.train.checkpoint_utils import NewCheckpointReader, list_variables, load_checkpoint, load_variable
from dtf_notebook.train.coordinator import *  # noqa: F403
from dtf_notebook.train.device_setter import replica_device_setter
from dtf_notebook.train.graph_io import write_graph
from dtf_notebook.train.input import *  # noqa: F403
from dtf_notebook.train.learning_rate_decay import *  # noqa: F403
from dtf_notebook.train.meta_graph import export_meta_graph, import_meta_graph
from dtf_notebook.train.monitored_session import *  # noqa: F403
from dtf_notebook.train.moving_averages import ExponentialMovingAverage
from dtf_notebook.train.optimizers import *  # noqa: F403
from dtf_notebook.train.queue_runner import *  # noqa: F403
from dtf_notebook.train.saver import Saver, SaverDef
from dtf_notebook.train.session_manager import *  # noqa: F403
from dtf_notebook.train.session_run_hook import *  # noqa: F403
from dtf_notebook.train.supervisor import Supervisor
from dtf_notebook.train.sync_replicas_optimizer import SyncReplicasOptimizer
from dtf_notebook.train.training_util import *  # noqa: F403


def __getattr__(name: str) -> object:
    # tf.train.Server loads the server's services only when a script makes one (a client never needs them).
    if name == "Server":
        from dtf_notebook.distributed.server import Server

        globals()["Server"] = Server
        return Server
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
