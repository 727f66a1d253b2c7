"""``tf.distribute``: cluster resolvers (``tf.distribute.cluster_resolver.TFConfigClusterResolver``, ...)."""

from dtf_notebook.compat.v1.distribute import cluster_resolver
from dtf_notebook.distributed.server import Server
