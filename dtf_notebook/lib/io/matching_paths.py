"""``glob``: the paths matching TF's glob patterns, on any fsspec filesystem, spelled like the pattern.

TF's ``GetMatchingPaths`` semantics: ``*`` and ``?`` never match ``/`` (``**`` is ``*``), a leading dot
is matched like any character, the directories before the first wildcard are taken as they are, and
each wildcard component is matched against one directory listing.

Example:
    >>> file_io.makedirs("memory://matching_doc/run-1"); file_io.makedirs("memory://matching_doc/run-2")
    >>> glob("memory://matching_doc/run-*")
    ['memory://matching_doc/run-1', 'memory://matching_doc/run-2']
    >>> file_io.rmtree("memory://matching_doc")
"""

from __future__ import annotations

import os
import re
from typing import Any

from dtf_notebook.lib.io import file_io


def _pattern_regex(component: str) -> re.Pattern[str]:
    """A regex for one path component of a TF glob pattern (``*``, ``?``, ``[...]``, ``[^...]``, ``\\c``)."""
    out, i, n = [], 0, len(component)
    while i < n:
        c = component[i]
        i += 1
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "\\" and i < n:
            out.append(re.escape(component[i]))
            i += 1
        elif c == "[":
            j, body = i, ["^"] if i < n and component[i] == "^" else []
            j += len(body)
            while j < n and component[j] != "]":
                if component[j] == "\\" and j + 1 < n:
                    body.append(re.escape(component[j + 1]))
                    j += 2
                else:
                    body.append("-" if component[j] == "-" else re.escape(component[j]))
                    j += 1
            if j >= n:  # no closing bracket: a literal '['
                out.append(re.escape("["))
            else:
                out.append("[" + "".join(body) + "]")
                i = j + 1
        else:
            out.append(re.escape(c))
    return re.compile("".join(out) + r"\Z", re.DOTALL)


def _glob_one(pattern: str) -> list[str]:
    scheme, rest = file_io._split_scheme(pattern)
    components = rest.split("/")
    first = next((i for i, c in enumerate(components) if any(ch in c for ch in "*?[\\")), None)
    if first is None:
        return [pattern] if file_io.exists(pattern) else []
    base = "/".join(components[:first])
    if not base:
        # The scheme's root, the filesystem's root, or (like TF) "." for a relative local pattern.
        base = scheme if scheme else ("/" if rest.startswith("/") else ".")
    else:
        base = scheme + base
    candidates = [base]
    for component in components[first:]:
        matches = []
        if any(ch in component for ch in "*?[\\"):
            regex = _pattern_regex(component)
            for directory in candidates:
                if file_io.isdir(directory):
                    names = [name for name in file_io.listdir(directory) if regex.match(name)]
                    matches.extend(file_io._child(directory, name) for name in names)
        else:
            matches = [p for p in (file_io._child(d, component) for d in candidates) if file_io.exists(p)]
        candidates = matches
    return sorted(candidates)


def glob(pattern: Any) -> list[str]:
    """The paths matching ``pattern`` (or each of an iterable of patterns), spelled like the pattern.

    ``*`` matches any run of characters but ``/``, ``?`` one such character, ``[abc]`` / ``[^abc]`` /
    ``[a-z]`` one of (or none of) a set, and ``\\c`` the character ``c``. A relative pattern whose first
    component has a wildcard is matched in ``.`` and its matches start with ``./``, as in TF.

    Example:
        >>> for name in ("a.txt", "b.txt", "c.csv"):
        ...     file_io.write_string_to_file("memory://file_io_doc_glob/" + name, name)
        >>> glob("memory://file_io_doc_glob/*.txt")
        ['memory://file_io_doc_glob/a.txt', 'memory://file_io_doc_glob/b.txt']
        >>> file_io.rmtree("memory://file_io_doc_glob")
    """
    if isinstance(pattern, str | bytes | os.PathLike):
        return _glob_one(file_io._fspath(pattern))
    return [match for p in pattern for match in _glob_one(file_io._fspath(p))]


__all__ = ["glob"]
