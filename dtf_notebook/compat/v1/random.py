"""``tf.random``: random ops under their short names."""

from dtf_notebook.compat.v1 import _random_experimental as experimental
from dtf_notebook.framework.random_seed import get_seed, set_random_seed
from dtf_notebook.ops.nn.candidate_sampling import (
    all_candidate_sampler,
    fixed_unigram_candidate_sampler,
    learned_unigram_candidate_sampler,
    log_uniform_candidate_sampler,
    uniform_candidate_sampler,
)
from dtf_notebook.ops.random_distribution_ops import random_gamma as gamma
from dtf_notebook.ops.random_distribution_ops import random_poisson as poisson
from dtf_notebook.ops.random_distribution_ops import stateless_random_binomial as stateless_binomial
from dtf_notebook.ops.random_distribution_ops import stateless_random_gamma as stateless_gamma
from dtf_notebook.ops.random_distribution_ops import stateless_random_poisson as stateless_poisson
from dtf_notebook.ops.random_ops import categorical, multinomial, truncated_normal
from dtf_notebook.ops.random_ops import random_normal as normal
from dtf_notebook.ops.random_ops import random_shuffle as shuffle
from dtf_notebook.ops.random_ops import random_uniform as uniform
from dtf_notebook.ops.stateful_random_ops import Generator, get_global_generator, set_global_generator
from dtf_notebook.ops.stateless_random_ops import (
    Algorithm,
    create_rng_state,
    fold_in,
    split,
    stateless_categorical,
    stateless_multinomial,
    stateless_parameterized_truncated_normal,
    stateless_truncated_normal,
)
from dtf_notebook.ops.stateless_random_ops import stateless_random_normal as stateless_normal
from dtf_notebook.ops.stateless_random_ops import stateless_random_uniform as stateless_uniform
