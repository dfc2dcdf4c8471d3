"""The page's exact search and its coach (the "You ask" tab) in chromium: the page's values are the engine's on
random positions, and the coach compares like with like (exact with exact, the tree's play with the tree's play,
bounds labelled as bounds)."""

from __future__ import annotations

import random

import pytest

from strategy.engine.table import game_table
from strategy.export.page import render
from strategy.rules import feedback
from strategy.search.analyse import Analyser, position_from_history
from strategy.tree.format import load

from ..conftest import TREES
from .test_page import browser, open_page  # noqa: F401 (the module's own browser)

pytestmark = [pytest.mark.slow, pytest.mark.browser]

NAMES = ("bulls-4x10-total", "mastermind-4x6-total", "bulls-3x10-total")


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    folder = tmp_path_factory.mktemp("coach")
    out = {}
    for name in NAMES:
        out[name] = folder / f"{name}.html"
        out[name].write_text(render(load(TREES / f"{name}.json")))
    return out


def random_positions(game, rng: random.Random, count: int, largest: int):
    """Histories of random questions answered by a random secret, leaving 3 to `largest` secrets."""
    codes = game.codes()
    found = 0
    while found < count:
        secret, history = rng.choice(codes), []
        for _ in range(4):
            q = rng.choice(codes)
            a = feedback(secret, q)
            if a == game.win:
                break
            history.append((game.format_code(q), game.format_answer(a)))
        if len(history) < 4:
            continue
        yield history
        found += 1


@pytest.mark.parametrize("name,seed", [("bulls-4x10-total", 1), ("mastermind-4x6-total", 2), ("bulls-3x10-total", 3)])
def test_the_pages_exact_search_is_the_engines(browser, pages, name, seed):  # noqa: F811
    """On random positions of up to 32 secrets: the best value, and the value of random questions (idle ones too),
    computed in the page equal the engine's exact values."""
    open_page(browser, pages[name])
    gt = game_table(load(TREES / f"{name}.json").game)
    game = gt.game
    analyser = Analyser(gt)
    rng = random.Random(seed)
    for history in random_positions(game, rng, 6, 32):
        pos = position_from_history(gt, history)
        if not 3 <= pos.n <= 32:
            continue
        questions = [game.format_code(rng.choice(game.codes())) for _ in range(3)] + [history[0][0]]
        got = browser.execute_script(
            "const c = PAGE.candidates(arguments[0]);"
            "const f = PAGE.exactSearch(c, arguments[1].map(q => PAGE.readCode(q)[0]), 60000);"
            "return f && [PAGE.fmt(PAGE.CODES[f.best]), f.value, f.of]",
            history,
            questions,
        )
        assert got is not None, history
        best, value, values = got
        analysis = analyser.analyse(pos, lines=False)
        assert value == analysis.best.lower[0], history
        assert analyser.grade(pos, best).cost() == ((0,), (0,)), (history, best)
        assert values == [analyser.grade(pos, q).row.lower[0] for q in questions], (history, questions)


def test_the_coach_compares_like_with_like(browser, pages):  # noqa: F811
    """On the tree's path with many secrets left: the tree's play against the tree's play, or labelled bounds;
    with few left: exact against exact, the values the engine proves. Never an estimate."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    name, secret = "bulls-4x10-total", "5071"
    open_page(browser, pages[name], secret=secret)
    gt = game_table(load(TREES / f"{name}.json").game)
    game = gt.game
    browser.find_element(By.CSS_SELECTOR, "nav button[data-tab=you]").click()
    box = browser.find_element(By.ID, "you-input")
    browser.find_element(By.ID, "you-hint").click()
    assert browser.find_element(By.ID, "you-msg").text.startswith("Hint: 0123, the tree's question: 5.21 questions")
    questions = ["0123", "4567", "8901", "2345"]
    history = []
    for q in questions:
        box.send_keys(q, Keys.ENTER)
        history.append((q, game.format_answer(feedback(game.read_code(secret), game.read_code(q)))))
    rows = [r.text for r in browser.find_elements(By.CSS_SELECTOR, "#you-history tr")][1:]
    comparisons = rows[1::2]
    assert "estimate" not in " ".join(rows)
    # 1: on the tree's path, the tree's own question: its play's value on both lines
    assert comparisons[0].count("(the tree's play)") == 2 and "the tree's 0123" in comparisons[0]
    # 2: off the path, many secrets: your question's proven bounds against the tree's play
    assert "(proven bounds)" in comparisons[1] or "(a proven bound)" in comparisons[1]
    # the last, with few secrets left: exact against exact, as the engine proves them
    analyser = Analyser(gt)
    for i, text in enumerate(comparisons):
        pos = position_from_history(gt, history[:i])
        if pos.n > 32:
            continue
        grade = analyser.grade(pos, questions[i])
        best = grade.best.best
        assert "yours: parts" in text and f"· {grade.row.lower[0] / pos.n:.2f} (exact)" in text
        assert f"· {best.lower[0] / pos.n:.2f} (exact)" in text and "the best, " in text
        break
    pos = position_from_history(gt, history)
    if 3 <= pos.n <= 32:
        browser.find_element(By.ID, "you-hint").click()
        best = analyser.analyse(pos, top=1, lines=False).best
        hint = browser.find_element(By.ID, "you-msg").text
        assert hint.endswith(
            f"the best question: {best.lower[0] / pos.n:.2f} questions on average from here, this one included (exact)."
        )
        assert analyser.grade(pos, hint.split()[1].rstrip(",")).cost() == ((0,), (0,))
    else:
        pytest.fail(f"no comparison with few secrets: {rows}")
