"""``tf.distribute.cluster_resolver``: where a task learns its cluster (TF_CONFIG, SLURM, or given)."""

from dtf_notebook.distributed.resolvers import (
    ClusterResolver,
    SimpleClusterResolver,
    SlurmClusterResolver,
    TFConfigClusterResolver,
)
