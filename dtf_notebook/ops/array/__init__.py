"""Array ops: shapes, reshaping, slicing, joining, gathering, padding and filling tensors.

One module per family, each registering its ops on import; importing this package registers
them all, installs ``Tensor.__getitem__`` and the auto-packing conversion for lists. The public
builders are re-exported by :mod:`dtf_notebook.ops.array_ops`. Modules only import those listed
before them (gradients may import later ones lazily):

- ``common``, ``diagnostics``, ``static_values``, ``conversions``: helpers (scopes and kernel caches, TF's
  error texts, values known while building, shape-like arguments)
- ``shape_ops``: shape, size, rank
- ``reshape``: reshape, expand_dims, squeeze, broadcast_to
- ``transpose``: transpose, invert_permutation
- ``pack``, ``autopack``: stack, unstack; lists mixing tensors and numbers
- ``concat_split``: concat, split
- ``fill``: fill, zeros, ones, zeros_like, ones_like, one_hot
- ``slice_spec``, ``slicing``: slice, strided_slice
- ``gather``: gather, boolean_mask, unique
- ``partition_stitch``: dynamic_partition, dynamic_stitch (and ParallelDynamicStitch)
- ``pad_tile``: pad, tile
- ``getitem``: ``Tensor.__getitem__``
"""

from dtf_notebook.ops.array import (  # noqa: F401 - imported for their registrations
    autopack,
    common,
    concat_split,
    conversions,
    diagnostics,
    fill,
    gather,
    getitem,
    pack,
    pad_tile,
    partition_stitch,
    reshape,
    shape_ops,
    slice_spec,
    slicing,
    static_values,
    transpose,
)
