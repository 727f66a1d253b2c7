"""Small data sets that need no download.

* :func:`load_digits_784` -- scikit-learn's bundled 8x8 handwritten digits, up-sampled to MNIST's 28x28 = 784
  features, with a deterministic stratified train/test split.
* :func:`batches` -- shuffled mini-batch iterator over numpy arrays.
"""

from dtf_notebook.datasets.digits import NUM_CLASSES, batches, load_digits_784

__all__ = ["NUM_CLASSES", "batches", "load_digits_784"]
