"""Where the file-touching kernels of a process may go: anywhere, or only inside the roots it was given.

A server started with file roots (``Server(..., file_roots=[...])``, ``dtf-server --file-root DIR``,
``LocalCluster(file_roots=...)``) hands its kernels a :class:`FileAccess` that every kernel touching a file
asks first (checkpoint saves, merges and restores, and any such op added later), so even a peer holding the
cluster key cannot make the task read, write, rename or remove a file elsewhere. A local path is checked after
resolving ``..`` and symbolic links (a link inside a root pointing out of it is refused), read the way fsspec
opens it (``file:``, ``local:`` and ``~`` name local paths too); a URL (``memory://``, ``s3://bucket/...``) must
lie under a root of the same filesystem. Chained fsspec URLs (``a::b``) are refused when
roots are set.

Example:
    >>> import tempfile
    >>> root = tempfile.mkdtemp()
    >>> access = FileAccess([root])
    >>> access.check(os.path.join(root, "model.ckpt"), "write") == os.path.join(root, "model.ckpt")
    True
    >>> access.check(os.path.join(root, "..", "elsewhere"), "write")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    dtf_notebook.errors.PermissionDeniedError: Refused to write .../elsewhere: it lies outside this task's file ...
    >>> FileAccess().check("/anywhere/at/all", "read")   # no roots: anywhere the process may go
    '/anywhere/at/all'
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Sequence

import fsspec

from dtf_notebook import errors

__all__ = ["FileAccess"]


def _resolve(path: str) -> tuple[str, str]:
    """``(filesystem, path on it)`` in a form where "inside a root" is a prefix test, read exactly as the kernels'
    file functions will open it (fsspec: ``file:``, ``local:`` and ``~`` are local paths too): local paths
    absolute with links and ``..`` resolved, other filesystems' paths with ``..`` resolved."""
    try:
        fs, fs_path = fsspec.core.url_to_fs(path)
    except (ImportError, ValueError) as e:
        raise errors.PermissionDeniedError(
            None, None, f"Refused {path}: not a path this task can check ({e})"
        ) from None
    protocols = fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,)
    if "file" in protocols:
        return "", os.path.realpath(os.path.abspath(fs_path))
    return protocols[0], posixpath.normpath("/" + fs_path.lstrip("/"))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


class FileAccess:
    """The file roots of a task (None: no confinement) and the check every file-touching kernel makes.

    Args:
        roots: Directories or URLs; a local root must exist (it is resolved once, links included).

    Raises:
        ValueError: a root is empty, a chained URL, or a local directory that does not exist.

    Example:
        >>> FileAccess(["memory://ckpts"]).check("memory://ckpts/run1/model", "read")
        'memory://ckpts/run1/model'
        >>> FileAccess(["/no/such/dir"])
        Traceback (most recent call last):
            ...
        ValueError: File root /no/such/dir is not an existing directory
    """

    def __init__(self, roots: Sequence[str] | None = None) -> None:
        if isinstance(roots, str):
            roots = [roots]
        self.roots: tuple[str, ...] | None = None if roots is None else tuple(str(r) for r in roots)
        self._resolved: list[tuple[str, str]] = []
        for root in self.roots or ():
            if not root or "::" in root:
                raise ValueError(f"File root {root!r} must be a directory or a plain URL")
            try:
                scheme, resolved = _resolve(root)
            except errors.PermissionDeniedError as e:
                raise ValueError(
                    f"File root {root!r} is not a directory or URL this task can use: {e.message}"
                ) from None
            if not scheme and not os.path.isdir(resolved):
                raise ValueError(f"File root {root} is not an existing directory")
            self._resolved.append((scheme, resolved))

    @property
    def confined(self) -> bool:
        """Whether the kernels are confined to roots."""
        return self.roots is not None

    def check(self, path: str, action: str) -> str:
        """Returns ``path`` when a kernel may ``action`` (read, write, rename, remove) it here.

        Raises:
            PermissionDeniedError: the path lies outside every root (the message names it and the roots).
        """
        if self.roots is None:
            return path
        if "::" in path:
            raise errors.PermissionDeniedError(
                None, None, f"Refused to {action} {path}: chained URLs are not allowed on a task with file roots"
            )
        scheme, resolved = _resolve(path)
        if not any(scheme == s and _inside(resolved, r) for s, r in self._resolved):
            roots = ", ".join(self.roots) or "none"
            note = "" if resolved == path or scheme else f" (it resolves to {resolved})"
            raise errors.PermissionDeniedError(
                None, None, f"Refused to {action} {path}: it lies outside this task's file roots ({roots}){note}"
            )
        return path

    def __repr__(self) -> str:
        return f"FileAccess(roots={list(self.roots) if self.roots is not None else None})"
