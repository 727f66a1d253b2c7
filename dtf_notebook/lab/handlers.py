"""The REST API of the lab extension, under the Jupyter server's base URL (every request needs its token or login):

============================================  ========================================================================
``GET  dtf/clusters``                           every running cluster of the server's user, with its tasks
``POST dtf/clusters``                           start one owned by the server: ``%dtf_cluster start``'s options as JSON
                                                (see :func:`~dtf_notebook.lab.server_clusters.start_options`)
``GET  dtf/clusters/NAME``                      one cluster; ``DELETE`` stops it
``GET  dtf/clusters/NAME/tasks``                its tasks (status, pid, variables, memory)
``POST dtf/clusters/NAME/tasks/JOB/TASK/kill``  kill a task (SIGKILL); ``.../restart`` starts it again
``GET  dtf/clusters/NAME/tasks/JOB/TASK/log``   the tail of a task's log (``?lines=N``, default 200)
``GET  dtf/clusters/NAME/variables``            every variable of its tasks, with min/max/mean/norm
``GET  dtf/clusters/NAME/placement``            the placement of the last traced step published for it
============================================  ========================================================================

Errors are JSON ``{"message": ...}``: 404 for a cluster (or placement) that does not exist, 400 for a bad option or
task, 409 for
what the cluster's state refuses (a name in use, a restart of another process's task), 500 for a task that failed
to start. Work that waits on processes runs on a thread, so the server keeps answering meanwhile. No answer carries
a cluster key or a log's path.

Example:
    >>> [pattern for pattern, _ in routes("/")][0]
    '/dtf/clusters'
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable
from typing import Any

import tornado.web
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join

from dtf_notebook import errors
from dtf_notebook.lab import cluster_views, server_clusters
from dtf_notebook.notebook import placement_publish
from dtf_notebook.notebook.cluster_files import ClusterNotFoundError
from dtf_notebook.notebook.local_cluster import ClusterStartError

__all__ = ["routes"]

_NAME = r"(?P<name>[A-Za-z0-9][A-Za-z0-9_.-]{0,63})"
_TASK = r"(?P<job>[A-Za-z_][A-Za-z0-9_.-]*)/(?P<task>[0-9]+)"


def _status_of(error: Exception) -> int:
    if isinstance(error, ClusterNotFoundError):
        return 404
    if isinstance(error, ClusterStartError):
        return 500
    if isinstance(error, FileExistsError | RuntimeError):
        return 409
    return 400


class _Handler(APIHandler):
    """Runs the blocking work of a request on a thread and answers with its JSON or a plain-word error."""

    async def _answer(self, work: Callable[[], Any], status: int = 200) -> None:
        loop = asyncio.get_running_loop()
        try:
            result = await loop.run_in_executor(None, work)
        except (ClusterNotFoundError, ValueError, LookupError, RuntimeError, FileExistsError) as e:
            self.set_status(_status_of(e))
            self.finish(json.dumps({"message": str(e)}))
            return
        except errors.OpError as e:
            self.set_status(502)
            self.finish(json.dumps({"message": e.message}))
            return
        self.set_status(status)
        self.finish(json.dumps(result))

    def _body(self) -> Any:
        try:
            return json.loads(self.request.body or b"{}")
        except ValueError as e:
            raise tornado.web.HTTPError(400, f"The request body is not JSON: {e}") from None


class ClustersHandler(_Handler):
    """``dtf/clusters``: list (GET) and start (POST)."""

    @tornado.web.authenticated
    async def get(self) -> None:
        variables = self.get_query_argument("variables", "1") != "0"
        await self._answer(lambda: {"clusters": cluster_views.list_summaries(variables)})

    @tornado.web.authenticated
    async def post(self) -> None:
        body = self._body()

        def work() -> dict[str, Any]:
            cluster = server_clusters.start(server_clusters.start_options(body))
            return cluster_views.cluster_summary(cluster.name)

        await self._answer(work, status=201)


class ClusterHandler(_Handler):
    """``dtf/clusters/NAME``: one cluster (GET), stop it (DELETE)."""

    @tornado.web.authenticated
    async def get(self, name: str) -> None:
        await self._answer(lambda: cluster_views.cluster_summary(name))

    @tornado.web.authenticated
    async def delete(self, name: str) -> None:
        await self._answer(lambda: {"name": name, "stopped": server_clusters.stop(name)})


class TasksHandler(_Handler):
    """``dtf/clusters/NAME/tasks``: the task rows."""

    @tornado.web.authenticated
    async def get(self, name: str) -> None:
        await self._answer(lambda: {"tasks": cluster_views.cluster_summary(name)["tasks"]})


class TaskActionHandler(_Handler):
    """``dtf/clusters/NAME/tasks/JOB/TASK/(kill|restart)``."""

    @tornado.web.authenticated
    async def post(self, name: str, job: str, task: str, action: str) -> None:
        if action == "kill":

            def work() -> dict[str, Any]:
                server_clusters.kill(name, job, int(task))
                return {"job": job, "task": int(task), "status": "killed"}

            await self._answer(work)
        else:
            await self._answer(functools.partial(server_clusters.restart, name, job, int(task)))


class TaskLogHandler(_Handler):
    """``dtf/clusters/NAME/tasks/JOB/TASK/log?lines=N``."""

    @tornado.web.authenticated
    async def get(self, name: str, job: str, task: str) -> None:
        try:
            lines = int(self.get_query_argument("lines", "200"))
        except ValueError:
            raise tornado.web.HTTPError(400, "lines must be a whole number") from None
        await self._answer(functools.partial(cluster_views.log_tail, name, job, int(task), min(lines, 5000)))


class VariablesHandler(_Handler):
    """``dtf/clusters/NAME/variables``."""

    @tornado.web.authenticated
    async def get(self, name: str) -> None:
        await self._answer(functools.partial(cluster_views.variables, name))


class PlacementHandler(_Handler):
    """``dtf/clusters/NAME/placement``: the last traced step's placement published for the cluster."""

    @tornado.web.authenticated
    async def get(self, name: str) -> None:
        await self._answer(functools.partial(placement_publish.read, name))


def routes(base_url: str) -> list[tuple[str, type[APIHandler]]]:
    """The URL patterns of the API under ``base_url``, with their handlers.

    Example:
        >>> [pattern for pattern, _ in routes("/user/ann/")][1]
        '/user/ann/dtf/clusters/(?P<name>[A-Za-z0-9][A-Za-z0-9_.-]{0,63})'
    """
    root = url_path_join(base_url, "dtf", "clusters")
    one = url_path_join(root, _NAME)
    return [
        (root, ClustersHandler),
        (one, ClusterHandler),
        (url_path_join(one, "tasks"), TasksHandler),
        (url_path_join(one, "tasks", _TASK, "(?P<action>kill|restart)"), TaskActionHandler),
        (url_path_join(one, "tasks", _TASK, "log"), TaskLogHandler),
        (url_path_join(one, "variables"), VariablesHandler),
        (url_path_join(one, "placement"), PlacementHandler),
    ]
