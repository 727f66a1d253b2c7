"""The OpError family: TensorFlow's error classes and status codes.

Every error raised while running a graph is an :class:`OpError` subclass that
carries the failing node (when known), a plain-words message and TF's
numeric error code, so ``except tf.errors.UnavailableError`` works exactly as
in TF1 scripts.

Example:
    >>> from dtf_notebook import errors
    >>> try:
    ...     raise errors.NotFoundError(None, None, "No such variable: x")
    ... except errors.OpError as e:
    ...     (e.error_code, e.message)
    (5, 'No such variable: x')
"""

from __future__ import annotations

import traceback
from typing import Any

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """A failure while building or running a graph, with TF's error code.

    Args:
        node_def: A plain-dict description of the failing node, or None.
        op: The failing ``Operation``, or None.
        message: What went wrong, in plain words.
        error_code: One of the module's integer codes.

    Example:
        >>> str(OpError(None, None, "boom", UNKNOWN))
        'boom'
    """

    def __init__(self, node_def: Any, op: Any, message: str, error_code: int = UNKNOWN) -> None:
        super().__init__(message)
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = error_code

    @property
    def message(self) -> str:
        return self._message

    @property
    def op(self) -> Any:
        return self._op

    @property
    def node_def(self) -> Any:
        return self._node_def

    @property
    def error_code(self) -> int:
        return self._error_code

    def __reduce__(self):  # keeps errors copyable between threads and processes as plain data
        return (type(self), (self._node_def, None, self._message, self._error_code))

    def __str__(self) -> str:
        if self._op is None or not getattr(self._op, "traceback", None):
            return self._message
        where = "".join(traceback.format_list(self._op.traceback))
        return f"{self._message}\n\nOriginal stack trace for {self._op.name!r}:\n{where}"


def _make(name: str, code: int, doc: str) -> type[OpError]:
    def init(self, node_def: Any, op: Any, message: str, *args: Any) -> None:
        OpError.__init__(self, node_def, op, message, code)

    cls = type(name, (OpError,), {"__init__": init, "__doc__": doc})
    cls.__module__ = __name__
    return cls


CancelledError = _make("CancelledError", CANCELLED, "The operation or step was cancelled.")
UnknownError = _make("UnknownError", UNKNOWN, "An error of unknown kind.")
InvalidArgumentError = _make("InvalidArgumentError", INVALID_ARGUMENT, "An op received an invalid argument.")
DeadlineExceededError = _make("DeadlineExceededError", DEADLINE_EXCEEDED, "A deadline expired first.")
NotFoundError = _make("NotFoundError", NOT_FOUND, "A requested entity (file, node, resource) was not found.")
AlreadyExistsError = _make("AlreadyExistsError", ALREADY_EXISTS, "The entity to create already exists.")
PermissionDeniedError = _make("PermissionDeniedError", PERMISSION_DENIED, "The caller may not do this.")
ResourceExhaustedError = _make("ResourceExhaustedError", RESOURCE_EXHAUSTED, "A resource (memory, quota) ran out.")
FailedPreconditionError = _make(
    "FailedPreconditionError",
    FAILED_PRECONDITION,
    "The system is not in a state to run this (e.g. uninitialized value).",
)
AbortedError = _make("AbortedError", ABORTED, "The operation was aborted, e.g. a peer task restarted.")
OutOfRangeError = _make("OutOfRangeError", OUT_OF_RANGE, "Iterated past the valid range, e.g. a closed queue.")
UnimplementedError = _make("UnimplementedError", UNIMPLEMENTED, "The operation is not supported here.")
InternalError = _make("InternalError", INTERNAL, "An invariant of the runtime was broken.")
UnavailableError = _make("UnavailableError", UNAVAILABLE, "A task or service could not be reached.")
DataLossError = _make("DataLossError", DATA_LOSS, "Unrecoverable data loss or corruption.")
UnauthenticatedError = _make("UnauthenticatedError", UNAUTHENTICATED, "The peer has no valid credentials.")

_CODE_TO_CLASS: dict[int, type[OpError]] = {
    cls(None, None, "").error_code: cls
    for cls in (
        CancelledError,
        UnknownError,
        InvalidArgumentError,
        DeadlineExceededError,
        NotFoundError,
        AlreadyExistsError,
        PermissionDeniedError,
        ResourceExhaustedError,
        FailedPreconditionError,
        AbortedError,
        OutOfRangeError,
        UnimplementedError,
        InternalError,
        UnavailableError,
        DataLossError,
        UnauthenticatedError,
    )
}


def exception_type_from_error_code(error_code: int) -> type[OpError]:
    """Returns the OpError subclass for a numeric code.

    Example:
        >>> exception_type_from_error_code(14).__name__
        'UnavailableError'
    """
    return _CODE_TO_CLASS.get(error_code, UnknownError)


def error_code_from_exception_type(cls: type[OpError]) -> int:
    """Returns the numeric code of an OpError subclass.

    Example:
        >>> error_code_from_exception_type(NotFoundError)
        5
    """
    for code, known in _CODE_TO_CLASS.items():
        if known is cls:
            return code
    return UNKNOWN


def error_from_code(error_code: int, message: str, node_def: Any = None, op: Any = None) -> OpError:
    """Builds the right OpError subclass for a code (used to rebuild errors sent as data).

    Example:
        >>> type(error_from_code(10, "peer restarted")).__name__
        'AbortedError'
    """
    return exception_type_from_error_code(error_code)(node_def, op, message)
