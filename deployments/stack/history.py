"""What happened to each process since ``stack up``, read from supervisord's own log: how often it was
restarted and how it last exited ("SIGKILL at 13:05:02", "exit 1 at ...").

supervisord counts no restarts, and its XML-RPC API gives a killed process's exit as -1 without the
signal. Its log has both: it writes ``spawned: 'NAME' with pid N`` and ``exited: NAME (terminated by SIGKILL;
not expected)`` in the same call that changes the process's state, so no restart is missed however rarely
``status`` looks (sampling pids over XML-RPC would miss a crash loop between two looks). The log is never
rotated (``supervision.config``) and is read from the last ``supervisord started`` line on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

_LINE = re.compile(r"^(?P<at>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),\d+ \w+ (?P<message>.*)$")
_STARTED = re.compile(r"^supervisord started with pid \d+$")
_SPAWNED = re.compile(r"^spawned: '(?P<name>[\w-]+)' with pid (?P<pid>\d+)$")
_EXITED = re.compile(r"^(?P<how>exited|stopped): (?P<name>[\w-]+) \((?P<cause>.*?)(?:; (?:not )?expected)?\)$")
_GAVE_UP = re.compile(r"^gave up: (?P<name>[\w-]+) entered FATAL state")
_SIGNAL = re.compile(r"^terminated by (?P<signal>SIG\w+)")
_STATUS = re.compile(r"^exit status (?P<code>\d+)")


@dataclass(frozen=True)
class Exit:
    """One exit: its cause as supervisord words it ("terminated by SIGKILL", "exit status 1"), when, and
    whether it was a stop asked for (``stack down``, ``supervisorctl stop``)."""

    cause: str
    at: datetime
    requested: bool

    def describe(self) -> str:
        """``SIGKILL at 13:05:02``, ``exit 1 at 13:05:02``."""
        signal = _SIGNAL.match(self.cause)
        code = _STATUS.match(self.cause)
        what = signal["signal"] if signal else f"exit {code['code']}" if code else self.cause
        return f"{what} at {self.at:%H:%M:%S}" + (" (stop)" if self.requested else "")


@dataclass
class ProcessHistory:
    """A process's spawns and exits since supervisord started."""

    spawns: list[tuple[int, datetime]] = field(default_factory=list)
    exits: list[Exit] = field(default_factory=list)
    gave_up: datetime | None = None

    @property
    def restarts(self) -> int:
        """Starts after the first: restarts after an exit and retries after a quick death alike."""
        return max(0, len(self.spawns) - 1)

    @property
    def last_exit(self) -> Exit | None:
        return self.exits[-1] if self.exits else None


def _at(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S")


def read_history(log: Path) -> dict[str, ProcessHistory]:
    """Each process's history from supervisord's log ``log`` since its last start (empty if there is none)."""
    try:
        text = log.read_text(errors="replace")
    except FileNotFoundError:
        return {}
    history: dict[str, ProcessHistory] = {}
    for line in text.splitlines():
        parsed = _LINE.match(line)
        if parsed is None:
            continue
        message, at = parsed["message"], _at(parsed["at"])
        if _STARTED.match(message):
            history = {}
        elif spawned := _SPAWNED.match(message):
            history.setdefault(spawned["name"], ProcessHistory()).spawns.append((int(spawned["pid"]), at))
        elif exited := _EXITED.match(message):
            requested = exited["how"] == "stopped"
            history.setdefault(exited["name"], ProcessHistory()).exits.append(Exit(exited["cause"], at, requested))
        elif gave_up := _GAVE_UP.match(message):
            history.setdefault(gave_up["name"], ProcessHistory()).gave_up = at
    return history
