"""Op definitions: each module registers its ops (builder, inference, kernel, gradient) on import.

Importing this package registers every op; ``dtf_notebook.compat.v1`` re-exports the
public builders under TF1's names.
"""

from dtf_notebook.ops import (  # noqa: F401 - imported for their registrations
    array_ops,
    assert_op,
    check_ops,
    constant_op,
    control_flow_ops,
    data_flow_ops,
    functional_ops,
    identity_ops,
    init_ops,
    io_ops,
    logging_ops,
    math_ops,
    nn_ops,
    placeholder_ops,
    random_ops,
    sendrecv_ops,
    state_ops,
    tensor_array_ops,
    training_ops,
    variable_scope,
    variables,
)
