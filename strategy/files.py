"""Files in and out, the one place for it: bounded reads and the atomic writer.

Reading is capped (a tree file, /dev/zero or a gzip bomb cannot exhaust memory) and understands
`-` (standard input) and gzip (`.json.gz`, recognised by its magic bytes; every member is read, as `gzip -dc`
does, and anything after the last one is refused). What a file unpacks to is capped by what was read too
(`MAX_UNPACK_RATIO` times it): memory follows the bytes a file holds, not what they expand to. Writing goes to a
temporary file beside the target, which is renamed over it only when complete: a failure, Ctrl-C
or SIGTERM leaves the old file (or none) and no temporary file. A symlink is followed (its target is
replaced, the link stays), an existing file keeps its permissions, and a device or pipe such as
/dev/null or /dev/stdout is written in place (there is nothing to protect). Outputs are checked
before the work starts, so a typo in `-o` does not cost an hour of search, and no file is named for two jobs
(`check_distinct`). Text from a file is escaped before it reaches a terminal (`printable`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import sys
import tempfile
import zlib
from pathlib import Path
from typing import BinaryIO, Iterator, Sequence

MAX_READ_BYTES = 512 * 1024 * 1024  # larger than any tree this tool writes (Mastermind 6x9: about 60 MB)
# a gzipped file unpacks to at most this many times its size (or MIN_UNPACK_BYTES): the trees this tool writes
# gzip 6 to 12 times smaller; a file that unpacks a thousandfold is a bomb, however valid what it unpacks to
MAX_UNPACK_RATIO = 64
MIN_UNPACK_BYTES = 1 << 20
MAX_GZIP_MEMBERS = 10_000  # bgzip's 64 kB members of a 512 MB file: 8192
GZIP_BLOCK = 1 << 16
GZIP_MAGIC = b"\x1f\x8b"


class FileError(ValueError):
    """A file that cannot be read or written; one line for the user."""


def file_sha256(path: str | os.PathLike) -> str:
    """The SHA-256 of a file's bytes as they are (gzipped or not): what a proof that relies on the file names."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def quote(path: str | os.PathLike) -> str:
    """A file name for a message: quoted, with newlines and control characters escaped."""
    return repr(os.fspath(path))


def printable(text: str) -> str:
    """Text for a terminal: every character that is not printable (ESC and the other control characters, newlines
    and tabs, DEL, the C1 controls, bidirectional and other format characters) written as its Python escape
    (\\x1b, \\n, \\u202e), so that a string from a file can neither drive the terminal nor start a line of its own."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def read_bytes(path: str | os.PathLike, what: str = "file", limit: int = MAX_READ_BYTES) -> bytes | bytearray:
    """The bytes of a file (`-`: standard input), gunzipped if compressed; FileError beyond `limit`."""
    name = os.fspath(path)
    try:
        if name == "-":
            data = _read_at_most(sys.stdin.buffer, limit + 1)
        else:
            if os.path.isdir(name):
                raise FileError(f"cannot read {what} {quote(name)}: it is a directory")
            with open(name, "rb") as f:
                data = _read_at_most(f, limit + 1)
    except OSError as e:
        raise FileError(f"cannot read {what} {quote(name)}: {e.strerror or e}") from None
    if len(data) > limit:
        raise FileError(f"{what} {quote(name)} is larger than {limit // 2**20} MB")
    if data[:2] == GZIP_MAGIC:
        data = _gunzip(data, name, what, unpack_limit(len(data), limit))
    return data


def _read_at_most(f: BinaryIO, most: int) -> bytes | bytearray:
    """Up to `most` bytes of a file, taking memory for what it holds, not for `most` (`read(most)` reserves it all
    first: 512 MB of address space for every tree read); a pipe or a device is read a block at a time into one
    growing buffer (no second copy)."""
    info = os.fstat(f.fileno())
    if stat.S_ISREG(info.st_mode):
        return f.read(min(most, info.st_size + 1))  # + 1: a file that grew meanwhile is still seen too large
    data = bytearray()
    while len(data) < most:
        block = f.read(min(1 << 20, most - len(data)))
        if not block:
            break
        data += block
    return data


def unpack_limit(packed: int, limit: int = MAX_READ_BYTES) -> int:
    """The most that `packed` compressed bytes may unpack to: MAX_UNPACK_RATIO times them (at least
    MIN_UNPACK_BYTES), and never beyond `limit`."""
    return min(limit, max(MIN_UNPACK_BYTES, MAX_UNPACK_RATIO * packed))


def _size(n: int) -> str:
    return f"{n / 2**20:.1f} MB" if n >= 2**20 else f"{n:,} bytes"


def _gunzip(data: bytes | bytearray, name: str, what: str, limit: int) -> bytes:
    """Every gzip member of `data` unpacked and joined (as `gzip -dc` does), at most `limit` bytes in all; anything
    after the last member is refused (gzip itself only warns, and a reader would drop it unseen). The input is fed
    in blocks, so that a file of many small members costs a block per member, not a copy of the rest."""
    parts: list[bytes] = []
    view = memoryview(data)
    size = pos = members = 0
    while pos < len(data):
        if data[pos : pos + 2] != GZIP_MAGIC:
            raise FileError(f"{what} {quote(name)}: {len(data) - pos:,} bytes after the gzip data, which are not gzip")
        members += 1
        if members > MAX_GZIP_MEMBERS:
            raise FileError(f"{what} {quote(name)} holds more than {MAX_GZIP_MEMBERS:,} gzip members")
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        while not inflater.eof:
            if pos >= len(data):
                raise FileError(f"{what} {quote(name)}: the gzip data is cut short")
            block = view[pos : pos + GZIP_BLOCK]
            try:
                out = inflater.decompress(block, limit - size + 1)
            except zlib.error as e:
                raise FileError(f"{what} {quote(name)}: damaged gzip data ({e})") from None
            size += len(out)
            if size > limit or inflater.unconsumed_tail:
                raise FileError(
                    f"{what} {quote(name)} unpacks to more than {_size(limit)}"
                    + (
                        ""
                        if limit >= MAX_READ_BYTES
                        else f", {MAX_UNPACK_RATIO} times its {_size(len(data))}: not a tree this tool wrote"
                    )
                )
            parts.append(out)
            pos += len(block) - len(inflater.unused_data)
    return b"".join(parts)


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """True when two names are the same existing file."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _identity(name: str) -> tuple:
    """What a name stands for: an existing file's device and inode (through links, hard or symbolic), else the
    path it would be created at."""
    try:
        st = os.stat(name)
        return ("file", st.st_dev, st.st_ino)
    except OSError:
        return ("path", str(_resolve(name)))


def check_distinct(named: Sequence[tuple[str, str | os.PathLike | None]], read_only: Sequence[str] = ()) -> None:
    """Refuse, before any work, two options that name one file (`named`: (option, file name) pairs; None and `-`,
    the standard streams, are skipped, and so is /dev/null, which keeps nothing). A file does one job: `-o s.db
    --store s.db` would replace the store with the tree, `--partial` or `--log` on the store or the tree would
    overwrite one with the other. Options in `read_only` (input trees) may share a file with each other (a tree
    compared with itself), never with an option that writes."""
    seen: dict[tuple, tuple[str, str]] = {}
    devnull = _identity(os.devnull)
    for option, path in named:
        if path is None or os.fspath(path) in ("-", ""):
            continue
        name = os.fspath(path)
        key = _identity(name)
        if key == devnull:
            continue
        if key in seen and not (seen[key][0] in read_only and option in read_only):
            first, first_name = seen[key]
            names = quote(name) if first_name == name else f"{quote(first_name)} and {quote(name)}"
            raise FileError(f"{first} and {option} name the same file ({names}): one file cannot do both jobs")
        seen.setdefault(key, (option, name))


STORE_SIDE_FILES = ("-wal", "-shm", "-journal")  # what SQLite keeps beside a store while it writes


def store_files(option: str, store: str | None) -> list[tuple[str, str | None]]:
    """`check_distinct`'s pairs for a store: the store and the files SQLite keeps beside it, which it deletes or
    rewrites as it goes (a tree named s.db-wal beside --store s.db would be lost)."""
    if store is None or store in ("-", ""):
        return [(option, store)]
    beside = {store, os.path.realpath(store)}  # SQLite keeps them beside the file a link names
    return [(option, store), *((option, f"{name}{side}") for name in sorted(beside) for side in STORE_SIDE_FILES)]


def valid_text(text: str) -> str:
    """Text that any JSON writer takes: the bytes of a file name that are not UTF-8 (the surrogates os.fsdecode
    gave them) as backslash escapes."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def printable_name(path: str | os.PathLike) -> str:
    """A file's name (no folder) as `valid_text`, for a record."""
    return valid_text(os.path.basename(os.fspath(path)))


def _resolve(path: str | os.PathLike) -> Path:
    """The file a name writes to: a symlink's target (so the link survives the rename)."""
    return Path(os.path.realpath(os.fspath(path)))


def _in_place(name: str | os.PathLike) -> bool:
    """True for an existing file that is not a regular one (a device, a pipe): written directly. Asked of the name
    itself, not of its resolved path: /dev/stdout resolves to /proc/self/fd/1, whose link to a pipe names no path."""
    try:
        mode = os.stat(name).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def check_output(
    path: str | os.PathLike | None, what: str = "output", inputs: tuple = (), regular: bool = False
) -> None:
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
    if _in_place(name):
        if regular:
            raise FileError(f"cannot write {what} {quote(name)}: it must be a regular file")
        if not os.access(name, os.W_OK):
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
    if _in_place(name):
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
    """A binary file to write `path` through: a temporary file renamed at the end, a device in place, or standard
    output for `-` (as every command's -o takes it)."""
    name = os.fspath(path)
    try:
        if name == "-":
            sys.stdout.flush()  # what was printed before comes first
            yield sys.stdout.buffer
            sys.stdout.buffer.flush()
            return
        if _in_place(name):
            with open(name, "wb") as f:
                yield f
            return
        with atomic_path(name, what) as tmp, open(tmp, "wb") as f:
            yield f
    except BrokenPipeError:  # a pipe's reader left (`-o /dev/stdout | head`): stop quietly, as on standard output
        raise
    except OSError as e:
        raise FileError(f"cannot write {what} {quote(name)}: {e.strerror or e}") from None


def write_atomic(path: str | os.PathLike, data: bytes, what: str = "output") -> None:
    """Write `data` to `path` completely or not at all."""
    with atomic_open(path, what) as f:
        f.write(data)
