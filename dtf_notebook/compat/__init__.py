"""Compatibility namespaces: ``import dtf_notebook.compat.v1 as tf`` gives TF1's API."""
