"""The house keeps its layers: import-linter's contracts (pyproject.toml) hold, and they can fail."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from .conftest import ROOT


def lint_imports(cwd) -> subprocess.CompletedProcess:
    code = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True))"
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, env=dict(os.environ, PYTHONPATH=str(cwd))
    )


def test_no_import_runs_upward_and_no_package_has_a_cycle():
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "2 kept, 0 broken" in done.stdout


@pytest.mark.slow
def test_an_upward_import_breaks_the_contract(tmp_path):
    """A copy of the package where the rules import the command line: the layers contract fails."""
    shutil.copytree(ROOT / "strategy", tmp_path / "strategy", ignore=shutil.ignore_patterns("__pycache__", "trees"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    rules = tmp_path / "strategy" / "rules.py"
    rules.write_text(rules.read_text() + "\n\ndef _upward():\n    from .cli import options  # noqa: F401\n")
    done = lint_imports(tmp_path)
    assert done.returncode != 0 and "BROKEN" in done.stdout
