"""``tf.spectral``: TF1's older namespace of the Fourier transforms (the same functions as ``tf.signal``'s).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> tf.spectral.rfft is tf.signal.rfft
    True
"""

from dtf_notebook.ops.spectral_ops import (
    fft,
    fft2d,
    fft3d,
    ifft,
    ifft2d,
    ifft3d,
    irfft,
    irfft2d,
    irfft3d,
    rfft,
    rfft2d,
    rfft3d,
)
