"""``tf.initializers``: initializer classes by their short names, plus the variable- and table-initializer ops."""

from dtf_notebook.ops.init_ops import INITIALIZERS as _INITIALIZERS
from dtf_notebook.ops.lookup_ops import tables_initializer
from dtf_notebook.ops.variables import global_variables_initializer as global_variables
from dtf_notebook.ops.variables import local_variables_initializer as local_variables
from dtf_notebook.ops.variables import variables_initializer as variables

globals().update(_INITIALIZERS)
