"""Files the commands write (``fmt``'s rewrites, the HTML report): written whole or not at all, only where asked,
never over an input, keeping what the file already is (its mode, owner and group, its other hard links)."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from engine.errors import UsageError

if TYPE_CHECKING:
    from engine.render import report

    html_page = report.report_html
else:

    def html_page(*args: Any, **kwargs: Any) -> str:
        """engine.render.report.report_html, imported when a page is written: the templates, the sweep's
        and the diff's renderers stay unloaded for a verb run without --report."""
        from engine.render.report import report_html

        return report_html(*args, **kwargs)


def replace_file(path: Path, data: bytes, mode: int | None = None) -> None:
    """Give the file at ``path`` the content ``data``. An existing file keeps what it is: a symlink is written
    through to its target, the mode, owner and group stay (where allowed), and a file with several hard links is
    written in place (a rename would split it from its other names: they would keep the old content). Otherwise
    the data goes to a temporary file beside it, renamed over the old one, so a failure leaves the old file whole.
    A new file gets ``mode`` less the umask (default 0666 less the umask, as any program's new file)."""
    target = Path(os.path.realpath(path))
    info = target.stat() if target.exists() else None
    if info is not None and info.st_nlink > 1:
        with open(target, "r+b") as handle:
            handle.write(data)
            handle.truncate()
        return
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if info is None:
            os.chmod(tmp, (0o666 if mode is None else mode) & ~_umask())
        else:
            try:  # the owner and group first: changing them clears the setuid and setgid bits the mode then sets
                os.chown(tmp, info.st_uid, info.st_gid)
            except OSError:
                with contextlib.suppress(OSError):
                    os.chown(tmp, -1, info.st_gid)  # not the owner's to give away: the group, where allowed
            os.chmod(tmp, stat.S_IMODE(info.st_mode))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_report(path: str | None, html: Callable[[], str], option: str = "--report") -> None:
    """The HTML report (``html`` makes it, only when asked for) written as ``replace_file`` writes; a path that
    is one of the command's inputs (the same file, by inode) or not a regular file is refused before anything
    is made."""
    if path is None:
        return
    target = Path(path)
    if not target.parent.is_dir():
        raise UsageError(f"{option}: no such directory: {target.parent}")
    if target.is_symlink() or (target.exists() and not target.is_file()):  # a device, a FIFO, a link elsewhere
        raise UsageError(f"{option}: {path} exists and is not a regular file; give the path of a file to write")
    refuse_inputs(target, option)
    data = html().encode("utf-8")
    try:
        replace_file(target, data)
    except OSError as exc:
        raise UsageError(f"{option}: cannot write {path}: {exc.strerror or exc}") from None


def refuse_inputs(target: Path, option: str) -> None:
    """A UsageError when ``target`` is one of the files the running command reads: any file its path arguments
    and options name, or finds below the directories they name (links followed), compared by device and inode,
    so that another name or a hard link of an input is refused too."""
    try:
        own = target.stat()
    except OSError:
        return  # nothing there yet: no input it could be
    for given in _given_paths():
        for path in _files(Path(given)):
            with contextlib.suppress(OSError):
                seen = path.stat()
                if (seen.st_dev, seen.st_ino) == (own.st_dev, own.st_ino):
                    also = "" if path == target else f" (as {path})"
                    raise UsageError(f"{option}: {target} is one of the inputs{also}; give another path for the output")


def _given_paths() -> Iterator[str]:
    """The values of the running command's path arguments and options (none outside a command), and the files
    read through options that keep no value of their own: the config file and --control-plane."""
    context = click.get_current_context(silent=True)
    if context is None:
        return
    from engine.cli import options

    kept = (options.config().path, options.control_plane_file())
    yield from (path for path in kept if path)
    for param in context.command.params:
        value = context.params.get(param.name or "")
        if not isinstance(param.type, click.Path) or value is None or param.name == "report_path":
            continue
        for item in value if isinstance(value, (tuple, list)) else [value]:
            if item != "-":
                yield str(item)


def _files(path: Path) -> Iterator[Path]:
    if path.is_dir():
        yield from (p for p in path.rglob("*") if p.is_file())
    else:
        yield path
