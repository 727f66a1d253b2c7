"""``tf.signal``: Fourier transforms (``fft``, ``rfft``, ... and the shifts) and window functions.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(tf.imag(tf.signal.rfft([0.0, 1.0, 0.0, -1.0]))))
    [ 0. -2.  0.]
"""

from dtf_notebook.ops.spectral_ops import (
    fft,
    fft2d,
    fft3d,
    fftshift,
    hamming_window,
    hann_window,
    ifft,
    ifft2d,
    ifft3d,
    ifftshift,
    irfft,
    irfft2d,
    irfft3d,
    rfft,
    rfft2d,
    rfft3d,
)
