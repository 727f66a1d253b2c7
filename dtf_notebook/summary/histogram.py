"""Histograms of tensor values with TensorFlow's default buckets, as ``tf.summary.histogram`` writes them.

TF's bucket limits grow by 10% from 1e-12 up to 1e20, mirrored for negative values, with 0 and
±DBL_MAX at the edges (``_DEFAULT_BUCKETS``, computed by repeated multiplication exactly as TF's C++
does, so that the limits are the same doubles). A value ``v`` counts in the first bucket whose limit
is greater than ``v``; runs of empty buckets are merged into the next limit when encoded.

Example:
    >>> h = histogram_proto([0.0, 1.0, 1.0, -2.0])
    >>> h.num, h.min, h.max, h.sum, h.sum_squares
    (4.0, -2.0, 1.0, 0.0, 6.0)
    >>> sum(h.bucket) == 4 and len(h.bucket) == len(h.bucket_limit)
    True
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from dtf_notebook.summary.messages import HistogramProto

_DBL_MAX = sys.float_info.max


def _default_buckets() -> np.ndarray:
    positive = []
    v = 1.0e-12
    while v < 1.0e20:
        positive.append(v)
        v *= 1.1
    positive.append(_DBL_MAX)
    negative = [-x for x in reversed(positive)]
    return np.array(negative + [0.0] + positive, dtype=np.float64)


#: The bucket limits of TF's default histogram (``_DEFAULT_BUCKETS``), ascending.
DEFAULT_BUCKETS: np.ndarray = _default_buckets()
DEFAULT_BUCKETS.setflags(write=False)


def histogram_proto(values: Any, bucket_limits: np.ndarray = DEFAULT_BUCKETS) -> HistogramProto:
    """The ``HistogramProto`` of ``values`` (any shape, converted to float64), empty buckets merged.

    Sums are taken in order, one value after another, as TF's kernel does, so they are the same
    doubles. The caller rejects NaN and infinities first.

    Example:
        >>> h = histogram_proto([])
        >>> h.num, list(h.bucket_limit), list(h.bucket)
        (0.0, [1.7976931348623157e+308], [0.0])
    """
    flat = np.asarray(values, dtype=np.float64).reshape(-1)
    proto = HistogramProto()
    if flat.size:
        proto.min = float(flat.min())
        proto.max = float(flat.max())
        proto.sum = float(np.cumsum(flat)[-1])
        proto.sum_squares = float(np.cumsum(flat * flat)[-1])
    else:
        proto.min, proto.max = float(bucket_limits[-1]), -_DBL_MAX
    proto.num = float(flat.size)
    # Bucket i holds values in [limit[i-1], limit[i]): TF's upper_bound. DBL_MAX itself joins the last one.
    index = np.minimum(np.searchsorted(bucket_limits, flat, side="right"), len(bucket_limits) - 1)
    counts = np.bincount(index, minlength=len(bucket_limits))
    limits: list[float] = []
    buckets: list[float] = []
    # A run of empty buckets is written as one empty bucket ending at the run's last limit.
    nonzero = np.flatnonzero(counts)
    start = 0
    for i in nonzero:
        if i > start:
            limits.append(float(bucket_limits[i - 1]))
            buckets.append(0.0)
        limits.append(float(bucket_limits[i]))
        buckets.append(float(counts[i]))
        start = i + 1
    if start < len(bucket_limits):
        limits.append(float(bucket_limits[-1]))
        buckets.append(0.0)
    proto.bucket_limit.extend(limits)
    proto.bucket.extend(buckets)
    return proto


__all__ = ["DEFAULT_BUCKETS", "histogram_proto"]
