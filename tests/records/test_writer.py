"""The one writer never renames over a device, a FIFO or /dev/stdout (issue 25: B07)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from leaderboard_audit.records import writer
from leaderboard_audit.records.writer import atomic_write_bytes

posix = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX only")


@posix
def test_a_fifo_target_is_written_in_place_not_replaced(tmp_path):
    fifo = tmp_path / "report.json"
    os.mkfifo(fifo)
    got: list[bytes] = []
    opened = threading.Event()

    def reader() -> None:  # non-blocking: EOF before any writer came is not the end
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        opened.set()
        data = b""
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                chunk = None
            if chunk == b"" and data:
                break
            if not chunk:
                time.sleep(0.01)
            data += chunk or b""
        os.close(fd)
        got.append(data)

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    opened.wait(5)
    atomic_write_bytes(fifo, b"report\n")
    t.join(5)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and got == [b"report\n"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]  # no temp file beside it


@posix
def test_a_fifo_without_a_reader_is_an_oserror_not_a_hang(tmp_path):
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    with pytest.raises(OSError):
        atomic_write_bytes(fifo, b"x")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="mknod needs root")
def test_a_character_device_is_written_in_place_not_replaced(tmp_path):
    null = tmp_path / "null"  # a /dev/null of our own: the machine's is never touched
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    atomic_write_bytes(null, b"x" * 35000)
    assert stat.S_ISCHR(os.lstat(null).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null"]


@posix
def test_the_system_dev_null_and_dev_stdout_count_as_in_place_targets():
    assert writer._in_place_target(Path("/dev/null"))
    if os.path.islink("/dev/stdout"):
        assert writer._in_place_target(Path("/dev/stdout"))


@posix
def test_a_link_into_proc_is_written_through_and_stays_a_link(tmp_path):
    out = tmp_path / "out.txt"
    link = tmp_path / "stdout"
    code = (
        "import os, sys; os.symlink('/proc/self/fd/1', sys.argv[1]);"
        "from leaderboard_audit.records.writer import atomic_write_bytes; atomic_write_bytes(sys.argv[1], b'hello')"
    )
    with open(out, "wb") as fh:
        subprocess.run([sys.executable, "-c", code, str(link)], stdout=fh, check=True)
    assert out.read_bytes() == b"hello" and link.is_symlink()


def test_a_link_to_a_regular_file_is_still_replaced_atomically(tmp_path):
    target = tmp_path / "target.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    atomic_write_bytes(link, b"new")
    assert not link.is_symlink() and link.read_bytes() == b"new" and target.read_text() == "old"
