"""Shared fixtures: small games and their tables, built once per session."""

from __future__ import annotations

import importlib
import os
import signal
import subprocess
import sys
import types
from pathlib import Path

import pytest

# A test run started in the background by a script inherits SIGINT ignored, and so would every solve it
# starts; the tests that interrupt a solve need it to hear SIGINT as a terminal's Ctrl-C delivers it.
signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = Path(__file__).resolve().parent.parent
TREES = ROOT / "strategy" / "trees"  # the shipped trees (package data)


def import_tool(name: str) -> types.ModuleType:
    """A script of tools/ as a module, imported as it runs: from its folder, where it finds the others by name."""
    if str(ROOT / "tools") not in sys.path:
        sys.path.insert(0, str(ROOT / "tools"))
    return importlib.import_module(name)


def run_cli(*args: str, input: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run `python -m strategy ARGS` as a user would; returns the completed process."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "strategy", *args], capture_output=True, text=True, input=input, timeout=timeout, env=env
    )


@pytest.fixture(scope="session")
def bulls4():
    from strategy.engine.table import game_table
    from strategy.rules import parse_game

    return game_table(parse_game("bulls:4x10"))


@pytest.fixture(scope="session")
def mm46():
    from strategy.engine.table import game_table
    from strategy.rules import parse_game

    return game_table(parse_game("mastermind:4x6"))


def interrupt_after(monkeypatch, pushes: int) -> None:
    """Make the solve driver raise KeyboardInterrupt at its (pushes + 1)-th cut-off push, as a Ctrl-C would."""
    from strategy.search.driver import Driver

    real_push = Driver.push_cutoffs
    calls = []

    def push(self):
        calls.append(1)
        if len(calls) > pushes:
            raise KeyboardInterrupt
        return real_push(self)

    monkeypatch.setattr(Driver, "push_cutoffs", push)


def solve(gt, objective: str = "total", *, progress: bool = False, incumbents=(), known_bounds=None, **options):
    """`solve_game` with the objective's and the resources' fields given as keywords (max_depth, consistent_only,
    against, rule, seat; jobs, scheduler, store, log, plan, tt_bits)."""
    from strategy.search.solve import Objective, Resources, solve_game

    fields = ("max_depth", "consistent_only", "against", "rule", "seat")
    goal = Objective(objective, **{k: (tuple(v) if k == "against" else v) for k, v in options.items() if k in fields})
    resources = Resources(**{k: v for k, v in options.items() if k not in fields})
    return solve_game(gt, goal, resources, progress=progress, incumbents=incumbents, known_bounds=known_bounds)
