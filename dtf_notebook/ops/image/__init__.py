"""TF's image ops; ``dtf_notebook.compat.v1.image`` is the ``tf.image`` namespace built on them.

Modules: ``resize`` (the four resizing ops and their gradients), ``color`` (HSV conversions, contrast,
saturation and hue), ``codecs`` (PNG/JPEG/GIF/BMP decoding and encoding with Pillow), ``transforms``
(TF's composite functions: flips, rotations, crops and pads, brightness, dtype conversion, ...).
Importing a module registers its ops.
"""
