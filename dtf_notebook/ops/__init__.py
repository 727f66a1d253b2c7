"""Op definitions: each module registers its ops (builder, inference, kernel, gradient) on import.

Importing this package registers every op; ``dtf_notebook.compat.v1`` re-exports the
public builders under TF1's names. It also registers the builders that lower modules call up to
(``op_registry.builders``): the graph API's gradient sums and dense IndexedSlices, and the math ops'
gradients, which use the array ops above them.
"""

from dtf_notebook.framework import op_registry
from dtf_notebook.ops import (  # noqa: F401 - imported for their registrations
    array_ops,
    assert_op,
    check_ops,
    complex_ops,
    constant_op,
    control_flow_ops,
    data_flow_ops,
    file_ops,
    functional_ops,
    identity_ops,
    init_ops,
    io_ops,
    logging_ops,
    lookup,
    math_ops,
    nn_ops,
    numerics_ops,
    placeholder_ops,
    random_distribution_ops,
    random_ops,
    resource_variable_ops,
    resource_variables,
    script_ops,
    sendrecv_ops,
    serialization_ops,
    sparse,
    spectral_ops,
    state_ops,
    stateful_random_ops,
    stateless_random_ops,
    tensor_array_ops,
    training_ops,
    variable_scope,
    variables,
)
from dtf_notebook.ops.array import matrix_diag, scatter_variables  # noqa: F401
from dtf_notebook.ops.image import boxes, codecs, crops  # noqa: F401
from dtf_notebook.ops.io import decode_ops, input_ops, parsing_ops, reader_ops, sparse_map_ops  # noqa: F401
from dtf_notebook.ops.linalg import decompositions, solvers  # noqa: F401
from dtf_notebook.ops.math import bitwise, einsum, reductions, scan, segment, sorting, special  # noqa: F401
from dtf_notebook.ops.strings import joins, split  # noqa: F401

op_registry.register_builders(
    add_n=math_ops.add_n,
    array_ops=array_ops,
    cast=math_ops.cast,
    complex_abs=complex_ops.complex_abs,
    concat=array_ops.concat,
    conjugate=complex_ops.conjugate,
    gather=array_ops.gather,
    log=math_ops.log,
    negative=math_ops.negative,
    ones=array_ops.ones,
    pad=array_ops.pad,
    reduce_sum=math_ops.reduce_sum,
    shape=array_ops.shape,
    unsorted_segment_sum=math_ops.unsorted_segment_sum,
    zeros_like=array_ops.zeros_like,
)
