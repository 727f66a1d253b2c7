"""``tf.flags`` / ``tf.app.flags``: absl's flags, as TF1 scripts define and read them.

Everything of ``absl.flags`` is here, with TF's two differences: ``DEFINE_string``, ``DEFINE_integer``,
``DEFINE_float`` and ``DEFINE_boolean`` also take TF1's old keyword names (``flag_name``,
``default_value``, ``docstring``), and reading a flag of :data:`FLAGS` before the flags were parsed
parses ``sys.argv`` first, where absl's own ``FLAGS`` raises ``UnparsedFlagAccessError``. ``FLAGS`` is
absl's global ``FlagValues``, so absl flags and ``tf.flags`` flags live together, as in TF.

Example:
    >>> values = _FlagValuesWrapper(FlagValues())
    >>> _ = DEFINE_integer("task_index", 0, "Index of the task in its job.", flag_values=values)
    >>> _ = values(["worker.py", "--task_index=3"])
    >>> values.task_index
    3
"""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import Callable
from typing import Any

from absl.flags import *  # noqa: F403
from absl.flags import FLAGS as _ABSL_FLAGS
from absl.flags import DEFINE_boolean as _DEFINE_boolean
from absl.flags import DEFINE_float as _DEFINE_float
from absl.flags import DEFINE_integer as _DEFINE_integer
from absl.flags import DEFINE_string as _DEFINE_string
from absl.flags import FlagValues, disclaim_key_flags
from absl.flags import __all__ as _ABSL_ALL

# Flags defined through this module's wrappers belong to the module that called them (for --help).
disclaim_key_flags()

_RENAMED_ARGUMENTS = {"flag_name": "name", "default_value": "default", "docstring": "help"}


def _accept_old_names(define: Callable[..., Any]) -> Callable[..., Any]:
    """``define`` taking TF1's old keyword names too (with a warning, as TF gives)."""

    @functools.wraps(define)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        old = [name for name in _RENAMED_ARGUMENTS if name in kwargs]
        for name in old:
            kwargs[_RENAMED_ARGUMENTS[name]] = kwargs.pop(name)
        if old:  # on the root logger, where TF logs this warning
            logging.warning(
                "Use of the keyword argument names (flag_name, default_value, docstring) is deprecated, "
                "please use (name, default, help) instead."
            )
        return define(*args, **kwargs)

    return wrapper


DEFINE_string = _accept_old_names(_DEFINE_string)
DEFINE_boolean = _accept_old_names(_DEFINE_boolean)
DEFINE_bool = DEFINE_boolean
DEFINE_float = _accept_old_names(_DEFINE_float)
DEFINE_integer = _accept_old_names(_DEFINE_integer)


class _FlagValuesWrapper:
    """absl's ``FlagValues`` that parses ``sys.argv`` when a flag is read before parsing, as TF1's ``FLAGS``.

    Everything else goes to the wrapped ``FlagValues`` (its class, methods, ``flag_values_dict()``, ...).

    Example:
        >>> import sys
        >>> from unittest import mock
        >>> values = _FlagValuesWrapper(FlagValues())
        >>> _ = DEFINE_string("job_name", "worker", "The task's job.", flag_values=values)
        >>> with mock.patch.object(sys, "argv", ["trainer.py", "--job_name=ps"]):
        ...     values.is_parsed(), values.job_name, values.is_parsed()
        (False, 'ps', True)
    """

    def __init__(self, flag_values: FlagValues) -> None:
        self.__dict__["_wrapped"] = flag_values

    def __getattribute__(self, name: str) -> Any:
        if name == "__dict__":
            return super().__getattribute__(name)
        return self.__dict__["_wrapped"].__getattribute__(name)

    def __getattr__(self, name: str) -> Any:
        # Only flags get here: they are not attributes of FlagValues, so __getattribute__ above failed.
        # Dunder probes (inspect.unwrap, copy, pickle) are never flags and must not parse sys.argv.
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        wrapped = self.__dict__["_wrapped"]
        if not wrapped.is_parsed():
            wrapped(sys.argv)
        return wrapped.__getattr__(name)

    def __setattr__(self, name: str, value: Any) -> None:
        self.__dict__["_wrapped"].__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        self.__dict__["_wrapped"].__delattr__(name)

    def __dir__(self) -> list[str]:
        return self.__dict__["_wrapped"].__dir__()

    def __getitem__(self, name: str) -> Any:
        return self.__dict__["_wrapped"].__getitem__(name)

    def __setitem__(self, name: str, flag: Any) -> None:
        self.__dict__["_wrapped"].__setitem__(name, flag)

    def __contains__(self, name: str) -> bool:
        return self.__dict__["_wrapped"].__contains__(name)

    def __len__(self) -> int:
        return self.__dict__["_wrapped"].__len__()

    def __iter__(self) -> Any:
        return self.__dict__["_wrapped"].__iter__()

    def __str__(self) -> str:
        return self.__dict__["_wrapped"].__str__()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__dict__["_wrapped"].__call__(*args, **kwargs)


#: The process's flags (absl's global ``FlagValues``), parsed from ``sys.argv`` on first read if need be.
FLAGS = _FlagValuesWrapper(_ABSL_FLAGS)

__all__ = list(_ABSL_ALL)
