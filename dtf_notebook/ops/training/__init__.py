"""TF's fused optimizer update ops; ``dtf_notebook.ops.training_ops`` gathers their builders.

Modules, from the bottom up: ``op_specs`` (each op's argument layout: building, output
inference, registration), ``kernel_support`` (what every kernel shares: constant scalars,
shape and index checks, locking), then ``dense`` (``Apply*``) and ``sparse`` (``SparseApply*``).
Importing ``dense`` or ``sparse`` registers its ops.
"""
