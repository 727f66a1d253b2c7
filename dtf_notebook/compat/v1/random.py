"""``tf.random``: random ops under their short names."""

from dtf_notebook.framework.random_seed import get_seed, set_random_seed
from dtf_notebook.ops.random_ops import categorical, multinomial, truncated_normal
from dtf_notebook.ops.random_ops import random_normal as normal
from dtf_notebook.ops.random_ops import random_shuffle as shuffle
from dtf_notebook.ops.random_ops import random_uniform as uniform
