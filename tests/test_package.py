"""The package as a user installs it: a wheel carries the shipped trees, and a shipped tree plays by its game's name
from a folder outside the repository."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile

import pytest

from .conftest import ROOT, TREES

WHEEL_LIMIT = 8 << 20  # the wheel stays small: the large trees ship gzipped, the frontier stores stay in git


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    [path] = out.glob("strategy-*.whl")
    return str(path)


@pytest.mark.slow
def test_the_wheel_carries_every_shipped_tree_and_stays_small(wheel):
    with zipfile.ZipFile(wheel) as z:
        inside = {name.rsplit("/", 1)[-1] for name in z.namelist() if name.startswith("strategy/trees/")}
    assert inside == {p.name for p in TREES.iterdir() if p.name.endswith((".json", ".json.gz"))} | {"SHA256SUMS"}
    assert not any("progress" in name for name in inside)
    assert os.path.getsize(wheel) < WHEEL_LIMIT, f"the wheel is {os.path.getsize(wheel) >> 20} MB"


@pytest.mark.slow
def test_an_installed_wheel_plays_a_shipped_tree_by_its_games_name(wheel, tmp_path):
    """A fresh virtual environment (its dependencies from this one's site-packages), the wheel installed in it, run
    from a folder outside the repository: `strategy play bulls:4x10 --secret ...` finds the packaged tree."""
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    python = str(env_dir / "bin" / "python")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "-q", wheel],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    away = tmp_path / "elsewhere"
    away.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    where = subprocess.run(
        [python, "-c", "import strategy; print(strategy.__file__)"], capture_output=True, text=True, cwd=away, env=env
    )
    assert where.stdout.startswith(str(env_dir)), where.stdout + where.stderr  # the wheel's copy, not the checkout
    played = subprocess.run(
        [str(env_dir / "bin" / "strategy"), "play", "bulls:4x10", "--secret", "9876"],
        capture_output=True,
        text=True,
        cwd=away,
        env=env,
        timeout=120,
    )
    assert played.returncode == 0, played.stderr
    assert "9876" in played.stdout and "4,0" in played.stdout
    listed = subprocess.run(
        [str(env_dir / "bin" / "strategy"), "trees"], capture_output=True, text=True, cwd=away, env=env, timeout=120
    )
    assert listed.returncode == 0 and "bulls-4x10-total" in listed.stdout, listed.stderr
