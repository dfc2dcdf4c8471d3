"""Lower bounds by lookahead (strategy bound): never above the optimum the search proves, never lower with
more levels, and equal to it once the levels reach the bottom of the small games."""

from __future__ import annotations

import contextlib
import functools
import os

import numpy as np
import orjson
import pytest

from strategy.engine.table import game_table
from strategy.rules import parse_game
from strategy.search import objectives
from strategy.search.lookahead import lookahead_bound

from ..conftest import run_cli, solve

SMALL = ["bulls:3x5", "mastermind:3x4", "bulls:3x6", "mastermind:4x4", "bulls:4x6", "mastermind:3x5"]


@functools.lru_cache(maxsize=None)
def optima(spec: str) -> dict[str, tuple]:
    """The exact values of every objective the bound takes, as the search proves them, with its costs."""
    gt = game_table(parse_game(spec))
    fewest = solve(gt, "worst-then-fewest", progress=False).proven
    worst = fewest["worst"]
    return {
        "total": (objectives.total(), False, solve(gt, "total", progress=False).proven["total"]),
        "within": (objectives.total(worst), False, solve(gt, "total", max_depth=worst, progress=False).proven["total"]),
        "fewest": (objectives.at_last_level(worst), False, fewest["fewest_at_worst"]),
        "consistent": (
            objectives.total(),
            True,
            solve(gt, "total", consistent_only=True, progress=False).proven["total"],
        ),
        "too-shallow": (objectives.total(worst - 1), False, None),
    }


@pytest.mark.parametrize("spec", SMALL)
@pytest.mark.parametrize("objective", ["total", "within", "fewest", "consistent", "too-shallow"])
def test_the_bound_climbs_to_the_proven_optimum(spec, objective):
    """Level by level the bound never falls and never passes the optimum, and six levels reach it (no tree
    within one question less than the least worst case: the bound says so, INF)."""
    from strategy.engine.exact import INF

    costs, consistent, value = optima(spec)[objective]
    gt = game_table(parse_game(spec))
    bounds = [lookahead_bound(gt, costs, levels, consistent) for levels in range(1, 7)]
    assert bounds == sorted(bounds)
    if value is None:
        assert bounds[-1] == INF
    else:
        assert bounds[-1] == value
        assert bounds[0] < value or objective == "fewest"


@pytest.mark.parametrize("spec", SMALL[:4])
@pytest.mark.parametrize("objective", ["total", "within", "fewest", "consistent", "too-shallow"])
def test_searching_small_sets_exactly_only_raises_the_bound(spec, objective):
    """With the sets of at most N secrets searched exactly, the bound is never below the plain one at the same
    level and never above the optimum; once N covers the whole game it is the optimum at any level."""
    from strategy.engine.exact import INF

    costs, consistent, value = optima(spec)[objective]
    gt = game_table(parse_game(spec))
    for levels in (1, 2, 3):
        plain = lookahead_bound(gt, costs, levels, consistent)
        with_exact = [lookahead_bound(gt, costs, levels, consistent, exact_below=n) for n in (8, 25)]
        assert plain <= with_exact[0] <= with_exact[1] <= (INF if value is None else value)
    assert lookahead_bound(gt, costs, 1, consistent, exact_below=gt.size) == (INF if value is None else value)


@pytest.mark.parametrize("spec", ["mastermind:4x4", "bulls:4x6"])
@pytest.mark.parametrize("objective", ["total", "within", "fewest", "consistent", "too-shallow"])
def test_the_bound_is_the_same_on_any_number_of_threads(spec, objective):
    """The parts of the first questions are shared out to threads, each part with a looser cut-off than in
    turn: the bound is the same (the tests above run on one thread per core)."""
    costs, consistent, _ = optima(spec)[objective]
    gt = game_table(parse_game(spec))
    for levels, below in ((2, 0), (3, 0), (2, 12)):
        got = [lookahead_bound(gt, costs, levels, consistent, exact_below=below, threads=t) for t in (1, 2, 3)]
        assert got[0] == got[1] == got[2], (levels, below, got)


def interrupted_store(spec: str, folder: str) -> tuple[str, int]:
    """A solve's store without its root's result (as a solve interrupted before the end leaves it), and the
    optimum the solve proved."""
    import sqlite3

    path = f"{folder}/{spec.replace(':', '-')}.db"
    value = solve(game_table(parse_game(spec)), "total", progress=False, store=path).proven["total"]
    with sqlite3.connect(path) as con:
        assert con.execute("DELETE FROM results WHERE depth = 0 AND exact = 1").rowcount == 1
    return path, value


@pytest.mark.parametrize("spec", ["bulls:4x6", "mastermind:4x5"])
def test_what_a_store_has_proven_raises_the_bound_but_never_past_the_optimum(spec, tmp_path_factory):
    """The exact parts and refuted probes of a solve's store: level by level never below the plain bound and never
    above the optimum; on bulls, whose first questions are all alike, two levels read the root's parts from the
    store and add up to the optimum."""
    from strategy.search.store import Store

    path, value = interrupted_store(spec, str(tmp_path_factory.mktemp("store")))
    gt = game_table(parse_game(spec))
    store = Store(path, gt.game, False)
    plain = [lookahead_bound(gt, objectives.total(), levels) for levels in (1, 2, 3)]
    stored = [lookahead_bound(gt, objectives.total(), levels, store=store) for levels in (1, 2, 3)]
    assert all(p <= s <= value for p, s in zip(plain, stored)) and stored == sorted(stored)
    assert [lookahead_bound(gt, objectives.total(), levels, store=store, threads=1) for levels in (1, 2, 3)] == stored
    assert stored[1] > plain[1]
    if spec.startswith("bulls"):
        assert stored[1] == value
    within = lookahead_bound(gt, objectives.total(8), 2, store=store)  # another objective's results: not read
    assert within == lookahead_bound(gt, objectives.total(8), 2)


@pytest.mark.parametrize("objective", ["total", "within", "consistent"])
def test_a_bound_keeps_what_it_searched_in_the_store_resumes_from_it_and_a_solve_reads_it(
    objective, tmp_path, monkeypatch
):
    """The sets a bound searched exactly go to its store, and its bounds of the others (here every one, however
    quick): run again on it, the bound is the same and comes from the store at once; stopped half-way, it resumes
    to the same bound through fewer nodes, searching no set twice; a solve on that store proves the same optimum
    and writes the same tree as a solve without one (a stored value off by one would change both)."""
    from strategy.interrupts import Stopped
    from strategy.search import lookahead
    from strategy.search.lookahead import Lookahead
    from strategy.search.store import Store

    monkeypatch.setattr(lookahead, "STORE_BOUND_SECONDS", 0.0)
    spec = "bulls:4x6"
    gt = game_table(parse_game(spec))
    costs, consistent, value = optima(spec)[objective]

    def run(path, stop_after: int | None = None) -> tuple[int, int]:
        """The bound (3 levels, sets of at most 80 searched) and the nodes it went through."""
        nodes = []

        def on_node() -> None:
            nodes.append(1)
            if len(nodes) == stop_after:
                raise Stopped()

        with contextlib.closing(Store(path, gt.game, consistent)) as store:
            return Lookahead(gt, costs, consistent, on_node, exact_below=80, store=store).game_bound(3), len(nodes)

    path = str(tmp_path / "bound.db")
    first, nodes = run(path)
    with contextlib.closing(Store(path, gt.game, consistent)) as store:
        assert first <= value and store.count(exact=True) > 0 and store.count(exact=False) > 0
    assert run(path) == (first, 1)  # the root's own result, final
    searched = []
    real = Lookahead.searched
    monkeypatch.setattr(
        Lookahead, "searched", lambda self, S, *args: searched.append(np.sort(S).tobytes()) or real(self, S, *args)
    )
    with pytest.raises(Stopped):
        run(tmp_path / "stopped.db", stop_after=nodes // 2)
    before = len(searched)
    again, resumed_nodes = run(tmp_path / "stopped.db")
    assert (
        again == first and resumed_nodes < nodes and before > 0 and not set(searched[:before]) & set(searched[before:])
    )
    # two threads write one store: the same bound, and the same value for every set both runs solved
    with contextlib.closing(Store(tmp_path / "threads.db", gt.game, consistent)) as store:
        assert lookahead_bound(gt, costs, 3, consistent, exact_below=80, store=store, threads=2) == first
    one, two = exact_results(path), exact_results(tmp_path / "threads.db")
    assert two and all(one[key] == value for key, value in two.items() if key in one)
    monkeypatch.undo()
    depth = costs.cap
    fresh = solve(gt, "total", max_depth=depth, consistent_only=consistent, progress=False)
    resumed = solve(gt, "total", max_depth=depth, consistent_only=consistent, progress=False, store=path)
    assert resumed.proven == fresh.proven and resumed.proven["total"] == value and resumed.tree == fresh.tree
    assert resumed.run["reused_from_store"] > 0


def exact_results(path) -> dict[str, int]:
    import sqlite3

    with contextlib.closing(sqlite3.connect(path)) as con:
        return dict(con.execute("SELECT key, value FROM results WHERE exact = 1 AND tree IS NOT NULL"))


def test_the_bound_calls_the_kernels_with_the_searchs_argument_types():
    """One compiled overload each: two overloads of the recursive solve crash when loaded from numba's cache
    (the lookahead once passed its questions so far as int32, the search as int64)."""
    from strategy.engine import exact

    gt = game_table(parse_game("bulls:3x6"))
    lookahead_bound(gt, objectives.total(), 3, exact_below=30)
    solve(gt, "total", progress=False)
    assert len(exact.solve.signatures) == 1 and len(exact.probe_bounds.signatures) == 1


def test_four_levels_reach_the_published_mastermind_optimum():
    """Mastermind 4x6: 5625 (Koyama & Lai 1993) is reached by four levels of lookahead, which with a tree of
    that total proves it with no search; three levels give 5612 (the README quotes both), and reach it too when
    the sets of at most 100 secrets are searched exactly."""
    gt = game_table(parse_game("mastermind:4x6"))
    assert [lookahead_bound(gt, objectives.total(), levels) for levels in (3, 4)] == [5612, 5625]
    assert lookahead_bound(gt, objectives.total(), 3, exact_below=100) == 5625


def test_exact_search_of_small_sets_raises_the_bound_of_bulls_4_of_10():
    """The README's figures: three levels give 25540 plain and 25983 with the sets of at most 200 secrets
    searched exactly (the optimum is 26274)."""
    gt = game_table(parse_game("bulls:4x10"))
    assert [lookahead_bound(gt, objectives.total(), 3, exact_below=n) for n in (0, 200)] == [25540, 25983]


@pytest.mark.slow
def test_the_cli_prints_the_bound_as_text_or_json():
    """bulls 3 of 6: the published 436 by three levels, 429 by two."""
    r = run_cli("bound", "--game", "bulls:3x6", "--json")
    assert r.returncode == 0, r.stderr
    out = orjson.loads(r.stdout)
    assert out["lower_bound"] == 436 and out["average"] == round(436 / 120, 4) and out["feasible"]
    assert out["objective"] == "total" and out["levels"] == 3 and not out["consistent_only"]
    r = run_cli("bound", "--game", "bulls:3x6", "--levels", "2", "--quiet")
    assert r.returncode == 0 and r.stdout.startswith(
        f"bulls:3x6 total: at least 429 questions, average {429 / 120:.4f} (proven by 2 levels of lookahead, "
    )
    r = run_cli("bound", "--game", "bulls:3x6", "--levels", "2", "--exact-below", "30", "--json")
    out = orjson.loads(r.stdout)
    assert r.returncode == 0 and out["exact_below"] == 30 and 429 <= out["lower_bound"] <= 436
    r = run_cli("bound", "--game", "bulls:3x6", "--levels", "1", "--exact-below", "120", "--quiet")
    assert (
        r.returncode == 0
        and r.stdout.startswith("bulls:3x6 total: at least 436 questions")
        and ("(proven by 1 levels of lookahead, sets of at most 120 secrets searched exactly, " in r.stdout)
    )


@pytest.mark.slow
def test_the_cli_reads_a_store_starts_a_missing_one_and_refuses_a_foreign_one(tmp_path_factory):
    folder = tmp_path_factory.mktemp("store")
    path, value = interrupted_store("bulls:4x6", str(folder))
    r = run_cli("bound", "--game", "bulls:4x6", "--levels", "2", "--store", path, "--json")
    out = orjson.loads(r.stdout)
    assert r.returncode == 0 and out["lower_bound"] == value and out["store"] == path
    r = run_cli("bound", "--game", "bulls:4x6", "--levels", "2", "--store", path, "--quiet")
    assert r.returncode == 0 and f"what '{path}' has proven" in r.stdout
    new = str(folder / "new.db")  # a bound alone starts a store, for the next run
    for _ in range(2):
        r = run_cli("bound", "--game", "bulls:4x6", "--levels", "2", "--exact-below", "80", "--store", new, "--json")
        assert r.returncode == 0 and orjson.loads(r.stdout)["lower_bound"] == 1425, r.stderr
    for game, store, says in (("bulls:4x6", str(folder), "is a directory"), ("bulls:4x7", path, "not 'bulls:4x7'")):
        r = run_cli("bound", "--game", game, "--store", store)
        assert r.returncode == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    r = run_cli("bound", "--game", "bulls:4x7", "--store", new)  # closed by its bound: refused, it is left alone
    assert r.returncode == 2 and not os.path.exists(f"{new}-wal") and not os.path.exists(f"{new}-shm")


@pytest.mark.slow
def test_the_cli_reports_an_impossible_depth_and_refuses_bad_options():
    r = run_cli("bound", "--game", "mastermind:4x6", "--max-depth", "4", "--quiet")
    assert r.returncode == 1 and "no tree finds every secret within 4 questions" in r.stdout
    r = run_cli("bound", "--game", "mastermind:4x6", "--fewest-at", "4", "--json")
    assert r.returncode == 1 and orjson.loads(r.stdout)["lower_bound"] is None
    for args in (
        ["--levels", "0"],
        ["--levels", "13"],
        ["--max-depth", "5", "--fewest-at", "5"],
        ["--exact-below", "2"],
        ["--exact-below", "x"],
    ):
        r = run_cli("bound", "--game", "bulls:3x6", *args)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    r = run_cli("bound", "--game", "bulls:6x10")  # beyond the feedback table's limit
    assert r.returncode == 2 and "feedback table" in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.slow
@pytest.mark.parametrize(
    "signum,args",
    [
        (2, ["--game", "bulls:4x10", "--levels", "5"]),
        (15, ["--game", "bulls:4x10", "--levels", "5"]),
        (2, ["--game", "mastermind:4x9", "--levels", "1", "--exact-below", "6561"]),
    ],
)
def test_ctrl_c_or_sigterm_stops_a_long_bound_in_one_line(signum, args):
    """A signal that lands in the middle of a compiled call stops the bound at its next node, or inside the
    exact search of a set (here the whole game), not with numba's SystemError: one line, exit 130 or 143,
    within seconds."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from ..conftest import ROOT

    proc = subprocess.Popen(
        [sys.executable, "-m", "strategy", "bound", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        preexec_fn=lambda: (os.setpgrp(), signal.signal(signal.SIGINT, signal.SIG_DFL)),
    )
    time.sleep(4)  # five levels of bulls 4 of 10, or the exact search of Mastermind 4x9, take far longer
    sent = time.monotonic()
    os.killpg(proc.pid, signum)
    out, err = proc.communicate(timeout=60)
    assert time.monotonic() - sent < 5
    assert proc.returncode == 128 + signum and out == ""
    assert err.strip().splitlines()[-1] == (
        "strategy: interrupted" if signum == 2 else "strategy: terminated by SIGTERM"
    )
    assert "internal error" not in err
