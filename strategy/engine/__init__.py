"""The compiled kernels (numba): exact search and its bounds."""
from __future__ import annotations

from pathlib import Path
from types import ModuleType


def compiled(module: ModuleType, function: str) -> bool:
    """True when numba's cache holds `function` of `module` (else its first call compiles it, once)."""
    cache = Path(module.__file__).parent / "__pycache__"
    stem = Path(module.__file__).stem
    return any(cache.glob(f"{stem}.{function}-*.nbi"))
