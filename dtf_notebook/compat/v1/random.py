"""``tf.random``: random ops under their short names."""

from dtf_notebook.framework.random_seed import get_seed, set_random_seed
from dtf_notebook.ops.nn.candidate_sampling import (
    all_candidate_sampler,
    fixed_unigram_candidate_sampler,
    learned_unigram_candidate_sampler,
    log_uniform_candidate_sampler,
    uniform_candidate_sampler,
)
from dtf_notebook.ops.random_ops import categorical, multinomial, truncated_normal
from dtf_notebook.ops.random_ops import random_normal as normal
from dtf_notebook.ops.random_ops import random_shuffle as shuffle
from dtf_notebook.ops.random_ops import random_uniform as uniform
