"""Tells whether this repository is already installed the way scripts/setup.sh installs it, so that a re-run can
skip pip (which takes seconds even when there is nothing to do).

Exit status 0 when the running Python has this repository installed in editable mode, with the version and console
scripts that pyproject.toml names, and every requirement of its dependencies, of the extras named by ``--extras``
(followed through extras of extras, this package's own included) and of the requirements given as arguments is met
by an installed distribution; otherwise status 1 and one line naming what is missing. Only the standard library
and ``packaging`` are used; without ``packaging`` the answer is "not installed", so pip runs.

    python3 scripts/installed.py --extras test,notebook "torch==2.13.0"
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tomllib
from importlib import metadata
from urllib.parse import unquote, urlparse

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def editable_root(name: str) -> str | None:
    """The source folder of the editable install of distribution ``name``, or None when it is not one."""
    try:
        text = metadata.distribution(name).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    if not text:
        return None
    info = json.loads(text)
    if not info.get("dir_info", {}).get("editable"):
        return None
    return os.path.realpath(unquote(urlparse(info["url"]).path))


def unmet(requirements: list[str], project: dict) -> str | None:
    """The first of ``requirements`` (with what they pull in through extras) not met here, or None."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    own = canonicalize_name(project["name"])
    optional = project.get("optional-dependencies", {})
    seen: set[tuple[str, str]] = set()
    todo = [(Requirement(r), "") for r in requirements]
    while todo:
        req, extra = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(req.name)
        try:
            version = metadata.version(req.name)
        except metadata.PackageNotFoundError:
            return f"{req} (not installed)"
        if not req.specifier.contains(version, prereleases=True):
            return f"{req} (installed: {version})"
        for wanted in req.extras:
            if (name, wanted) in seen:
                continue
            seen.add((name, wanted))
            if name == own:
                todo += [(Requirement(r), "") for r in optional.get(wanted, [])]
            else:
                todo += [(Requirement(r), wanted) for r in metadata.requires(req.name) or []]
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--extras", default="", help="comma-separated extras of this package, e.g. test,notebook")
    parser.add_argument("requirements", nargs="*", help="further requirements, e.g. torch==2.13.0")
    args = parser.parse_args(argv)
    with open(os.path.join(REPO_ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    if editable_root(project["name"]) != os.path.realpath(REPO_ROOT):
        print(f"{project['name']} is not installed in editable mode from {REPO_ROOT}")
        return 1
    try:
        import packaging  # noqa: F401
    except ImportError:
        print("the packaging module is missing, so installed versions cannot be compared")
        return 1
    entry_points = metadata.distribution(project["name"]).entry_points
    installed_scripts = {e.name for e in entry_points if e.group == "console_scripts"}
    if missing_scripts := sorted(set(project.get("scripts", {})) - installed_scripts):
        print(f"the installed {project['name']} lacks the console scripts {missing_scripts}")
        return 1
    extras = [e for e in args.extras.split(",") if e]
    own = f"{project['name']}[{','.join(extras)}]" if extras else project["name"]
    wanted = [*args.requirements, *project.get("dependencies", []), f"{own}=={project['version']}"]
    missing = unmet(wanted, project)
    if missing:
        print(f"unmet requirement: {missing}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
