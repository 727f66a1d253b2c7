"""TF1's top-level names of the graph API that live in their own modules: version constants, the tensor utilities
(``tf.make_tensor_proto``, ``tf.get_static_value``, ``tf.is_tensor``, ...), gradient registration
(``tf.RegisterGradient``, ``tf.no_gradient``), ``tf.init_scope``, the graph protos (``tf.GraphDef``, ``tf.NodeDef``,
...), ``tf.tables_initializer`` and TF1's deprecated aliases ``tf.initialize_variables``, ``tf.OpError``.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> tf.OpError is tf.errors.OpError, tf.initialize_variables is tf.variables_initializer
    (True, True)
"""

from dtf_notebook.errors import OpError
from dtf_notebook.framework.enums import *  # noqa: F403
from dtf_notebook.framework.gradient_registry import *  # noqa: F403
from dtf_notebook.framework.importer import *  # noqa: F403
from dtf_notebook.framework.scopes import *  # noqa: F403
from dtf_notebook.framework.tensor_tools import *  # noqa: F403
from dtf_notebook.framework.versions import *  # noqa: F403
from dtf_notebook.ops.lookup_ops import *  # noqa: F403
from dtf_notebook.ops.variables import variables_initializer as initialize_variables
from dtf_notebook.protos.graph_pb import AttrValue, GraphDef, MetaGraphDef, NameAttrList, NodeDef, TensorInfo
