"""The math ops, one module per family; :mod:`dtf_notebook.ops.math_ops` re-exports their public builders.

Modules import only those listed before them (gradient functions import later ones lazily):

- ``_common``: dtype groups and helpers shared by the builders and gradients;
- ``cast``: ``Cast`` and the ``to_float``-style shorthands;
- ``range``: ``Range``;
- ``compare``: comparisons and logical ops;
- ``select``: ``Select`` and ``Where`` (``tf.where``);
- ``broadcast``: ``BroadcastGradientArgs`` and summing gradients back to an input's shape;
- ``binary``: elementwise arithmetic (``Add`` ... ``SquaredDifference``);
- ``unary``: elementwise functions (``Neg`` ... ``Round``) and their fused gradient ops;
- ``reduce``: ``Sum``, ``Mean``, ``Prod``, ``Max``, ``Min``, ``Any``, ``All``;
- ``arg_reduce``: ``ArgMax`` and ``ArgMin``;
- ``matmul``: ``MatMul`` and ``BatchMatMulV2``;
- ``sums``: ``AddN`` and ``UnsortedSegmentSum``;
- ``clip``: ``clip_by_value`` and ``saturate_cast``;
- ``operators``: Python's operators on ``Tensor``.

Each module registers its ops when imported; importing ``math_ops`` imports them all.
"""
