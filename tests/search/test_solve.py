"""The exact engine reproduces published optima (../shared/reference/published-results.md)."""

from __future__ import annotations

import functools
import hashlib

import pytest

from strategy.engine.table import game_table
from strategy.interrupts import Interrupted
from strategy.rules import parse_game
from strategy.tree.verify import measure

from ..conftest import TREES, interrupt_after, run_cli, solve


def solved(spec, objective="total", **kw):
    gt = game_table(parse_game(spec))
    report = solve(gt, objective, progress=False, **kw)
    stats = measure(gt.game, report.tree)[0] if report.tree else None
    return report, stats


def chen_lin(n: int) -> int:
    """Closed form of the minimum total for bulls 2 of n (Chen & Lin 2004)."""
    if n % 2 == 0:
        return (4 * n**3 + 21 * n**2 - 76 * n + 72) // 12
    return (4 * n**3 + 21 * n**2 - 82 * n + 105) // 12


@pytest.mark.parametrize("k", range(3, 11))
def test_bulls_two_of_n_closed_form(k):
    report, stats = solved(f"bulls:2x{k}")
    assert report.proven["total"] == stats.total == chen_lin(k)
    if k == 10:
        assert stats.total == 451


@pytest.mark.parametrize("spec,total", [("bulls:3x6", 436), ("bulls:3x7", 836), ("mastermind:4x6", 5625)])
def test_published_minimum_totals(spec, total):
    report, stats = solved(spec)
    assert report.proven == {"total": total}
    assert stats.total == total and stats.secrets == game_table(parse_game(spec)).size


@pytest.mark.parametrize("spec,total,worst", [("mastermind:4x6", 5660, 6), ("bulls:4x10", 26688, 7)])
def test_published_consistent_only_minimum_totals(spec, total, worst):
    """Every question consistent with every answer: supermastermind's 5660 for Mastermind 4x6, and 26688
    for bulls 4 of 10 (the strict rule; a corrected mmstrat agrees)."""
    report, stats = solved(spec, consistent_only=True)
    assert report.proven == {"total": total}
    assert stats.total == total and stats.worst == worst


def test_mastermind46_worst_case_five_costs_one_more():
    report, stats = solved("mastermind:4x6", "worst")
    assert report.proven == {"worst": 5, "total": 5626}
    assert stats.worst == 5 and stats.total == 5626
    report, stats = solved("mastermind:4x6", max_depth=5)
    assert report.proven["total"] == stats.total == 5626


def test_mastermind46_fewest_at_worst_depth_is_539():
    report, stats = solved("mastermind:4x6", "worst-then-fewest")
    assert report.proven == {"worst": 5, "fewest_at_worst": 539}
    assert stats.worst == 5 and stats.depth_counts[5] == 539


def test_impossible_depth_is_reported():
    report, _ = solved("bulls:3x6", max_depth=4)
    assert report.tree is None and report.proven == {"max_depth": 4, "feasible": False}
    assert "impossible" in report.lines[0]


def test_consistent_only_is_never_better():
    free, _ = solved("bulls:3x6")
    cons, stats = solved("bulls:3x6", consistent_only=True)
    assert cons.proven["total"] >= free.proven["total"]
    assert stats.total == cons.proven["total"]


def test_greedy_is_never_better_than_optimal():
    from strategy.build.greedy import STRATEGIES, build

    gt = game_table(parse_game("bulls:3x7"))
    for strategy in STRATEGIES:
        assert measure(gt.game, build(gt, strategy, progress=False))[0].total >= 836


@pytest.mark.slow
def test_cli_solve_writes_a_verified_tree_with_its_proof(tmp_path):
    out = tmp_path / "t.json"
    r = run_cli("solve", "--game", "bulls:3x6", "--quiet", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "proved: minimum total 436" in r.stderr
    r = run_cli("verify", str(out))
    assert r.returncode == 0 and "total 436" in r.stdout
    import orjson

    doc = orjson.loads(out.read_bytes())
    assert doc["objective"] == "total" and doc["generator"]["proven"] == {"total": 436}
    assert doc["generator"]["run"]["nodes"] >= 0 and doc["generator"]["run"]["tasks"] >= 1
    r = run_cli("solve", "--game", "bulls:3x6", "--max-depth", "4", "--quiet", "-o", str(tmp_path / "no.json"))
    assert r.returncode == 1 and "impossible" in r.stderr and not (tmp_path / "no.json").exists()


@pytest.mark.slow
def test_ctrl_c_stops_a_long_solve_cleanly(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    from ..conftest import ROOT

    out = tmp_path / "t.json"
    # Mastermind 4x9 takes minutes (bulls 4 of 10 became a 4-s solve, which a Ctrl-C at 4 s could miss)
    proc = subprocess.Popen(
        [sys.executable, "-m", "strategy", "solve", "--game", "mastermind:4x9", "--quiet", "-o", str(out)],
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    time.sleep(4)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "interrupted" in err and "Traceback" not in err
    assert not out.exists() and not list(tmp_path.glob("*.tmp"))


def test_recursive_search_compiles_to_one_overload():
    """Two overloads of the recursive solve calling each other crash when loaded from numba's cache."""
    from strategy.engine import exact as engine

    solved("bulls:3x6")
    assert len(engine.solve.signatures) == 1


def brute_force_total(spec: str, consistent_only: bool) -> int:
    """An independent exhaustive search: plain recursion over subsets, memoised, no symmetry, no bounds beyond 2|S|-1."""
    return brute_force_value(spec, consistent_only)(tuple(range(len(parse_game(spec).codes()))))


@functools.lru_cache(maxsize=None)
@functools.lru_cache(maxsize=None)
def brute_force_value(spec: str, consistent_only: bool):
    """T(S), the least total of a tree over the secrets S (a tuple of code indices), by that exhaustive search."""

    from strategy.rules import feedback

    game = parse_game(spec)
    codes = game.codes()
    answer = [[feedback(s, p) for s in codes] for p in codes]

    @functools.lru_cache(maxsize=None)
    def total(S: tuple) -> int:
        if len(S) == 1:
            return 1
        best = 10**9
        for p in S if consistent_only else range(len(codes)):
            parts: dict = {}
            for s in S:
                if answer[p][s] != game.win:
                    parts.setdefault(answer[p][s], []).append(s)
            if any(len(v) == len(S) for v in parts.values()):
                continue
            if len(S) + sum(2 * len(v) - 1 for v in parts.values()) >= best:
                continue
            best = min(best, len(S) + sum(total(tuple(v)) for v in parts.values()))
        return best

    return total


@pytest.mark.parametrize("spec", ["bulls:3x5", "mastermind:3x3", "bulls:3x4:nz", "bulls:2x6"])
@pytest.mark.parametrize("consistent_only", [False, True])
def test_engine_agrees_with_brute_force(spec, consistent_only):
    report, stats = solved(spec, consistent_only=consistent_only)
    assert report.proven["total"] == stats.total == brute_force_total(spec, consistent_only)


# -- the scan kernels against the plain per-probe scan ------------------------------------------------

import numpy as np  # noqa: E402
from hypothesis import example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from strategy.engine import exact  # noqa: E402

KERNEL_GAMES = {
    spec: game_table(parse_game(spec)) for spec in ("bulls:4x9", "mastermind:4x5", "mastermind:5x4", "mastermind:7x2")
}
INF = int(exact.INF)


def _costs(kind: str, depth: int) -> np.ndarray:
    r = np.arange(32, dtype=np.int64)
    if kind == "total":
        return r
    if kind == "within":  # total, INF beyond the depth bound
        return np.where(r <= depth, r, INF).astype(np.int64)
    return np.where(r < depth, 0, np.where(r == depth, 1, INF)).astype(np.int64)  # fewest at the last level


@settings(max_examples=200, deadline=None)
@given(
    spec=st.sampled_from(sorted(KERNEL_GAMES)),
    n=st.integers(3, 15) | st.integers(16, 255),
    b=st.integers(1, 6) | st.integers(7, 40),
    d=st.integers(0, 3),
    kind=st.sampled_from(["total", "within", "fewest"]),
    depth=st.integers(3, 9),
    every=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_fast_bounds_equal_the_plain_scan(spec, n, b, d, kind, depth, every, seed):
    """The packed, byte-lane and byte-counter kernels (with their closed forms for parts within three
    levels) give every code, or a list of probes, the bound, exact flag and branching that counting each
    probe's parts gives."""
    gt = KERNEL_GAMES[spec]
    N, n_classes = gt.size, len(gt.answers)
    n, b = min(n, N), min(b, n_classes - 1)
    rng = np.random.default_rng(seed)
    S = np.sort(rng.choice(N, n, replace=False)).astype(np.int32)
    bounds = exact.make_bounds(_costs(kind, depth), n_classes, exact.TABLE_DEPTHS, 300)
    scratch = exact.make_scratch(N, n_classes)
    probes = (
        np.arange(N, dtype=np.int32) if every else np.sort(rng.choice(N, min(N, 50), replace=False)).astype(np.int32)
    )
    P = len(probes)
    b_fast = exact.fast_bounds(gt.table, S, probes, every, d, b, bounds, n_classes, gt.win, scratch)
    lb, sq, ex = np.empty(P, dtype=np.int64), np.empty(P, dtype=np.int64), np.empty(P, dtype=np.bool_)
    b_plain = exact.scan(gt.table, S, probes, d, b, bounds, n_classes, gt.win, lb, sq, ex)
    assert b_fast == b_plain
    assert np.array_equal(scratch[7][:P], lb) and np.array_equal(scratch[8][:P], ex)


_KERNEL_ENGINES: dict = {}


@settings(max_examples=150, deadline=None)
@given(
    spec=st.sampled_from([s for s in sorted(KERNEL_GAMES) if len(KERNEL_GAMES[s].answers) > 16]),
    asked=st.integers(0, 2),
    n=st.integers(16, 255),
    b=st.integers(3, 40),
    kind=st.sampled_from(["total", "within", "fewest"]),
    depth=st.integers(3, 9),
    above=st.integers(0, 12) | st.integers(13, 400),
    stop=st.integers(-1, 3),
    seed=st.integers(0, 2**32 - 1),
)
@example(spec="mastermind:5x4", asked=0, n=16, b=3, kind="total", depth=5, above=0, stop=0, seed=1)  # a stop at beta
def test_sifted_probe_bounds_are_the_scan_of_every_code(spec, asked, n, b, kind, depth, above, stop, seed):
    """probe_bounds counts only the codes `sift` cannot bound away by their answers alone (games of more than
    16 answers): its probes, bounds, squares, exact flags, branching, stop probe and fail-soft bound are those
    of the count of every code."""
    from strategy.engine.searcher import Engine, Spec
    from strategy.search.objectives import total

    gt = KERNEL_GAMES[spec]
    e = _KERNEL_ENGINES.get(spec) or _KERNEL_ENGINES.setdefault(spec, Engine(gt, Spec(gt.game, total(), False, 4)))
    rng = np.random.default_rng(seed)
    history = rng.choice(gt.size, asked, replace=False).astype(np.int64)
    secret = int(rng.integers(gt.size))
    S = np.flatnonzero(np.all(gt.table[history] == gt.table[history, secret][:, None], axis=0)).astype(np.int32)
    if len(S) < 16:
        return
    S = np.sort(rng.choice(S, min(n, len(S)), replace=False)).astype(np.int32)
    d, b = np.int64(asked + 1), np.int64(min(b, len(gt.answers) - 1))
    bounds = exact.make_bounds(_costs(kind, depth), len(gt.answers), exact.TABLE_DEPTHS, 300)
    common = (
        gt.table,
        gt.codes,
        gt.masks,
        e.perms,
        e.all_probes,
        e.params,
        e.counters,
        S,
        e.all_probes,
        True,
        d,
        b,
        bounds,
        history,
    )
    alive = exact.bounded_then_reduced(*common, exact.INF, np.int64(-1), e.scratch, 0, exact.INF, False)[1]
    if len(alive) == 0:
        return
    least = int(alive.min())
    beta = np.int64(least + above)
    stop_at = np.int64(-1 if stop < 0 else max(0, least - stop))
    every = [np.copy(x) for x in exact.bounded_then_reduced(*common, beta, stop_at, e.scratch, 0, exact.INF, False)]
    sifted = exact.probe_bounds(
        gt.table,
        gt.codes,
        gt.masks,
        e.perms,
        e.all_probes,
        e.params,
        e.zs,
        e.classes,
        e.counters,
        S,
        d,
        b,
        bounds,
        history,
        beta,
        stop_at,
        e.scratch,
    )
    for a, c in zip(every, sifted):
        assert np.array_equal(a, c)


@pytest.mark.parametrize("spec", ["bulls:4x9", "mastermind:5x4"])
def test_fast_bounds_count_parts_of_128_secrets_or_more(spec):
    """A part of 128 to 255 secrets fills a byte lane past the guard bit of the SWAR excess: the bounds
    are still every probe's level fill, as the plain scan counts them (one and two lane words)."""
    gt = KERNEL_GAMES[spec]
    N, n_classes = gt.size, len(gt.answers)
    rng = np.random.default_rng(7)
    row = gt.table[0]
    big = np.flatnonzero(row == np.bincount(row).argmax())  # the largest part of the first code
    assert len(big) >= 200
    S = np.sort(
        np.concatenate(
            [rng.choice(big, 170, replace=False), rng.choice(np.flatnonzero(row != row[big[0]]), 60, replace=False)]
        )
    ).astype(np.int32)
    probes = np.arange(N, dtype=np.int32)
    for d, b in ((3, 13), (1, 6), (2, 40)):
        bounds = exact.make_bounds(_costs("total", 9), n_classes, exact.TABLE_DEPTHS, 300)
        scratch = exact.make_scratch(N, n_classes)
        exact.fast_bounds(gt.table, S, probes, True, d, b, bounds, n_classes, gt.win, scratch)
        lb, sq, ex = np.empty(N, dtype=np.int64), np.empty(N, dtype=np.int64), np.empty(N, dtype=np.bool_)
        exact.scan(gt.table, S, probes, d, b, bounds, n_classes, gt.win, lb, sq, ex)
        assert np.array_equal(scratch[7][:N], lb)


@settings(max_examples=100, deadline=None)
@given(
    spec=st.sampled_from(sorted(KERNEL_GAMES)),
    n=st.integers(1, 60),
    every=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_measured_branching_is_the_scans(spec, n, every, seed):
    """max_parts (one bit per answer, ORed) gives the largest number of non-winning parts that the plain
    scan counts, over every code or over a list of probes, in 32-bit words (at most 32 answers) or 64-bit."""
    gt = KERNEL_GAMES[spec]
    N, n_classes = gt.size, len(gt.answers)
    rng = np.random.default_rng(seed)
    S = np.sort(rng.choice(N, min(n, N), replace=False)).astype(np.int32)
    probes = (
        np.arange(N, dtype=np.int32) if every else np.sort(rng.choice(N, min(N, 50), replace=False)).astype(np.int32)
    )
    bounds = exact.make_bounds(_costs("total", 9), n_classes, exact.TABLE_DEPTHS, 300)
    lb, sq, ex = (np.empty(len(probes), dtype=t) for t in (np.int64, np.int64, np.bool_))
    b_scan = exact.scan(gt.table, S, probes, 2, n_classes - 1, bounds, n_classes, gt.win, lb, sq, ex)
    acc = np.empty(N, dtype=np.uint64)
    for width in {n_classes, 64}:  # as many answers as the game has, or as many as 64-bit words hold
        assert exact.max_parts(gt.table, S, probes, every, gt.win, width, acc) == b_scan


CONTENT_GAMES = {**KERNEL_GAMES, "bulls:3x7:nz": game_table(parse_game("bulls:3x7:nz"))}


@settings(max_examples=150, deadline=None)
@given(
    spec=st.sampled_from(sorted(CONTENT_GAMES)),
    n=st.integers(1, 40) | st.integers(41, 255),
    seed=st.integers(0, 2**32 - 1),
)
@example(spec="mastermind:7x2", n=255, seed=0)
def test_content_classes_measure_the_branching_of_every_code(spec, n, seed):
    """parts_by_content (the codes grouped by their symbols, a group skipped when the common-symbol counts
    of S leave it no more parts than found) finds the most non-winning parts of max_parts over every code:
    with repeated symbols, with distinct ones, without a leading zero, with answers up to bit 63."""
    gt = CONTENT_GAMES[spec]
    content = exact.make_content(gt.table, gt.codes, gt.game.symbols, gt.answers)
    bits, cls, common, starts, by_class, room = content
    assert len(bits) == gt.size and starts[-1] == gt.size and room.sum() == len(gt.answers) - 1
    held = [sorted(gt.codes[i]) for i in range(gt.size)]
    assert all(held[i] == held[int(np.flatnonzero(cls == cls[i])[0])] for i in range(0, gt.size, 7))
    rng = np.random.default_rng(seed)
    S = np.sort(rng.choice(gt.size, min(n, gt.size), replace=False)).astype(np.int32)
    acc = np.empty(gt.size, dtype=np.uint64)
    expected = exact.max_parts(gt.table, S, np.arange(gt.size, dtype=np.int32), True, gt.win, len(gt.answers), acc)
    assert exact.parts_by_content(S, content) == expected


@pytest.mark.parametrize("k,content", [(32, True), (33, False)])
def test_games_whose_codes_outgrow_a_word_count_every_code(k, content):
    """No content classes when a code's position-symbol bits (length × symbols) would pass 64 bits, or an
    answer word (bit 8·hits + common): the search then counts every code (max_parts), and proves the same
    closed form on either side of the limit."""
    gt = game_table(parse_game(f"bulls:2x{k}"))
    assert (exact.make_content(gt.table, gt.codes, gt.game.symbols, gt.answers)[0].shape[0] > 0) == content
    report, stats = solved(f"bulls:2x{k}")
    assert report.proven["total"] == stats.total == chen_lin(k)
    gt = game_table(parse_game("mastermind:8x2"))
    assert exact.make_content(gt.table, gt.codes, gt.game.symbols, gt.answers)[0].shape[0] == 0


@settings(max_examples=200, deadline=None)
@given(lb=st.lists(st.integers(0, 2**40) | st.integers(0, 5), max_size=300), big=st.booleans(), data=st.data())
def test_the_probe_queue_pops_in_the_search_order(lb, big, data):
    """Probes come out of the queue by (bound, sum of squares, position): the order the search tries them
    and the canonical tie-break, also when the packed keys would not fit 63 bits (ranks then)."""
    sq = data.draw(st.lists(st.integers(0, 2**40 if big else 9), min_size=len(lb), max_size=len(lb)))
    heap, mask = exact.probe_queue(np.array(lb, dtype=np.int64), np.array(sq, dtype=np.int64))
    popped = [exact.heap_pop(heap, left) & mask for left in range(len(lb), 0, -1)]
    assert popped == sorted(range(len(lb)), key=lambda i: (lb[i], sq[i], i))


@given(sizes=st.lists(st.integers(0, 6), min_size=1, max_size=32))
def test_parts_are_searched_largest_first(sizes):
    """Only the parts of more than two secrets are searched, by decreasing size, ties by class."""
    order = np.empty(len(sizes), dtype=np.int64)
    k = exact.largest_first(np.array(sizes, dtype=np.int64), order)
    assert list(order[:k]) == sorted((c for c, m in enumerate(sizes) if m > 2), key=lambda c: (-sizes[c], c))


@given(
    sizes=st.lists(st.integers(0, 40), min_size=1, max_size=32),
    data=st.data(),
    gap=st.integers(0, 100) | st.integers(0, 2**41),
)
def test_a_pass_shares_what_a_probe_lacks_among_its_large_inexact_parts(sizes, data, gap):
    """Each tested part's cut-off rises by the even share of the missing cost over the large parts still
    inexact, never by less than 1 (a cut-off at the part's bound would prove nothing)."""
    exact_flags = data.draw(st.lists(st.booleans(), min_size=len(sizes), max_size=len(sizes)))
    order = np.empty(len(sizes), dtype=np.int64)
    big = exact.largest_first(np.array(sizes, dtype=np.int64), order)
    step = exact.window_step(gap, np.array(sizes, dtype=np.int64), order, np.array(exact_flags), big)
    k = sum(1 for c in order[:big] if sizes[c] >= exact.NULL_WINDOW_MIN and not exact_flags[c])
    assert step == (gap // k if k and gap > k else 1)
    assert step >= 1 and (k * step <= gap or step == 1)


def test_an_interrupted_staged_objective_keeps_what_its_finished_stages_proved(monkeypatch):
    """Interrupted in its fewest-at-depth stage, a worst-then-fewest solve still reports the minimum worst
    case that its first stage proved (the partial tree's generator records it as proven_so_far), its
    best tree found keeps within that depth (bulls 4 of 6: the greedy tree needs one question more), and
    its bound counts at least one secret at that depth."""
    from strategy.build.greedy import build
    from strategy.search.driver import Driver

    spec = "bulls:4x6"
    gt = game_table(parse_game(spec))
    worst = solved(spec, "worst-then-fewest")[0].proven["worst"]
    assert measure(gt.game, build(gt, "expected-size", False, progress=False))[0].worst > worst
    real_push = Driver.push_cutoffs

    def interrupted_in_fewest(self):
        if self.spec.costs.name.startswith("fewest"):
            raise KeyboardInterrupt
        return real_push(self)

    monkeypatch.setattr(Driver, "push_cutoffs", interrupted_in_fewest)
    with pytest.raises(Interrupted) as info:
        solve(gt, "worst-then-fewest", progress=False)
    partial = info.value.partial
    assert partial.proven == {"worst": worst} and f"proved: minimum worst case {worst}" in partial.lines
    assert measure(gt.game, partial.tree)[0].worst == worst
    assert partial.lower_bound >= 1  # no tree within worst - 1 questions: some secret needs all of them


def test_an_interrupted_solve_keeps_a_better_tree_and_bound_it_was_given(monkeypatch, tmp_path):
    """A tree known beforehand (--incumbent, or what --partial FILE holds from an earlier run) competes
    for the best tree found; the bound an earlier partial file claims is kept only when the user trusts that
    file (--trust), and the partial record then names it (bulls 4 of 6, interrupted before its search has
    settled anything: alone it can only offer a greedy tree)."""
    import orjson

    from strategy.build.greedy import build
    from strategy.cli import main
    from strategy.search.known import Trusted
    from strategy.tree import format as tree_io

    spec = "bulls:4x6"
    gt = game_table(parse_game(spec))
    optimal, stats = solved(spec)
    interrupt_after(monkeypatch, 0)
    with pytest.raises(Interrupted) as info:
        solve(gt, "total", progress=False)
    # alone, the better of the greedy trees: here entropy's (1450), not expected size's (1459)
    greedy = {h: measure(gt.game, build(gt, h, False, progress=False))[0].total for h in ("expected-size", "entropy")}
    assert greedy["entropy"] < greedy["expected-size"]
    assert stats.total < measure(gt.game, info.value.partial.tree)[0].total == greedy["entropy"]
    with pytest.raises(Interrupted) as info:
        solve(gt, "total", progress=False, incumbents=[optimal.tree])
    assert measure(gt.game, info.value.partial.tree)[0].total == stats.total
    assert info.value.partial.lower_bound < stats.total
    source = Trusted(stats.total, "earlier.json", "ab" * 32)
    with pytest.raises(Interrupted) as info:
        solve(
            gt,
            "total",
            progress=False,
            known_bounds={"total": source, "total-within-9": Trusted(stats.total + 1, "other.json", "cd" * 32)},
        )
    assert info.value.partial.lower_bound == stats.total
    assert info.value.partial.relies_on == [{"file": "earlier.json", "sha256": "ab" * 32}]
    # the command line: the tree of an earlier partial file is kept (here the entropy tree, as a partial tree
    # with the true bound), its bound only when trusted; an incumbent given by path is used
    best, out = tmp_path / "best.json", tmp_path / "out.json"
    earlier = {
        "tool": "test",
        "lower_bound": stats.total,
        "objective_of_the_search": "total",
        "bound_of": "total",
        "consistent_only": False,
    }
    entropy = build(gt, "entropy", False, progress=False)
    tree_io.save(tree_io.TreeDoc(gt.game, entropy, "partial", earlier, measure(gt.game, entropy)[0].to_json()), best)
    saved = best.read_bytes()
    import signal

    monkeypatch.setattr(signal, "signal", lambda *a: None)  # main() must not replace pytest's handlers
    args = ["solve", "--game", spec, "--jobs", "1", "--quiet", "-o", str(out)]
    assert main([*args, "--partial", str(best)]) == 130 and not out.exists()
    doc = orjson.loads(best.read_bytes())
    assert doc["generator"]["lower_bound"] < stats.total < doc["stats"]["total"] == greedy["entropy"]
    best.write_bytes(saved)
    assert main([*args, "--partial", str(best), "--trust", str(best)]) == 130 and not out.exists()
    doc = orjson.loads(best.read_bytes())
    assert doc["generator"]["lower_bound"] == stats.total < doc["stats"]["total"] == greedy["entropy"]
    assert doc["generator"]["relies_on"] == [{"file": "best.json", "sha256": hashlib.sha256(saved).hexdigest()}]
    best.write_bytes(saved)
    # an incumbent bounds the tree; an interrupted solve's partial file given as one and trusted brings its bound
    # too, to every stage its bound holds for: the least total bounds the least total within a depth
    shipped, again = tmp_path / "shipped.json", tmp_path / "again.json"
    tree_io.save(tree_io.TreeDoc(gt.game, optimal.tree, "total", {"tool": "test"}, stats.to_json()), shipped)
    assert main([*args, "--partial", str(again), "--incumbent", str(shipped)]) == 130
    doc = orjson.loads(again.read_bytes())
    assert doc["objective"] == "partial" and doc["stats"]["total"] == stats.total
    assert doc["generator"]["lower_bound"] < stats.total
    again.unlink()
    assert (
        main([*args, "--max-depth", "9", "--partial", str(again), "--incumbent", str(best), "--trust", str(best)])
        == 130
    )
    doc = orjson.loads(again.read_bytes())
    assert doc["generator"]["bound_of"] == "total-within-9" and doc["generator"]["lower_bound"] == stats.total
    # a bound proven with consistent probes only does not bound a search that may ask any code
    tree_io.save(
        tree_io.TreeDoc(gt.game, optimal.tree, "partial", dict(earlier, consistent_only=True), stats.to_json()), best
    )
    again.unlink()
    assert main([*args, "--partial", str(again), "--incumbent", str(best), "--trust", str(best)]) == 130
    assert orjson.loads(again.read_bytes())["generator"]["lower_bound"] < stats.total


@pytest.mark.parametrize("pushes", [0, 20])
def test_an_interrupted_solve_takes_the_cheaper_subtree_of_its_known_trees_at_every_node(monkeypatch, pushes):
    """Two trees known beforehand that ask the same first question, each optimal under half of its answers
    and greedy (minimax) under the others: the best tree found takes the optimal half of each, cheaper than
    either (bulls 4 of 6, interrupted before the search started and after it had solved some of the parts
    it splits itself, where the search's line leads)."""
    from strategy.build.greedy import build
    from strategy.search.driver import Plan

    spec = "bulls:4x6"
    gt = game_table(parse_game(spec))
    optimal, stats = solved(spec)
    greedy = build(gt, "minimax", False, progress=False)
    assert greedy["guess"] == optimal.tree["guess"]
    answers = sorted(optimal.tree["next"])
    halves = [
        {
            "guess": greedy["guess"],
            "next": {a: (optimal.tree if i % 2 == half else greedy)["next"][a] for i, a in enumerate(answers)},
        }
        for half in (0, 1)
    ]
    costs = [measure(gt.game, t)[0].total for t in halves]
    assert min(costs) > stats.total
    interrupt_after(monkeypatch, pushes)
    with pytest.raises(Interrupted) as info:
        solve(gt, "total", progress=False, incumbents=halves, plan=Plan(min_size=10))
    assert measure(gt.game, info.value.partial.tree)[0].total == stats.total


def guided(spec: str, guides: list[dict]):
    """A driver run of the least total over the whole game with these guides (every set above 10 secrets split by
    the driver)."""
    import numpy as np

    from strategy.engine.searcher import Engine, Spec
    from strategy.search import objectives
    from strategy.search.driver import Driver, Plan
    from strategy.search.executors import InProcess

    gt = game_table(parse_game(spec))
    spec_ = Spec(gt.game, objectives.total(), False, 16)
    driver = Driver(Engine(gt, spec_), spec_, InProcess(), plan=Plan(min_size=10))
    out = driver.solve(np.arange(gt.size, dtype=np.int32), guides=guides)
    return gt, driver, out


@pytest.mark.slow
def test_a_known_tree_is_searched_first_and_caps_each_set_yet_the_tree_stays_the_canonical_one():
    """Given a worse tree (minimax, first question 1122 where the optimum asks 1123), the driver tries its question
    first at every set it splits and cuts at its value, and still proves the same value and canonical tree as
    unguided; an optimal guide leaves nothing but refutations, so fewer questions are searched exactly."""
    from strategy.build.greedy import build
    from strategy.search import objectives
    from strategy.search.known import tree_cost

    spec = "mastermind:4x6"
    optimal, stats = solved(spec)
    gt = game_table(parse_game(spec))
    greedy = build(gt, "minimax", False, progress=False)
    assert greedy["guess"] != optimal.tree["guess"]
    _, alone, plain = guided(spec, [])
    _, driver, out = guided(spec, [greedy])
    root = driver.root
    assert gt.code_str(root.probes[root.first][0]) == greedy["guess"] and root.first > 0
    assert root.guide_cut == tree_cost(gt, greedy, objectives.total()) + 1 == measure(gt.game, greedy)[0].total + 1
    assert (out.value, out.tree) == (plain.value, plain.tree) == (stats.total, optimal.tree)
    assert alone.root.first == 0 and alone.root.guide_cut == INF
    _, best, again = guided(spec, [optimal.tree])
    assert again.tree == optimal.tree and best.root.incumbent_pos == best.root.first

    def exact_probes(drv):
        stack, count = [drv.root], 0
        while stack:
            node = stack.pop()
            count += sum(1 for pos in node.launched if pos not in node.proven or pos == node.incumbent_pos)
            stack.extend(part for probe in node.launched.values() for part in probe.parts)
        return count

    assert exact_probes(best) < exact_probes(alone)


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["bulls:3x6", "mastermind:3x6", "bulls:4x7"])
@pytest.mark.parametrize("objective", ["total", "worst", "worst-then-fewest"])
def test_guides_of_any_quality_leave_every_staged_proof_and_tree_as_they_were(spec, objective):
    """Greedy trees (worse), and the proven tree itself, as incumbents: every stage (a failing feasibility stage
    included) proves the same figures and the same canonical tree as an unguided run, the driver splitting sets
    above 10 secrets."""
    from strategy.build.greedy import build
    from strategy.search.driver import Plan

    gt = game_table(parse_game(spec))
    plain = solve(gt, objective, progress=False, plan=Plan(min_size=10))
    for guides in (
        [build(gt, "minimax", False, progress=False)],
        [build(gt, "entropy", False, progress=False)],
        [plain.tree],
    ):
        guided_run = solve(gt, objective, progress=False, incumbents=guides, plan=Plan(min_size=10))
        assert (guided_run.proven, guided_run.tree) == (plain.proven, plain.tree)


def test_a_known_tree_cheaper_than_any_the_search_finds_is_reported_not_trusted(monkeypatch):
    """A guide priced one below what any question reaches would make the search refute every question of a set:
    the driver says so instead of reporting the set's value as a bound it is not."""
    from strategy.search import driver as driver_module

    spec = "bulls:3x6"
    optimal, _ = solved(spec)
    real = driver_module.merged_tree
    monkeypatch.setattr(driver_module, "merged_tree", lambda *a: (real(*a)[0] - 1, real(*a)[1]))
    with pytest.raises(RuntimeError, match="a tree known beforehand reaches"):
        guided(spec, [optimal.tree])


def test_a_refuted_set_is_bounded_by_the_questions_left_out_of_its_list_too():
    """A set's questions with a bound at the cut-off are not listed; when the listed ones are refuted far above the
    cut-off, the set's bound is the least of theirs and the left-out ones' (what a resumed run reads back from the
    store: a higher figure would refute sets it must not)."""
    from types import SimpleNamespace

    from strategy.search.driver import SetNode

    failed = []
    node = object.__new__(SetNode)
    node.done, node.cancelled, node.phase_two, node.pending, node.first_open = False, False, True, set(), 0
    node.drv = SimpleNamespace(root_beta=50, resolved=lambda n: failed.append(n.lb))
    node.parent, node.lb, node.path = None, 0, ()
    node.incumbent, node.incumbent_pos, node.guide_cut = INF, -1, INF
    node.probes = [(0, 10, 0), (1, 20, 0)]
    node.launched, node.proven = {}, {0: 90, 1: 80}  # refuted (fail-soft) far above the cut-off of 50
    node.fail_lb = 60  # a question left out at listing: its bound was at least the cut-off then
    node.check()
    assert node.done and failed == [60]


def test_merged_trees_cost_what_their_walk_says_and_respect_a_depth_bound():
    """`merged_tree` prices a tree as walking every secret does, and a depth bound rules out a tree that
    needs more questions (Mastermind 4x6: its optimal tree needs 6 questions, the minimax tree 5)."""
    import numpy as np

    from strategy.build.greedy import build
    from strategy.engine.exact import INF
    from strategy.search import objectives
    from strategy.search.known import merged_tree

    spec = "mastermind:4x6"
    gt = game_table(parse_game(spec))
    optimal, stats = solved(spec)
    greedy = build(gt, "minimax", False, progress=False)
    S = np.arange(gt.size, dtype=np.int32)
    shallow = measure(gt.game, greedy)[0]
    assert shallow.worst < stats.worst
    assert merged_tree(gt, objectives.total().array(gt.size), S, 0, [greedy])[0] == shallow.total
    assert merged_tree(gt, objectives.total().array(gt.size), S, 0, [greedy, optimal.tree])[0] == stats.total
    within = objectives.total(stats.worst - 1).array(gt.size)
    assert merged_tree(gt, within, S, 0, [optimal.tree])[0] == INF
    value, tree = merged_tree(gt, within, S, 0, [optimal.tree, greedy])
    assert stats.total < value == measure(gt.game, tree)[0].total <= shallow.total
    assert measure(gt.game, tree)[0].worst < stats.worst


@pytest.mark.slow
def test_a_consistent_only_solve_refuses_an_incumbent_that_asks_impossible_codes(tmp_path):
    """The minimum-total tree of bulls 4 of 10 without a leading zero asks codes that cannot be the
    secret: it bounds the unrestricted search, not the consistent-only one."""
    from strategy.tree import format as tree_io
    from strategy.tree.verify import impossible_question

    unrestricted = TREES / "bulls-4x10-nz-total.json"
    consistent = TREES / "bulls-4x10-nz-consistent-total.json"
    game = parse_game("bulls:4x10:nz")
    assert impossible_question(game, tree_io.load(consistent).root) is None
    assert "cannot be the secret there" in impossible_question(game, tree_io.load(unrestricted).root)
    r = run_cli(
        "solve",
        "--game",
        "bulls:4x10:nz",
        "--consistent-only",
        "--incumbent",
        str(unrestricted),
        "--quiet",
        "-o",
        str(tmp_path / "t.json"),
    )
    assert r.returncode == 2 and "cannot be the secret there" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 2 and "Traceback" not in r.stderr
    r = run_cli(
        "solve", "--game", "bulls:3x10", "--incumbent", str(unrestricted), "--quiet", "-o", str(tmp_path / "t.json")
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr and not (tmp_path / "t.json").exists()


@pytest.mark.slow
def test_an_incumbent_partial_tree_without_a_valid_bound_is_one_line(tmp_path):
    import orjson

    tree = tmp_path / "t.json"
    assert run_cli("build", "--game", "bulls:3x6", "--strategy", "entropy", "--quiet", "-o", str(tree)).returncode == 0
    doc = orjson.loads(tree.read_bytes())
    doc["objective"], doc["generator"]["bound_of"] = "partial", "total"
    for bound in ("x", -1, None):
        doc["generator"]["lower_bound"] = bound
        tree.write_bytes(orjson.dumps(doc))
        r = run_cli(
            "solve",
            "--game",
            "bulls:3x6",
            "--incumbent",
            str(tree),
            "--trust",
            str(tree),
            "--quiet",
            "-o",
            str(tmp_path / "o.json"),
        )
        # the strict loader refuses a bound of the wrong type; the solve refuses a tree with no bound at all
        line = r.stderr.strip().splitlines()[-1]
        assert r.returncode == 2 and ("without a valid bound" in line or "'generator.lower_bound'" in line), r.stderr
        assert "Traceback" not in r.stderr


@settings(max_examples=200, deadline=None)
@given(
    spec=st.sampled_from(sorted(KERNEL_GAMES)),
    n=st.integers(3, 64) | st.integers(65, exact.BITS_MAX),
    k=st.integers(3, 64) | st.integers(65, 200),
    b=st.integers(1, 6) | st.integers(7, 40),
    d=st.integers(0, 3),
    kind=st.sampled_from(["total", "within", "fewest"]),
    depth=st.integers(3, 9),
    consistent=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
@example(spec="bulls:4x9", n=5, k=5, b=7, d=1, kind="within", depth=3, consistent=True, seed=1)  # infeasible: INF exact
@example(spec="bulls:4x9", n=256, k=150, b=9, d=1, kind="total", depth=3, consistent=False, seed=2)  # four words
def test_bit_set_part_bounds_equal_bound_set(spec, n, k, b, d, kind, depth, consistent, seed):
    """A part bounded from its node's answer masks gets the value, shortcut probe and stored entry that
    bound_set gives the part's own members."""
    gt = KERNEL_GAMES[spec]
    N, n_classes = gt.size, len(gt.answers)
    rng = np.random.default_rng(seed)
    n = min(n, N)
    S = np.sort(rng.choice(N, n, replace=False)).astype(np.int32)
    bits = np.sort(rng.choice(n, min(k, n), replace=False))
    cost = _costs(kind, depth)
    bounds = exact.make_bounds(cost, n_classes, exact.TABLE_DEPTHS, 300)
    params = np.array([n_classes, gt.win, gt.game.symbols, 0, int(consistent), int(kind == "total")], dtype=np.int64)
    zs = rng.integers(-(2**63), 2**63 - 1, size=(4, N + 32), dtype=np.int64)
    b = min(b, n_classes - 1)
    tt_set, tt_part = (np.zeros((1 << 10, 4), dtype=np.int64) for _ in range(2))
    counters = np.zeros(exact.N_COUNTERS, dtype=np.int64)
    expected = exact.bound_set(
        gt.table, params, bounds, zs, tt_set, counters, exact.make_scratch(N, n_classes), S[bits], d, b
    )
    mask = np.zeros(exact.words_for(n), dtype=np.uint64)
    for i in bits:
        mask[i >> 6] |= np.uint64(1) << np.uint64(i & 63)
    got = exact.bound_part(
        params, bounds, zs, tt_part, counters, S, exact.answer_masks(gt.table, S, n_classes), mask, d, b
    )
    assert got == expected and np.array_equal(tt_part, tt_set)
    assert np.array_equal(exact.members(S, mask), S[bits])


@settings(max_examples=150, deadline=None)
@given(n=st.integers(3, 12), slack=st.integers(0, 6), seed=st.integers(0, 2**32 - 1))
def test_a_node_settled_by_its_scan_has_that_value(n, slack, seed):
    """first_optimal names a probe only when its bound is the set's exact value (checked against the
    exhaustive search), whatever valid lower bound of the set the caller knew."""
    spec = "bulls:3x5"
    gt = game_table(parse_game(spec))
    N, n_classes = gt.size, len(gt.answers)
    S = np.sort(np.random.default_rng(seed).choice(N, n, replace=False)).astype(np.int32)
    value = brute_force_value(spec, False)(tuple(int(s) for s in S))
    bounds = exact.make_bounds(_costs("total", 0), n_classes, exact.TABLE_DEPTHS, 300)
    probes = np.arange(N, dtype=np.int32)
    lb, sq, ex = np.empty(N, dtype=np.int64), np.empty(N, dtype=np.int64), np.empty(N, dtype=np.bool_)
    exact.scan(gt.table, S, probes, 0, n_classes - 1, bounds, n_classes, gt.win, lb, sq, ex)
    known = max(0, value - slack)
    i = exact.first_optimal(lb, ex, N, known, exact.INF)
    assert exact.first_optimal(lb, ex, N, -1, exact.INF) == -1
    if i >= 0:
        assert lb[i] == value and ex[i] and not any(lb[j] == value and ex[j] for j in range(i))
    else:
        assert not any(lb[j] == max(known, lb.min()) and ex[j] for j in range(N))


SEARCH_GAMES = {spec: game_table(parse_game(spec)) for spec in ("bulls:2x6", "bulls:3x5", "mastermind:3x3")}
_SEARCH_ENGINES: dict = {}


@settings(max_examples=80, deadline=None)
@given(
    spec=st.sampled_from(sorted(SEARCH_GAMES)),
    questions=st.lists(st.integers(0, 10**6), max_size=2),
    secret=st.integers(0, 10**6),
    offset=st.integers(-4, 3),
)
def test_a_search_below_a_cut_off_is_exact_or_a_bound_at_or_above_it(spec, questions, secret, offset):
    """The contract every cut-off relies on (the parts' null-window tests, the deep searches, the driver's
    tasks): below the cut-off, the exact value and a probe; at or above it, that or a lower bound no smaller
    than the cut-off and no larger than the value. Checked against the exhaustive search on sets reached by real
    questions, with one engine per game across examples, as a worker keeps its transposition table."""
    from strategy.engine.searcher import Engine, Spec
    from strategy.search.objectives import total

    gt = SEARCH_GAMES[spec]
    engine = _SEARCH_ENGINES.get(spec)
    if engine is None:
        engine = _SEARCH_ENGINES[spec] = Engine(gt, Spec(gt.game, total(), False, 12))
    history = np.array([q % gt.size for q in questions], dtype=np.int64)
    s = secret % gt.size
    if s in history:
        return
    S = np.flatnonzero(np.all(gt.table[history][:, :] == gt.table[history, s][:, None], axis=0)).astype(np.int32)
    d = len(history)
    value = d * len(S) + brute_force_value(spec, False)(tuple(int(x) for x in S))
    beta = value + offset
    v, probe = engine.solve(S, d, beta, history, engine.root_branching)
    if probe >= 0 or value < beta:
        assert (v, probe >= 0) == (value, True)
    else:
        assert beta <= v <= value


@pytest.mark.slow
def test_a_given_tree_that_meets_a_proven_bound_settles_the_stage_with_no_search(tmp_path):
    """A least-total tree is a least total within any depth it keeps to, and a tree within D questions
    settles "is D enough?": Mastermind 4x6's worst case with its proven total-within-5 tree given needs
    only the search that refutes 4. A bound proven with consistent probes only settles nothing for a
    search that may ask any code (its tree, worse, is only the first cut-off), and the tree is the same."""
    import orjson

    shipped = TREES / "mastermind-4x6-total-within-5.json"
    r = run_cli(
        "solve",
        "--game",
        "mastermind:4x6",
        "--objective",
        "worst",
        "--incumbent",
        str(shipped),
        "--quiet",
        "--trust",
        str(shipped),
        "-o",
        str(tmp_path / "w.json"),
    )
    assert r.returncode == 0, r.stderr
    assert "proved: minimum worst case 5" in r.stderr and "within 5 questions 5626" in r.stderr
    assert "settled with no search: feasible-5, total-within-5" in r.stderr
    digest = hashlib.sha256(shipped.read_bytes()).hexdigest()
    assert f"relies on the bound claimed by 'mastermind-4x6-total-within-5.json' (sha256 {digest})" in r.stderr
    doc = orjson.loads((tmp_path / "w.json").read_bytes())
    assert doc["generator"]["run"]["settled_by_a_given_tree"] == ["feasible-5", "total-within-5"]
    assert doc["generator"]["proven"]["relies_on"] == [{"file": shipped.name, "sha256": digest}]
    assert doc["stats"]["total"] == 5626 and doc["stats"]["worst"] == 5
    # untrusted, the tree settles only what the game proves of it (a tree within 5 exists); the total within 5
    # is searched, and proven the same
    r = run_cli(
        "solve",
        "--game",
        "mastermind:4x6",
        "--objective",
        "worst",
        "--incumbent",
        str(shipped),
        "--quiet",
        "-o",
        str(tmp_path / "u.json"),
    )
    assert r.returncode == 0 and "settled with no search: feasible-5 (" in r.stderr, r.stderr
    doc = orjson.loads((tmp_path / "u.json").read_bytes())
    assert doc["generator"]["proven"] == {"worst": 5, "total": 5626} and doc["stats"]["total"] == 5626
    consistent = tmp_path / "c.json"
    assert (
        run_cli("solve", "--game", "mastermind:4x6", "--consistent-only", "--quiet", "-o", str(consistent)).returncode
        == 0
    )
    alone, given = tmp_path / "alone.json", tmp_path / "given.json"
    assert run_cli("solve", "--game", "mastermind:4x6", "--quiet", "-o", str(alone)).returncode == 0
    r = run_cli("solve", "--game", "mastermind:4x6", "--incumbent", str(consistent), "--quiet", "-o", str(given))
    assert r.returncode == 0 and "settled" not in r.stderr and "proved: minimum total 5625" in r.stderr
    assert orjson.loads(given.read_bytes())["tree"] == orjson.loads(alone.read_bytes())["tree"]


def test_a_solved_tree_brings_the_bounds_its_proof_holds_for():
    """Which stage each kind of solved tree bounds, by its proof record: a least total bounds "total"; a
    worst-case solve's total within its worst case; a worst-then-fewest solve's fewest at it. A tree solved
    with consistent probes only bounds only consistent-only searches; a greedy tree bounds nothing."""
    from strategy.search.known import claimed_bounds as _proven_bound
    from strategy.tree import format as tree_io

    def doc(name):
        return tree_io.load(TREES / f"{name}.json")

    total, worst, fewest = (
        doc("mastermind-5x5-total"),
        doc("mastermind-5x5-worst"),
        doc("mastermind-5x5-worst-then-fewest"),
    )
    consistent = doc("mastermind-5x5-consistent-total")
    assert _proven_bound(total, False) == {"total": total.generator["proven"]["total"]}
    w = worst.generator["proven"]
    assert _proven_bound(worst, False) == {f"total-within-{w['worst']}": w["total"]}
    f = fewest.generator["proven"]
    assert _proven_bound(fewest, False) == {f"fewest-at-{f['worst']}": f["fewest_at_worst"]}
    assert _proven_bound(consistent, False) == {}
    assert _proven_bound(consistent, True) == {"total": consistent.generator["proven"]["total"]}
    greedy = tree_io.TreeDoc(total.game, total.root, "heuristic", {"tool": "test"})
    assert _proven_bound(greedy, False) == {}
