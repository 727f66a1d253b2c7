"""Jupyter server settings for Binder: binder/postBuild copies this file into Jupyter's config folder.

A Binder session (and ``jupyter lab`` or ``jupyter server`` in the built image) opens on the first tutorial.
"""

c = get_config()  # noqa: F821 (defined by Jupyter when it loads a config file)

FIRST_TUTORIAL = "/lab/tree/notebooks/01_clusters.ipynb"
c.ServerApp.default_url = FIRST_TUTORIAL
c.LabApp.default_url = FIRST_TUTORIAL
