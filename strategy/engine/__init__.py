"""The compiled kernels (numba): exact search and its bounds."""
from __future__ import annotations

from types import ModuleType


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
