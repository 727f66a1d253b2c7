"""The JupyterLab extension: a Jupyter Server extension (the REST API of :mod:`~dtf_notebook.lab.handlers`) and the
prebuilt lab extension (the cluster sidebar and panels), built from ``extension/`` into ``labextensions/dtf-notebook/``
here.

``pip install`` registers both: the server extension through ``jupyter_server_config.d/dtf_notebook.json``, the
lab extension through ``share/jupyter/labextensions/dtf-notebook``; ``jupyter server extension list`` and
``jupyter labextension list`` show them enabled. Without an install, this loads them from a checkout::

    jupyter lab --ServerApp.jpserver_extensions=dtf_notebook.lab=True \
        --LabApp.extra_labextensions_path=dtf_notebook/lab/labextensions

Example:
    >>> _jupyter_server_extension_points()
    [{'module': 'dtf_notebook.lab'}]
    >>> _jupyter_labextension_paths()[0]["dest"]
    'dtf-notebook'
"""

from __future__ import annotations

from typing import Any

__all__ = ["LABEXTENSION_NAME"]

LABEXTENSION_NAME = "dtf-notebook"


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "dtf_notebook.lab"}]


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": f"labextensions/{LABEXTENSION_NAME}", "dest": LABEXTENSION_NAME}]


def _load_jupyter_server_extension(server_app: Any) -> None:
    """Adds the ``dtf/clusters`` API to the server's web application."""
    from dtf_notebook.lab.handlers import routes

    web_app = server_app.web_app
    web_app.add_handlers(".*$", routes(web_app.settings["base_url"]))
    server_app.log.info("dtf_notebook: cluster API at %sdtf/clusters", web_app.settings["base_url"])
