"""TF1's TensorArray: the storage a step's arrays live in, the ``TensorArray*V3`` ops, their gradients, and the
Python ``TensorArray`` class (re-exported by :mod:`dtf_notebook.ops.tensor_array_ops`)."""
