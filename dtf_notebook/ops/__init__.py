"""Op definitions: each module registers its ops (builder, inference, kernel, gradient) on import.

Importing this package registers every op; ``dtf_notebook.compat.v1`` re-exports the
public builders under TF1's names.
"""

from dtf_notebook.ops import (  # noqa: F401 - imported for their registrations
    constant_op,
    identity_ops,
    placeholder_ops,
    state_ops,
    variables,
)
