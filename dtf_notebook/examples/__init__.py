"""Runnable TF1-style example programs (``python3 -m dtf_notebook.examples.<name>``).

* ``train_digits`` -- the main job: a 784-100-10 network trained on scikit-learn's bundled digits.
"""
