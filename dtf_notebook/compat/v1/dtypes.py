"""``tf.dtypes``: the element types and the functions about them (``as_dtype``, ``cast``, ``complex``, ...).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> tf.dtypes.as_dtype("int64") is tf.dtypes.int64, tf.dtypes.complex64.real_dtype
    (True, tf.float32)
"""

from dtf_notebook.framework.dtypes import (
    QUANTIZED_DTYPES,
    DType,
    as_dtype,
    bfloat16,
    bool,
    complex64,
    complex128,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    qint8,
    qint16,
    qint32,
    quint8,
    quint16,
    resource,
    string,
    uint8,
    uint16,
    uint32,
    uint64,
    variant,
)
from dtf_notebook.ops.complex_ops import complex
from dtf_notebook.ops.math.cast import cast
from dtf_notebook.ops.math.clip import saturate_cast
from dtf_notebook.ops.string_ops import as_string
