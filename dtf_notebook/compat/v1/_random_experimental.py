"""``tf.random.experimental``: the random-number generator and the stateless seed helpers under the names TF also
gives them there (``stateless_fold_in`` is ``tf.random.fold_in``, ``stateless_split`` is ``tf.random.split``).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(tf.random.experimental.stateless_split([1, 2], 3)).shape)
    (3, 2)
"""

from dtf_notebook.ops.stateful_random_ops import Generator, get_global_generator, set_global_generator
from dtf_notebook.ops.stateless_random_ops import Algorithm, create_rng_state
from dtf_notebook.ops.stateless_random_ops import fold_in as stateless_fold_in
from dtf_notebook.ops.stateless_random_ops import split as stateless_split

__all__ = [
    "Algorithm",
    "Generator",
    "create_rng_state",
    "get_global_generator",
    "set_global_generator",
    "stateless_fold_in",
    "stateless_split",
]
