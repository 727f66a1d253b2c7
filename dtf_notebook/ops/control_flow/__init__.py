"""Control flow with TF1's graph semantics: ``Switch``/``Merge``/``Enter``/``Exit``/``NextIteration`` frames.

- ``primitives``: the ops and their low-level builders
- ``contexts``: ``CondContext`` and ``WhileContext``, which wire ops built inside a branch or loop body
- ``cond``: ``cond``, ``case``, ``switch_case``
- ``while_loop``: ``while_loop``
- ``grads``: gradients of the primitives (through ``cond`` and ``while_loop``)

The public functions are re-exported by :mod:`dtf_notebook.ops.control_flow_ops`.
"""

from dtf_notebook.ops.control_flow import grads, primitives  # noqa: F401 - registrations
