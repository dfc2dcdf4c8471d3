"""Files in and out, the one place for it: bounded reads and the atomic writer.

Reading is capped (a tree file, /dev/zero or a gzip bomb cannot exhaust memory) and understands
`-` (standard input) and gzip (`.json.gz`, recognised by its magic bytes). Writing goes to a
temporary file beside the target, which is renamed over it only when complete: a failure, Ctrl-C
or SIGTERM leaves the old file (or none) and no temporary file. A symlink is followed (its target is
replaced, the link stays), an existing file keeps its permissions, and a device or pipe such as
/dev/null or /dev/stdout is written in place (there is nothing to protect). Outputs are checked
before the work starts, so a typo in `-o` does not cost an hour of search.
"""
from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
import zlib
from pathlib import Path
from typing import BinaryIO, Iterator

MAX_READ_BYTES = 512 * 1024 * 1024  # larger than any tree this tool writes (Mastermind 6x9: about 60 MB)
GZIP_MAGIC = b"\x1f\x8b"


class FileError(ValueError):
    """A file that cannot be read or written; one line for the user."""


def quote(path: str | os.PathLike) -> str:
    """A file name for a message: quoted, with newlines and control characters escaped."""
    return repr(os.fspath(path))


def read_bytes(path: str | os.PathLike, what: str = "file", limit: int = MAX_READ_BYTES) -> bytes:
    """The bytes of a file (`-`: standard input), gunzipped if compressed; FileError beyond `limit`."""
    name = os.fspath(path)
    try:
        if name == "-":
            data = sys.stdin.buffer.read(limit + 1)
        else:
            if os.path.isdir(name):
                raise FileError(f"cannot read {what} {quote(name)}: it is a directory")
            with open(name, "rb") as f:
                data = f.read(limit + 1)
    except OSError as e:
        raise FileError(f"cannot read {what} {quote(name)}: {e.strerror or e}") from None
    if len(data) > limit:
        raise FileError(f"{what} {quote(name)} is larger than {limit // 2**20} MB")
    if data[:2] == GZIP_MAGIC:
        data = _gunzip(data, name, what, limit)
    return data


def _gunzip(data: bytes, name: str, what: str, limit: int) -> bytes:
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(data, limit + 1)
    except zlib.error as e:
        raise FileError(f"{what} {quote(name)}: damaged gzip data ({e})") from None
    if len(out) > limit or inflater.unconsumed_tail:
        raise FileError(f"{what} {quote(name)} unpacks to more than {limit // 2**20} MB")
    return out


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """True when two names are the same existing file."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _resolve(path: str | os.PathLike) -> Path:
    """The file a name writes to: a symlink's target (so the link survives the rename)."""
    return Path(os.path.realpath(os.fspath(path)))


def _in_place(target: Path) -> bool:
    """True for an existing target that is not a regular file (a device, a pipe): written directly."""
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def check_output(path: str | os.PathLike | None, what: str = "output", inputs: tuple = (),
                 regular: bool = False) -> None:
    """Refuse, before any work, an output that cannot be written or would overwrite an input.

    `regular`: the writer needs a real file (SQLite), so devices and pipes are refused too.
    """
    if path is None:
        return
    name = os.fspath(path)
    if name == "":
        raise FileError(f"the {what} file name is empty")
    for source in inputs:
        if source not in (None, "-") and (same_file(name, source) or _resolve(name) == _resolve(source)):
            raise FileError(f"the {what} {quote(name)} is an input file: refusing to overwrite it")
    target = _resolve(name)
    if target.is_dir():
        raise FileError(f"cannot write {what} {quote(name)}: it is a directory")
    if _in_place(target):
        if regular:
            raise FileError(f"cannot write {what} {quote(name)}: it must be a regular file")
        if not os.access(target, os.W_OK):
            raise FileError(f"cannot write {what} {quote(name)}: permission denied")
        return
    folder = target.parent
    if not folder.is_dir():
        raise FileError(f"cannot write {what} {quote(name)}: folder {quote(folder)} does not exist")
    try:  # the only reliable test (root ignores permission bits, a read-only mount does not)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".check")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise FileError(f"cannot write {what} {quote(name)}: {e.strerror or e}") from None


def _mode_for(target: Path) -> int:
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, what: str = "output") -> Iterator[str]:
    """A temporary name beside `path` to fill; renamed over `path` if the block succeeds, removed if not."""
    name = os.fspath(path)
    target = _resolve(name)
    if _in_place(target):
        raise FileError(f"cannot write {what} {quote(name)}: it must be a regular file")
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        os.close(fd)
    except OSError as e:
        raise FileError(f"cannot write {what} {quote(name)}: {e.strerror or e}") from None
    try:
        yield tmp
        os.chmod(tmp, _mode_for(target))
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except OSError as e:
        raise FileError(f"cannot write {what} {quote(name)}: {e.strerror or e}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, what: str = "output") -> Iterator[BinaryIO]:
    """A binary file to write `path` through: a temporary file renamed at the end, or a device in place."""
    name = os.fspath(path)
    target = _resolve(name)
    try:
        if _in_place(target):
            with open(target, "wb") as f:
                yield f
            return
        with atomic_path(name, what) as tmp, open(tmp, "wb") as f:
            yield f
    except OSError as e:
        raise FileError(f"cannot write {what} {quote(name)}: {e.strerror or e}") from None


def write_atomic(path: str | os.PathLike, data: bytes, what: str = "output") -> None:
    """Write `data` to `path` completely or not at all."""
    with atomic_open(path, what) as f:
        f.write(data)


def write_output(path: str | os.PathLike | None, data: bytes, what: str = "output") -> None:
    """Write to `path`, or to standard output when it is None or `-`."""
    if path is None or os.fspath(path) == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        write_atomic(path, data, what)
