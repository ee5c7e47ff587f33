"""How supervisord keeps the stack's processes: the restart policy, and the ``supervisord.conf`` it is
written into, generated from the Procfile (one ``[program:NAME]`` per line, run by
``deployments.stack.run``).

A process that exits is started again and the others keep running (``autorestart``). A start counts once
the process has stayed up ``START_SECONDS``; one that dies sooner is retried after 1, 2, 3, ... s (BACKOFF)
and given up after ``START_RETRIES`` such tries (FATAL, shown by ``stack status``). Stops and kills reach
the process's whole group (``stopasgroup``/``killasgroup``): a worker's flow runs, a shell's children.
"""

from __future__ import annotations

import shlex
import sys

from deployments.stack.layout import PROJECT_ROOT, StackLayout, process_names

CONFIG_FILE = "supervisord.conf"
LOG_FILE = "supervisord.log"
PID_FILE = "supervisord.pid"
START_SECONDS = 10
"""Up this long = started; a death sooner is a failed start, retried with backoff. At 3 s, on a loaded machine
(load ~14 on 2 cores) the S3 line's two Python start-ups took longer than that before it found its port busy, so
each death counted as a crash after a start and was restarted at once, never backing off. The lines that wait
for others (worker, replicas) wait while up, so this does not limit how long they may wait."""
START_RETRIES = 5
"""Quick deaths in a row before supervisord gives up (FATAL): 1+2+3+4+5 s of backoff."""
STOP_WAIT_SECONDS = {"worker": 15}
"""SIGTERM, then SIGKILL after this long (default ``DEFAULT_STOP_WAIT_S``). A Prefect worker stops on SIGTERM by
sending itself SIGINT, which a process started in the background ignores unless ``deployments.stack.run`` restores
it (decision 0047); its stop then waits for its runs' clean-up, hence the longer wait."""
DEFAULT_STOP_WAIT_S = 10
PROGRAM_LOG_MAX_BYTES = "20MB"


def _value(text: str) -> str:
    """A value for supervisord's config: its ``%(name)s`` interpolation sees ``%%`` as a literal ``%``."""
    return text.replace("%", "%%")


def program_section(name: str, layout: StackLayout, priority: int) -> str:
    command = shlex.join([sys.executable, "-m", "deployments.stack.run", name])
    return (
        f"[program:{name}]\n"
        f"command={_value(command)}\n"
        f"directory={_value(str(PROJECT_ROOT))}\n"
        f"priority={priority}\n"
        "autostart=true\n"
        "autorestart=true\n"
        f"startsecs={START_SECONDS}\n"
        f"startretries={START_RETRIES}\n"
        "stopsignal=TERM\n"
        f"stopwaitsecs={STOP_WAIT_SECONDS.get(name, DEFAULT_STOP_WAIT_S)}\n"
        "stopasgroup=true\n"
        "killasgroup=true\n"
        "redirect_stderr=true\n"
        f"stdout_logfile={_value(str(layout.logs / f'{name}.log'))}\n"
        f"stdout_logfile_maxbytes={PROGRAM_LOG_MAX_BYTES}\n"
        "stdout_logfile_backups=2\n"
    )


def config(layout: StackLayout) -> str:
    """The whole ``supervisord.conf`` of ``layout``: the daemon (its log is never rotated: ``stack status``
    reads each process's spawns and exits from it), its XML-RPC socket, and one program per Procfile line,
    prioritised in Procfile order (stopped in reverse: replicas first, Redis last)."""
    socket = _value(str(layout.supervisor_socket))
    head = (
        "[supervisord]\n"
        "nodaemon=true\n"
        f"logfile={_value(str(layout.logs / LOG_FILE))}\n"
        "logfile_maxbytes=0\n"
        "loglevel=info\n"
        f"pidfile={_value(str(layout.directory / PID_FILE))}\n"
        f"childlogdir={_value(str(layout.logs))}\n"
        f"directory={_value(str(PROJECT_ROOT))}\n"
        "\n"
        "[unix_http_server]\n"
        f"file={socket}\n"
        "chmod=0700\n"
        "\n"
        "[rpcinterface:supervisor]\n"
        "supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface\n"
        "\n"
        "[supervisorctl]\n"
        f"serverurl=unix://{socket}\n"
    )
    programs = [program_section(name, layout, 10 * (i + 1)) for i, name in enumerate(process_names())]
    return "\n".join([head, *programs])
