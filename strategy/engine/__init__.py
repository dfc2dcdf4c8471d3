"""The compiled kernels (numba) and their Python face: exact search and its bounds (exact, searcher), greedy
scoring (greedy), the feedback table (table), probe symmetry (symmetry) and noisy-answer scoring (noisy).

numba keys a cached function on its own source file only: a kernel that calls a compiled function of another
module keeps running the callee's old code after that module alone is edited. So before any kernel is
compiled, this package points numba's cache at a folder named by a hash of every compiled source (the modules
of this package and `rules.py`, whose `feedback` is compiled into the table): any edit, a `git pull` or an
upgrade gives a fresh folder, never a stale kernel. A `NUMBA_CACHE_DIR` set by the user is left alone.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from types import ModuleType

_HERE = Path(__file__).resolve().parent
COMPILED_SOURCES = (*sorted(_HERE.glob("*.py")), _HERE.parent / "rules.py")
KEPT_CACHES = 6  # cache folders of other sources kept beside the current one (the most recently used)


def source_key() -> str:
    """A hash of every compiled source: the name of this version's numba cache folder."""
    h = hashlib.sha256()
    for path in COMPILED_SOURCES:
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def cache_root() -> Path:
    """Where the cache folders live: $XDG_CACHE_HOME/strategy/numba (~/.cache by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "strategy" / "numba"


def _use_keyed_cache() -> None:
    """Point numba (in this process and the workers it starts) at this version's cache folder, and drop the
    folders of versions not used for a while."""
    root = cache_root()
    given = os.environ.get("NUMBA_CACHE_DIR")
    if given and Path(given).parent != root:  # the user's own choice (a parent process of ours sets one of ours)
        return
    folder = root / source_key()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        os.utime(folder)
        others = sorted((p for p in root.iterdir() if p.is_dir() and p != folder), key=lambda p: p.stat().st_mtime)
        for old in others[:-KEPT_CACHES] if len(others) > KEPT_CACHES else []:
            shutil.rmtree(old, ignore_errors=True)
    except OSError:
        return  # an unwritable home: numba's own default (beside the sources) still works, as before
    os.environ["NUMBA_CACHE_DIR"] = str(folder)
    import numba

    setattr(numba.config, "CACHE_DIR", str(folder))  # numba read its environment when it was imported, perhaps already


_use_keyed_cache()


def compiled(module: ModuleType, function: str) -> bool:
    """True when numba's cache holds `function` of `module` as numba would load it: built from the source as it is
    now, by this numba, for this machine's CPU (else its first call compiles it, once). It asks the cache the way
    numba's own loader does (its index, keyed by signature, CPU and bytecode hash); when those internals are not
    there (another numba), it says False, and the caller's warm-up merely loads the cache."""
    fn = getattr(module, function)
    try:
        cache, codegen = fn._cache, fn.targetctx.codegen()
        return any(cache._index_key(key[0], codegen) == key for key in cache._cache_file._load_index())
    except (AttributeError, TypeError, IndexError):
        return False
