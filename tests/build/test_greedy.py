"""Greedy trees verify, and reproduce the published greedy totals where tie-breaking agrees."""

from __future__ import annotations

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategy.build.greedy import STRATEGIES, build
from strategy.engine.symmetry import canonical_probes, position_perms
from strategy.engine.table import game_table
from strategy.rules import parse_game
from strategy.tree.format import TreeDoc
from strategy.tree.verify import verify


def stats_of(gt, strategy, **kw):
    return verify(TreeDoc(gt.game, build(gt, strategy, progress=False, **kw)))


@pytest.mark.parametrize("spec", ["bulls:3x6", "bulls:3x10", "bulls:3x7:nz", "mastermind:3x4", "mastermind:2x2"])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_strategy_solves_every_secret(spec, strategy):
    gt = game_table(parse_game(spec))
    stats = stats_of(gt, strategy)
    assert stats.secrets == gt.size
    consistent = stats_of(gt, strategy, consistent_only=True)
    assert consistent.secrets == gt.size


@pytest.mark.parametrize(
    "strategy,total,worst",
    [("expected-size", 26551, 7), ("most-parts", 26751, 8)],
)
def test_bulls4_published_greedy_totals(bulls4, strategy, total, worst):
    stats = stats_of(bulls4, strategy)
    assert (stats.total, stats.worst) == (total, worst)


@pytest.mark.parametrize(
    "strategy,total,worst",
    [("expected-size", 5696, None), ("entropy", 5722, None), ("most-parts", 5668, None), ("minimax", 5801, 5)],
)
def test_mastermind46_published_greedy_totals(mm46, strategy, total, worst):
    stats = stats_of(mm46, strategy)
    assert stats.total == total
    if worst is not None:
        assert stats.worst == worst


def test_first_probe_and_seed(mm46):
    root = build(mm46, "minimax", first=mm46.index((0, 0, 1, 1)), progress=False)
    assert root["guess"] == "0011"
    a = build(mm46, "random-consistent", seed=1, progress=False)
    b = build(mm46, "random-consistent", seed=1, progress=False)
    c = build(mm46, "random-consistent", seed=2, progress=False)
    assert a == b and a != c


def test_symmetry_keeps_one_probe_per_class(bulls4):
    game = bulls4.game
    perms = position_perms(4, False)
    probes = np.arange(bulls4.size, dtype=np.int32)
    root = canonical_probes(
        bulls4.codes, bulls4.masks, probes, np.zeros(0, np.int64), np.zeros(0, np.int64), perms, 10, False, probes
    )
    assert [bulls4.code_str(i) for i in root] == ["0123"]
    after = canonical_probes(
        bulls4.codes, bulls4.masks, probes, np.array([0]), np.zeros(0, np.int64), perms, 10, False, probes
    )
    assert len(after) == 20  # Tanaka's 20 distinct second questions
    nz = game_table(parse_game("bulls:4x10:nz"))
    assert (
        len(
            canonical_probes(
                nz.codes,
                nz.masks,
                np.arange(nz.size, dtype=np.int32),
                np.zeros(0, np.int64),
                np.zeros(0, np.int64),
                position_perms(4, True),
                10,
                True,
                np.arange(nz.size, dtype=np.int32),
            )
        )
        == 2
    )
    del game


@pytest.mark.parametrize("spec", ["bulls:3x6", "mastermind:3x4", "bulls:3x5:nz"])
def test_every_probe_has_an_equivalent_representative(spec):
    """Each probe splits the candidates like some kept probe (same multiset of part sizes)."""
    gt = game_table(parse_game(spec))
    g = gt.game
    rng = np.random.default_rng(0)
    perms = position_perms(g.length, not g.leading_zero)
    probes = np.arange(gt.size, dtype=np.int32)
    for trial in range(6):
        history = rng.integers(0, gt.size, size=1 + trial % 2)
        cand = np.arange(gt.size)
        for q in history:
            cand = cand[gt.table[q, cand] == gt.table[q, rng.choice(cand)]]
        answers = gt.table[history, cand[0]].astype(np.int64)  # a symmetry may swap questions with equal answers
        kept = canonical_probes(
            gt.codes, gt.masks, probes, history.astype(np.int64), answers, perms, g.symbols, not g.leading_zero, cand
        )

        def signature(p: int, cand: np.ndarray = cand) -> tuple[int, ...]:
            return tuple(sorted(np.bincount(gt.table[p, cand], minlength=len(gt.answers)).tolist()))

        kept_signatures = {signature(p) for p in kept}
        assert all(signature(p) in kept_signatures for p in probes)
        if len(history) == 1:
            assert len(kept) < len(probes)


@settings(max_examples=25, deadline=None)
@given(
    spec=st.sampled_from(["bulls:2x5", "bulls:3x5", "bulls:3x6:nz", "mastermind:2x4", "mastermind:3x3", "bulls:1x4"]),
    strategy=st.sampled_from(STRATEGIES),
    consistent_only=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_every_secret_is_solved_property(spec, strategy, consistent_only, seed):
    gt = game_table(parse_game(spec))
    stats = verify(TreeDoc(gt.game, build(gt, strategy, consistent_only, seed=seed, progress=False)))
    assert stats.secrets == gt.size and sum(stats.depth_counts) == gt.size


@pytest.mark.parametrize(
    "spec",
    ["bulls:3x6", "bulls:4x7:nz", "mastermind:3x4", "mastermind:4x3", "bulls:2x3", "mastermind:2x9", "bulls:5x8"],
)
def test_on_the_fly_answers_are_the_rules(spec):
    """The builder's table-free answer kernels give rules.feedback on every pair (a sample for big games)."""
    from strategy.engine import greedy
    from strategy.engine.table import game_codes
    from strategy.rules import feedback

    game = parse_game(spec)
    gc = game_codes(game)
    codes = gc.codes
    n = gc.size
    rng = np.random.default_rng(3)
    pairs = (
        [(s, p) for s in range(n) for p in range(n)]
        if n <= 300
        else [tuple(rng.integers(n, size=2)) for _ in range(20000)]
    )
    sym, occ, cnt = greedy.code_layout(codes, game.symbols)
    packs = greedy.packs(game.length, game.symbols, game.distinct)
    packed = greedy.packed_layout(codes, game.symbols, game.distinct)
    for s, p in pairs:
        truth = feedback(tuple(codes[s]), tuple(codes[p]))
        assert gc.answers[greedy.answer_of(sym, occ, cnt, gc.lut, gc.width, s, p)] == truth
        if packs:
            c = int(
                greedy._slot(
                    *(packed[i][p] for i in range(4)), *(packed[i][s] for i in range(4)), game.distinct, game.length
                )
            )
            h, common = truth[0], truth[0] + truth[1]
            assert c == common * (common + 1) // 2 + h


def test_large_builds_need_no_table():
    """A build never makes the N×N answer table (it would be 914 MB for bulls 5 of 10)."""
    from strategy.build.greedy import build_checked
    from strategy.engine import table as feedback_table

    feedback_table.game_table.cache_clear()
    tree, stats = build_checked(parse_game("bulls:5x8"), "expected-size", progress=False)
    assert feedback_table.game_table.cache_info().currsize == 0
    assert stats.secrets == 6720 and stats.total == verify(TreeDoc(parse_game("bulls:5x8"), tree)).total


def test_parts_above_65535_secrets_are_counted_exactly():
    """Nodes of more than 65535 secrets (the root of Mastermind 6x8, children of 6x9's) count answers in
    32-bit counters. Repeating each candidate r times multiplies every part by r, which keeps each rule's
    best probe: so the choice over 3000 copies of 40 codes must be the choice over the 40 codes."""
    from strategy.engine import greedy
    from strategy.engine.table import game_codes

    game = parse_game("mastermind:4x6")
    gc = game_codes(game)
    sym, occ, cnt = greedy.code_layout(gc.codes, game.symbols)
    unique = np.arange(40, dtype=np.int32)
    repeated = np.repeat(unique, 3000)
    probes = np.arange(0, gc.size, 7, dtype=np.int32)
    for rule in range(4):
        choices = []
        for cand in (unique, repeated):
            m = np.arange(len(cand) + 1)
            klogk = np.where(m > 1, m * np.log(np.maximum(m, 1)), 0.0)
            choices.append(
                greedy.best_probe_serial(
                    sym, occ, cnt, gc.lut, gc.width, cand, probes, len(gc.answers), gc.win, rule, klogk
                )
            )
        assert choices[0] == choices[1], rule


@pytest.mark.parametrize(
    "spec,strategy,consistent_only",
    [
        ("bulls:4x10", "expected-size", False),
        ("mastermind:4x6", "entropy", False),
        ("bulls:4x9:nz", "most-parts", True),
        ("mastermind:5x4", "minimax", False),
    ],
)
def test_threads_build_the_same_tree(spec, strategy, consistent_only):
    """Subtrees built by several threads at once, joined under the root, make the serial build's tree
    (node for node, in the same order)."""
    from strategy.build.greedy import PARALLEL_TREE, build_checked

    game = parse_game(spec)
    serial, stats = build_checked(game, strategy, consistent_only, progress=False, threads=1)
    assert stats.secrets >= PARALLEL_TREE
    threaded, threaded_stats = build_checked(game, strategy, consistent_only, progress=False, threads=3)
    assert orjson.dumps(threaded) == orjson.dumps(serial) and threaded_stats == stats


def test_threads_build_the_same_subtree_after_a_question():
    """The same holds for the tree of the secrets left after a question (the exact search's fallback)."""
    from strategy.build.greedy import PARALLEL_TREE, build_checked
    from strategy.engine.table import game_codes
    from strategy.rules import feedback

    game = parse_game("bulls:4x10")
    gc = game_codes(game)
    first = gc.index((0, 1, 2, 3))
    left = np.array([i for i in range(gc.size) if feedback(tuple(gc.codes[i]), (0, 1, 2, 3)) == (0, 1)], np.int32)
    assert len(left) >= PARALLEL_TREE
    trees = [
        build_checked(game, "entropy", progress=False, candidates=left, history=(first,), threads=t) for t in (1, 2)
    ]
    assert orjson.dumps(trees[0][0]) == orjson.dumps(trees[1][0]) and trees[0][1] == trees[1][1]
    assert trees[0][1].secrets == len(left)


# -- exact endgames (strategy build --exact-below N) --------------------------------------------------------------

from strategy.engine.searcher import Engine, Spec  # noqa: E402
from strategy.search import objectives  # noqa: E402
from strategy.search.endgame import UNFINISHED, endgames, exact_endgame, from_store  # noqa: E402
from strategy.search.known import tree_cost  # noqa: E402
from strategy.tree.verify import impossible_question  # noqa: E402


@pytest.mark.parametrize(
    "spec, consistent_only, optimum",
    [
        ("bulls:3x6", False, 436),  # mmstrat's logs
        ("mastermind:4x6", False, 5625),  # Koyama & Lai 1993
        ("mastermind:4x6", True, 5660),  # supermastermind's consistent-only optimum
    ],
)
def test_an_endgame_as_large_as_the_game_is_its_proven_optimum(spec, consistent_only, optimum):
    """With N at least the number of secrets, the whole tree is one endgame: the published optimum."""
    gt = game_table(parse_game(spec))
    greedy = build(gt, "expected-size", consistent_only, progress=False)
    tree, record = exact_endgame(gt, greedy, gt.size, consistent_only, progress=False)
    stats = verify(TreeDoc(gt.game, tree))
    assert stats.total == optimum and record["subtrees"] == 1
    assert record["saved"] == verify(TreeDoc(gt.game, greedy)).total - optimum > 0
    assert not consistent_only or impossible_question(gt.game, tree) is None


@settings(max_examples=12, deadline=None)
@given(
    spec=st.sampled_from(["bulls:3x6", "mastermind:3x4", "bulls:3x7:nz", "mastermind:4x4"]),
    strategy=st.sampled_from(["entropy", "most-parts", "minimax", "random-consistent"]),
    below=st.integers(3, 80),
    consistent_only=st.booleans(),
)
def test_every_endgame_becomes_optimal_and_the_rest_stays(spec, strategy, below, consistent_only):
    """Each largest subtree over at most N secrets ends with the exact engine's value for its set; the questions
    above them stay the heuristic's; the total never grows and every secret is still found."""
    gt = game_table(parse_game(spec))
    greedy = build(gt, strategy, consistent_only, progress=False)
    tree, record = exact_endgame(gt, greedy, below, consistent_only, threads=2, progress=False)
    before, after = verify(TreeDoc(gt.game, greedy)), verify(TreeDoc(gt.game, tree))
    assert after.total == before.total - record["saved"] <= before.total
    costs = objectives.total()
    old, new = endgames(gt, greedy, below, costs), endgames(gt, tree, below, costs)
    assert [(e.path, e.S.tolist()) for e in old] == [(e.path, e.S.tolist()) for e in new]
    engine = Engine(gt, Spec(gt.game, objectives.total(), consistent_only, 16))
    for e in new:
        exact_value = engine.value(e.S, e.depth, e.history, engine.branching(e.S))
        assert tree_cost(gt, e.subtree, costs, e.S, e.depth) == exact_value
    assert not consistent_only or impossible_question(gt.game, tree) is None


def test_an_endgame_budget_stops_the_searches_and_keeps_the_tree(bulls4):
    """The exact search of the whole of bulls 4 of 10 takes several seconds: after a budget of 0.5 s it stops,
    the greedy tree comes back as it was, and the record says the endgame is unfinished."""
    greedy = build(bulls4, "entropy", progress=False)
    tree, record = exact_endgame(bulls4, greedy, bulls4.size, budget=0.5, progress=False)
    assert tree is greedy and (record["subtrees"], record["improved"], record["unfinished"]) == (1, 0, 1)
    assert record["seconds"] < 3


@pytest.mark.parametrize("spec, strategy, below", [("mastermind:4x4", "entropy", 40), ("bulls:3x7", "minimax", 60)])
def test_a_store_keeps_each_endgame_finished_and_a_rerun_searches_none_again(tmp_path, spec, strategy, below):
    """Endgames with a store: a run leaves an answer for every endgame it finished (a better subtree, or the
    proof that the tree's own is optimal); a rerun takes them all from the store and makes the same tree, and the
    improved tree's endgames are all settled by it."""
    from strategy.search.store import Store

    gt = game_table(parse_game(spec))
    greedy = build(gt, strategy, progress=False)
    alone, record = exact_endgame(gt, greedy, below, progress=False)
    assert record["improved"] and "from_store" not in record
    store = Store(tmp_path / "s.db", gt.game, False)
    first, record1 = exact_endgame(gt, greedy, below, progress=False, store=store)
    assert len(store) == record1["subtrees"] and record1["from_store"] == 0
    store.close()
    store = Store(tmp_path / "s.db", gt.game, False)  # read back from the file
    again, record2 = exact_endgame(gt, greedy, below, progress=False, store=store)
    settled, record3 = exact_endgame(gt, again, below, progress=False, store=store)
    store.close()
    assert first == again == alone and settled is again
    assert record2["from_store"] == record2["subtrees"] and record2["saved"] == record1["saved"] == record["saved"]
    assert record3["from_store"] == record3["subtrees"] and (record3["improved"], record3["saved"]) == (0, 0)


def test_an_endgame_the_budget_stopped_leaves_nothing_in_the_store(tmp_path, bulls4):
    from strategy.search.store import Store

    greedy = build(bulls4, "entropy", progress=False)
    store = Store(tmp_path / "s.db", bulls4.game, False)
    tree, record = exact_endgame(bulls4, greedy, bulls4.size, budget=0.5, progress=False, store=store)
    assert tree is greedy and record["unfinished"] == 1 and len(store) == 0
    store.close()


def test_a_budget_banks_the_smallest_endgames_first(tmp_path, bulls4):
    """Under a budget the endgames go smallest first: one thread and 0.5 s settle the small children of the entropy
    tree's root, whose largest (1440 secrets) takes seconds; largest first it would have held the thread to the end
    and settled none."""
    from strategy.search.store import Store

    greedy = build(bulls4, "entropy", progress=False)
    store = Store(tmp_path / "s.db", bulls4.game, False)
    _, record = exact_endgame(bulls4, greedy, 1500, budget=0.5, threads=1, progress=False, store=store)
    games = sorted(endgames(bulls4, greedy, 1500, objectives.total()), key=lambda e: len(e.S))
    settled = [from_store(store, bulls4, e, objectives.total(), False) is not UNFINISHED for e in games]
    store.close()
    assert record["subtrees"] == len(games) and record["unfinished"] == settled.count(False) >= 1
    assert settled.count(True) >= 4 and settled == sorted(settled, reverse=True)  # a prefix of the smallest


def test_fewest_at_the_last_depth_endgames_keep_the_depth_and_put_fewer_there(bulls4):
    """Endgames for the fewest secrets at the tree's worst depth D: never deeper than D, never more secrets at D,
    and each endgame ends with the exact engine's fewest for its set."""
    greedy = build(bulls4, "expected-size", progress=False)
    before = verify(TreeDoc(bulls4.game, greedy))
    costs = objectives.at_last_level(before.worst)
    tree, record = exact_endgame(bulls4, greedy, 400, costs=costs, progress=False)
    after = verify(TreeDoc(bulls4.game, tree))
    assert after.worst <= before.worst and record["objective"] == f"fewest-at-{before.worst}"
    at_worst = after.depth_counts[before.worst] if after.worst == before.worst else 0  # none left there: shallower
    assert at_worst == before.depth_counts[-1] - record["saved"] < before.depth_counts[-1]
    engine = Engine(bulls4, Spec(bulls4.game, costs, False, 16))
    for e in endgames(bulls4, tree, 400, costs)[:40]:
        assert tree_cost(bulls4, e.subtree, costs, e.S, e.depth) == engine.value(
            e.S, e.depth, e.history, engine.branching(e.S)
        )
