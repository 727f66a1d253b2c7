"""``GFile``: a file on any fsspec filesystem, opened, read and written with TF's semantics.

Example:
    >>> with GFile("memory://gfile_module_doc/a.txt", "w") as f:
    ...     f.write("one\\ntwo\\n")
    >>> [line for line in GFile("memory://gfile_module_doc/a.txt")]
    ['one\\n', 'two\\n']
"""

from __future__ import annotations

from typing import Any

from dtf_notebook import errors
from dtf_notebook.lib.io import file_io

_MODES = ("r", "w", "a", "r+", "w+", "a+")


class GFile:
    """A file on any filesystem, with TF's ``GFile`` behaviour.

    The file is opened when first read or written (so a file opened for writing and never written is
    not created), reading and writing use separate positions as in TF, and ``write`` takes ``str`` or
    ``bytes`` in either mode. Text mode reads ``str`` (UTF-8, no newline translation); binary mode
    (``"rb"``, ``"wb"``, ...) reads ``bytes``.

    Args:
        name: A local path or fsspec URL.
        mode: One of ``r``, ``w``, ``a``, ``r+``, ``w+``, ``a+``, optionally with ``b``. ``w`` and ``r+``
            truncate on first write; ``a`` appends.

    Raises:
        InvalidArgumentError: an unknown ``mode``.

    Example:
        >>> with GFile("memory://gfile_doc/log.txt", "w") as f:
        ...     f.write("first\\n")
        ...     f.write(b"second\\n")
        >>> GFile("memory://gfile_doc/log.txt").readlines()
        ['first\\n', 'second\\n']
        >>> file_io.rmtree("memory://gfile_doc")
    """

    def __init__(self, name: Any, mode: str = "r") -> None:
        self._name = name
        self._path = file_io._fspath(name)
        self._mode = mode
        self._binary = "b" in mode
        plain = mode.replace("b", "")
        if plain not in _MODES:
            raise errors.InvalidArgumentError(None, None, "mode is not 'r' or 'w' or 'a' or 'r+' or 'w+' or 'a+'")
        self._readable = plain in ("r", "r+", "a+", "w+")
        self._writable = plain in ("a", "w", "r+", "a+", "w+")
        self._append = "a" in plain
        self._reader: Any = None
        self._writer: Any = None

    @property
    def name(self) -> Any:
        """The name the file was opened with."""
        return self._name

    @property
    def mode(self) -> str:
        """The mode the file was opened with."""
        return self._mode

    def _read_handle(self) -> Any:
        if self._reader is None:
            if not self._readable:
                raise errors.PermissionDeniedError(None, None, "File isn't open for reading")
            fs, fs_path = file_io._filesystem(self._path)
            with file_io._translated(self._path):
                if fs.isdir(fs_path):
                    raise IsADirectoryError(self._path)
                self._reader = fs.open(fs_path, "rb")
        return self._reader

    def _write_handle(self) -> Any:
        if self._writer is None:
            if not self._writable:
                raise errors.PermissionDeniedError(None, None, "File isn't open for writing")
            fs, fs_path = file_io._filesystem(self._path)
            with file_io._translated(self._path):
                if fs.isdir(fs_path):
                    raise IsADirectoryError(self._path)
                self._writer = fs.open(fs_path, "ab" if self._append else "wb")
        return self._writer

    def _value(self, data: bytes) -> str | bytes:
        return data if self._binary else data.decode("utf-8")

    def size(self) -> int:
        """The file's size in bytes."""
        return file_io.stat(self._path).length

    def write(self, file_content: Any) -> None:
        """Appends ``file_content`` (``str`` or ``bytes``) at the end of what this object wrote."""
        handle = self._write_handle()
        with file_io._translated(self._path):
            handle.write(file_io._as_bytes(file_content))

    def read(self, n: int = -1) -> str | bytes:
        """Reads ``n`` bytes (all the rest when ``n`` is -1) from the read position."""
        handle = self._read_handle()
        with file_io._translated(self._path):
            return self._value(handle.read() if n == -1 else handle.read(n))

    def readline(self) -> str | bytes:
        """The next line, with its ``\\n``; empty at the end of the file."""
        handle = self._read_handle()
        with file_io._translated(self._path):
            return self._value(handle.readline())

    def readlines(self) -> list[str | bytes]:
        """All the remaining lines."""
        lines = []
        while line := self.readline():
            lines.append(line)
        return lines

    def seek(self, offset: int | None = None, whence: int = 0, position: int | None = None) -> None:
        """Moves the read position: ``whence`` 0 from the start, 1 from here, 2 from the end."""
        if offset is None and position is None:
            raise TypeError("seek(): offset argument required")
        if offset is not None and position is not None:
            raise TypeError("seek(): offset and position may not be set simultaneously.")
        offset = position if offset is None else offset
        handle = self._read_handle()
        if whence == 1:
            offset += handle.tell()
        elif whence == 2:
            offset += self.size()
        elif whence != 0:
            raise errors.InvalidArgumentError(
                None, None, f"Invalid whence argument: {whence}. Valid values are 0, 1, or 2."
            )
        with file_io._translated(self._path):
            handle.seek(offset)

    def tell(self) -> int:
        """The read position (the write position in write-only modes)."""
        handle = self._read_handle() if self._readable else self._write_handle()
        return handle.tell()

    def flush(self) -> None:
        """Hands what was written to the filesystem (visible to readers; not necessarily on disk)."""
        if self._writer is not None:
            with file_io._translated(self._path):
                self._writer.flush()

    def close(self) -> None:
        """Closes the file; written data is complete once this returns."""
        reader, self._reader = self._reader, None
        writer, self._writer = self._writer, None
        with file_io._translated(self._path):
            if reader is not None:
                reader.close()
            if writer is not None:
                writer.close()

    def seekable(self) -> bool:
        """True: GFiles support ``seek`` and ``tell``."""
        return True

    def __enter__(self) -> GFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> GFile:
        return self

    def __next__(self) -> str | bytes:
        line = self.readline()
        if not line:
            raise StopIteration
        return line


class FastGFile(GFile):
    """TF1's deprecated ``FastGFile``: the same as :class:`GFile`.

    Example:
        >>> issubclass(FastGFile, GFile)
        True
    """


__all__ = ["FastGFile", "GFile"]
