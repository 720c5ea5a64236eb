"""Write an imported records set as a whole: temp folder + rename, never a mix with an older import."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from ..records.model import Records


class OutputError(ValueError):
    """The output folder cannot be (re)placed; the message is one line."""


def is_imported_records(folder: Path) -> bool:
    """A folder an earlier import wrote: grid.json saying ``imported_from``, benchmark folders of .jsonl."""
    try:
        grid = json.loads((folder / "grid.json").read_text(encoding="utf-8"))
        if not isinstance(grid, dict) or "imported_from" not in grid:
            return False
        for entry in folder.iterdir():
            if entry.name == "grid.json":
                continue
            if entry.is_symlink() or not entry.is_dir():
                return False
            if any(f.suffix != ".jsonl" or f.is_symlink() or not f.is_file() for f in entry.iterdir()):
                return False
    except (OSError, ValueError, RecursionError):
        return False
    return True


def check_output(out: Path) -> None:
    """Refuse an output that is not a folder we may replace (raises OutputError)."""
    if out.is_symlink():
        raise OutputError(f"-o {out} is a symbolic link; give a real folder")
    if not out.exists():
        return
    if not out.is_dir():
        raise OutputError(f"-o {out} exists and is not a folder")
    if any(out.iterdir()) and not is_imported_records(out):
        raise OutputError(
            f"-o {out} is a non-empty folder that does not hold an earlier import; "
            "refusing to replace it (choose a new or empty folder, or delete it)"
        )


def write_import(records: Records, out: str | os.PathLike[str]) -> Path:
    """Write ``records`` to ``out`` as one unit: readers see the old set or the new one, never a mix.

    Raises OutputError for an output we must not replace, RecordsError for names that cannot
    be file names, OSError when the folder cannot be written.
    """
    from ..records import write_records

    out = Path(out)
    check_output(out)
    parent = out.absolute().parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=parent))
    try:
        write_records(records, tmp)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o777 & ~mask)  # mkdtemp makes it private
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=parent))
            os.rename(out, old / "set")
            try:
                os.rename(tmp, out)
            except BaseException:
                os.rename(old / "set", out)
                raise
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out
