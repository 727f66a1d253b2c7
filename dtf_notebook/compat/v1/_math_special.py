"""``tf.math.special``: the modified Bessel functions of ``tf.math`` under their ``tf.math.special.*`` names.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(tf.math.special.bessel_i1([0.0])))
    [0.]
"""

from dtf_notebook.ops.math.special import bessel_i0, bessel_i0e, bessel_i1, bessel_i1e

__all__ = ["bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e"]
