"""``tf.flags`` (also ``tf.app.flags``): absl's flags with TF1's ``FLAGS`` and old keyword names.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> tf.flags.FLAGS is tf.app.flags.FLAGS
    True
"""

from dtf_notebook.platform.flags import *  # noqa: F403
from dtf_notebook.platform.flags import __all__
