"""Check and stop processes by pid, safely against pid reuse.

A cluster file names its task processes by pid, and a pid outlives nothing: once
a process has gone, the system may give its number to an unrelated process. So
every pid is recorded with the process's start time (``/proc/<pid>/stat`` field
22, in clock ticks since boot); a pid whose start time no longer matches is a
different process and counts as gone. Where ``/proc`` is missing, the start time
is ``None`` and only the pid is checked.

Example:
    >>> me = os.getpid()
    >>> pid_running(me, start_ticks(me))
    True
    >>> pid_running(me, -1)          # same pid, another start time: not our process
    False
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterable

__all__ = ["pid_running", "start_ticks", "stop_pids"]


def _stat_fields(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: the fields after it follow the last ')'.
    return text[text.rfind(")") + 2 :].split()


def start_ticks(pid: int) -> int | None:
    """When process ``pid`` started, in clock ticks since boot (None: no such process, or no ``/proc``).

    Example:
        >>> isinstance(start_ticks(os.getpid()), int)
        True
    """
    fields = _stat_fields(pid)
    return int(fields[19]) if fields and len(fields) > 19 else None


def pid_running(pid: int, ticks: int | None = None) -> bool:
    """Whether ``pid`` is a live process (not a zombie), and the one that started at ``ticks`` when given.

    Example:
        >>> pid_running(os.getpid())
        True
    """
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    fields = _stat_fields(pid)
    if fields is None:
        return not os.path.isdir("/proc")  # no /proc on this system: kill(0) is all we know
    if fields[0] in ("Z", "X"):
        return False  # exited, waiting for its parent to collect the exit status
    return ticks is None or int(fields[19]) == ticks


def stop_pids(pids: Iterable[tuple[int, int | None]], grace: float = 5.0, patience: float = 5.0) -> list[int]:
    """Stops processes that are not our children: SIGTERM, then SIGKILL after ``grace`` seconds.

    Args:
        pids: ``(pid, start_ticks)`` pairs (``start_ticks`` None: check the pid only).
        grace: Seconds allowed to exit after SIGTERM.
        patience: Seconds allowed to vanish after SIGKILL.

    Returns:
        The pids still running at the end (empty when every process is gone).

    Example:
        >>> import subprocess, sys
        >>> proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        >>> stop_pids([(proc.pid, start_ticks(proc.pid))])
        []
        >>> proc.wait()
        -15
    """
    alive = [(pid, ticks) for pid, ticks in pids if pid_running(pid, ticks)]
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, patience)):
        for pid, _ in alive:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + wait
        while alive and time.monotonic() < deadline:
            time.sleep(0.02)
            alive = [(pid, ticks) for pid, ticks in alive if pid_running(pid, ticks)]
        if not alive:
            break
    return [pid for pid, _ in alive]
