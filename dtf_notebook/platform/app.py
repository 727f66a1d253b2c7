"""``tf.app``: ``run`` (absl's ``app.run``, tolerating flags nobody defined) and ``flags``.

Example:
    >>> from dtf_notebook.platform import app
    >>> app.flags.FLAGS is not None
    True
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, NoReturn

from absl import app as _absl_app

from dtf_notebook.platform import flags


def _parse_flags_tolerate_undef(argv: list[str] | None) -> list[str]:
    """Parses the known flags; unknown ones stay in the returned argv (absl's default would exit)."""
    return flags.FLAGS(sys.argv if argv is None else argv, known_only=True)


def run(main: Callable[[list[str]], Any] | None = None, argv: list[str] | None = None) -> NoReturn:
    """Parses the flags, calls ``main(argv)`` and exits with its return value, as TF1's ``tf.app.run``.

    ``argv`` defaults to ``sys.argv``; flags no one defined are left in the ``argv`` that ``main``
    gets. ``--help`` prints the program's flags and exits; a bad flag value prints the error and exits
    with status 1. This is absl's ``app.run``, so absl's logging handler is installed too.

    Args:
        main: The program's main function; ``main`` of the ``__main__`` module when None.
        argv: The command line, program name first.

    Raises:
        SystemExit: always, with ``main``'s return value as the status.

    Example:
        >>> import logging
        >>> root_handlers = logging.getLogger().handlers[:]
        >>> try:
        ...     run(lambda argv: len(argv), argv=["trainer.py", "--not_a_defined_flag=1"])
        ... except SystemExit as e:
        ...     e.code
        2
        >>> logging.getLogger().handlers[:] = root_handlers  # absl's app.run installed its own handler
    """
    main = main or sys.modules["__main__"].main
    _absl_app.run(main=main, argv=argv, flags_parser=_parse_flags_tolerate_undef)


__all__ = ["flags", "run"]
