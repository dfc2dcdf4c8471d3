"""numba's cache can never go stale across modules: an edit of a callee alone gives the next process the new code.

numba keys a cached function on its own source file only, so a caller compiled with an old callee is loaded from
the cache as it was. `strategy.engine` names numba's cache folder by a hash of every compiled source; these tests
show the trap with a fixed folder, and that the package's own folder avoids it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import ROOT

CALLEE = "import numba\n\n\n@numba.njit(cache=True)\ndef g():\n    return {}\n"
CALLER = "import numba\n\nfrom .test_callee import g\n\n\n@numba.njit(cache=True)\ndef f():\n    return g() * 10\n"
RUN = "import strategy.engine.test_caller as c; print(c.f())"


def package_copy(tmp_path: Path) -> Path:
    """A copy of the package with a compiled caller and callee in two modules of its engine."""
    shutil.copytree(ROOT / "strategy", tmp_path / "strategy", ignore=shutil.ignore_patterns("__pycache__", "trees"))
    (tmp_path / "strategy" / "engine" / "test_callee.py").write_text(CALLEE.format(1))
    (tmp_path / "strategy" / "engine" / "test_caller.py").write_text(CALLER)
    return tmp_path / "strategy" / "engine" / "test_callee.py"


def run(tmp_path: Path, **env: str) -> str:
    environ = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    environ.update(PYTHONPATH=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"), **env)
    done = subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True, env=environ, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def edit(callee: Path, value: int) -> None:
    callee.write_text(CALLEE.format(value))
    os.utime(callee, ns=(0, 10**18 + value))  # another time stamp, whatever the clock's resolution


@pytest.mark.slow
def test_a_callee_edited_alone_is_compiled_again_in_the_next_process(tmp_path):
    callee = package_copy(tmp_path)
    assert run(tmp_path) == "10"
    assert run(tmp_path) == "10"  # from the cache
    edit(callee, 2)
    assert run(tmp_path) == "20"  # numba alone would load the caller with the old callee (below)
    assert len(list((tmp_path / "cache" / "strategy" / "numba").iterdir())) == 2  # one folder per version


@pytest.mark.slow
def test_with_one_fixed_cache_folder_numba_runs_the_old_callee(tmp_path):
    """The trap the keyed folder avoids (a NUMBA_CACHE_DIR the user sets is used as it is)."""
    callee = package_copy(tmp_path)
    fixed = str(tmp_path / "fixed")
    assert run(tmp_path, NUMBA_CACHE_DIR=fixed) == "10"
    edit(callee, 2)
    assert run(tmp_path, NUMBA_CACHE_DIR=fixed) == "10"
