"""The web page in a real browser (Debian's chromium, driven by Selenium through chromedriver): the
JavaScript rules equal rules.feedback, complete games through the page's buttons and keys follow the
walker question by question, and the page makes no network request."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from strategy.export.page import render, script_json
from strategy.play.walker import Walker
from strategy.rules import feedback, parse_game
from strategy.tree.format import TreeDoc, dumps, load
from strategy.tree.verify import measure

from ..conftest import ROOT, TREES

pytestmark = [pytest.mark.slow, pytest.mark.browser]

SHOTS = ROOT / "build" / "screenshots"
CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")


@pytest.fixture(scope="module")
def browser():
    if not (CHROMIUM and CHROMEDRIVER):
        pytest.fail("the page tests need Debian's chromium and chromium-driver (.ci/run installs them)")
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1200,900",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pages")
    out = {}
    for name in ("bulls-4x10-total", "mastermind-4x6-total", "bulls-3x10-total"):
        path = folder / f"{name}.html"
        path.write_text(render(load(TREES / f"{name}.json")))
        out[name] = path
    return out


def open_page(browser, path: Path, secret: str | None = None) -> None:
    browser.get(path.as_uri() + (f"#secret={secret}" if secret else ""))
    browser.refresh() if secret else None
    assert browser.execute_script("return window.PAGE !== undefined")


def js_answers(browser, pairs: list[tuple[str, str]]) -> list[tuple[int, int]]:
    out = []
    for i in range(0, len(pairs), 4000):
        chunk = pairs[i : i + 4000]
        out += [
            tuple(a)
            for a in browser.execute_script(
                "return arguments[0].map(([s, p]) => PAGE.feedback(PAGE.readCode(s)[0], PAGE.readCode(p)[0]))", chunk
            )
        ]
    return out


@pytest.mark.parametrize(
    "name,sample", [("bulls-3x10-total", None), ("bulls-4x10-total", 20000), ("mastermind-4x6-total", 20000)]
)
def test_the_pages_rules_are_the_rules(browser, pages, name, sample):
    open_page(browser, pages[name])
    game = load(TREES / f"{name}.json").game
    codes = [game.format_code(c) for c in game.codes()]
    assert browser.execute_script("return PAGE.CODES.map(PAGE.fmt)") == codes  # same codes, same order
    if sample is None:  # every pair, one row of answers per secret computed in the page
        rows = browser.execute_script(
            "return PAGE.CODES.map(s => PAGE.CODES.map(p => PAGE.feedback(s, p).join(',')).join(' '))"
        )
        parsed = [game.read_code(c) for c in codes]
        assert rows == [" ".join("%d,%d" % feedback(s, p) for p in parsed) for s in parsed]
        return
    rng = random.Random(7)
    pairs = [(rng.choice(codes), rng.choice(codes)) for _ in range(sample)]
    got = js_answers(browser, pairs)
    assert got == [feedback(game.read_code(s), game.read_code(p)) for s, p in pairs]


def click_answer(browser, h: int, b: int, keyboard: bool) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    if keyboard:
        browser.find_element(By.TAG_NAME, "body").send_keys(str(h), str(b), Keys.ENTER)
        return
    browser.find_element(By.CSS_SELECTOR, f"#ask-picker button[data-k=h][data-v='{h}']").click()
    browser.find_element(By.CSS_SELECTOR, f"#ask-picker button[data-k=b][data-v='{b}']").click()
    browser.find_element(By.ID, "ask-send").click()


@pytest.mark.parametrize("name,games", [("bulls-4x10-total", 8), ("mastermind-4x6-total", 6)])
def test_complete_games_follow_the_walker(browser, pages, name, games):
    """The secret the tree finds last first (its longest game), then random ones."""
    from selenium.webdriver.common.by import By

    open_page(browser, pages[name])
    walker = Walker.load(TREES / f"{name}.json")
    game = walker.game
    need = measure(game, walker.doc.root)[1]
    rng = random.Random(11)
    codes = game.codes()
    secrets = [game.read_code(max(need, key=need.get))] + [rng.choice(codes) for _ in range(games - 1)]
    for g, secret in enumerate(secrets):
        browser.find_element(By.ID, "ask-new").click()
        history = []
        for _ in range(12):
            shown = browser.find_element(By.ID, "ask-question").text
            assert shown == walker.next_guess(history), (game.format_code(secret), history)
            h, b = feedback(secret, game.read_code(shown))
            click_answer(browser, h, b, keyboard=g % 2 == 1)
            history.append((shown, f"{h},{b}"))
            if (h, b) == game.win:
                break
        assert history[-1][0] == game.format_code(secret)
        assert "Solved in" in browser.find_element(By.ID, "ask-msg").text


def test_impossible_answers_undo_and_corrections(browser, pages):
    from selenium.webdriver.common.by import By

    open_page(browser, pages["bulls-4x10-total"])
    browser.find_element(By.ID, "ask-new").click()
    click_answer(browser, 3, 1, keyboard=False)
    assert "impossible" in browser.find_element(By.ID, "ask-msg").text
    assert browser.execute_script("return PAGE.ask.history.length") == 0
    click_answer(browser, 0, 2, keyboard=False)
    second = browser.find_element(By.ID, "ask-question").text
    browser.find_element(By.ID, "ask-undo").click()
    assert browser.find_element(By.ID, "ask-question").text == "0123"
    click_answer(browser, 0, 2, keyboard=False)
    assert browser.find_element(By.ID, "ask-question").text == second
    # a wrong answer, then an answer that contradicts it: explained, then corrected through the history
    click_answer(browser, 4, 0, keyboard=False)  # "all hits" for a code the first answer may allow or not
    msg = browser.find_element(By.ID, "ask-msg").text
    if "No secret fits" in msg:
        browser.find_element(By.CSS_SELECTOR, "button[data-edit='0']").click()
        click_answer(browser, 0, 1, keyboard=False)
        assert "Corrected" in browser.find_element(By.ID, "ask-msg").text
    else:
        assert "Solved" in msg


def test_you_ask_and_race_to_the_end(browser, pages):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    walker = Walker.load(TREES / "bulls-4x10-total.json")
    game = walker.game
    open_page(browser, pages["bulls-4x10-total"], secret="5071")
    browser.find_element(By.CSS_SELECTOR, "nav button[data-tab=you]").click()
    box = browser.find_element(By.ID, "you-input")
    box.send_keys("1123", Keys.ENTER)
    assert "repeats a symbol" in browser.find_element(By.ID, "you-msg").text
    secret = game.read_code("5071")
    history = []
    for _ in range(10):
        guess = walker.next_guess(history)
        box.send_keys(guess, Keys.ENTER)
        answer = game.format_answer(feedback(secret, game.read_code(guess)))
        history.append((guess, answer))
        if answer == "4,0":
            break
    assert "You found 5071" in browser.find_element(By.ID, "you-msg").text
    rows = browser.find_elements(By.CSS_SELECTOR, "#you-history tr")
    assert (
        len(rows) == 2 * len(history) + 1 and "(the tree's play)" in rows[2].text
    )  # a row per question, then its comparison
    race_to_the_end(browser, walker, "5071", "9876", keyboard=False)


def race_to_the_end(browser, walker: Walker, secret: str, mine: str, keyboard: bool) -> None:
    """The race: I ask the page's secret the tree's questions; the page answers and asks; I answer truthfully
    for my secret. By keys, every key goes to whatever has the focus, as a player's keyboard does."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    game = walker.game
    browser.find_element(By.CSS_SELECTOR, "nav button[data-tab=race]").click()
    browser.find_element(By.ID, "race-new").click()
    history, text = [], ""
    for _ in range(12):
        guess = walker.next_guess(history)
        if keyboard:
            ActionChains(browser).send_keys(guess, Keys.ENTER).perform()
        else:
            browser.find_element(By.ID, "race-input").send_keys(guess, Keys.ENTER)
        history.append((guess, game.format_answer(feedback(game.read_code(secret), game.read_code(guess)))))
        asked = browser.execute_script("return PAGE.race.pending")
        assert asked, "my question did not come: yours was not asked"
        h, b = feedback(game.read_code(mine), game.read_code(asked))
        if keyboard:
            ActionChains(browser).send_keys(str(h), str(b), Keys.ENTER).perform()
        else:
            browser.find_element(By.CSS_SELECTOR, f"#race-picker button[data-k=h][data-v='{h}']").click()
            browser.find_element(By.CSS_SELECTOR, f"#race-picker button[data-k=b][data-v='{b}']").click()
            browser.find_element(By.ID, "race-answer").click()
        assert browser.execute_script("return PAGE.race.mine.length") == len(history), "my question was not answered"
        text = browser.find_element(By.ID, "race-msg").text
        if "win" in text or "draw" in text:
            break
    assert any(word in text for word in ("You win", "I win", "draw"))


def test_explore_and_no_network_and_screenshots(browser, pages):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get_log("performance")  # drop what came before
    open_page(browser, pages["bulls-4x10-total"])
    browser.find_element(By.CSS_SELECTOR, "nav button[data-tab=explore]").click()
    root = browser.find_element(By.CSS_SELECTOR, "#outline > details > summary")
    assert "ask 0123" in root.text and "5040 secrets" in root.text
    root.click()
    # the children are drawn by the "toggle" event, which the browser fires as a separate task
    children = WebDriverWait(browser, 10).until(
        lambda b: b.find_elements(By.CSS_SELECTOR, "#outline > details > details")
    )
    assert len(children) == 13
    rows = browser.find_elements(By.CSS_SELECTOR, "#second tr")
    assert len(rows) == 15 and "1456" in browser.find_element(By.ID, "second").text
    assert browser.find_elements(By.CSS_SELECTOR, "#histogram svg rect")
    requests = [json.loads(e["message"])["message"] for e in browser.get_log("performance")]
    urls = [m["params"]["request"]["url"] for m in requests if m["method"] == "Network.requestWillBeSent"]
    assert all(u.startswith("file://") for u in urls), urls
    assert not [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SHOTS / "explore-desktop.png"))
    browser.find_element(By.CSS_SELECTOR, "nav button[data-tab=ask]").click()
    browser.save_screenshot(str(SHOTS / "ask-desktop.png"))


# -- a player's keyboard: the keys go wherever the focus is, as they do for a player ------------------------


def keys(browser, *typed: str) -> None:
    """Keys sent to whatever has the focus (not to an element chosen by the test)."""
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(browser).send_keys(*typed).perform()


def ask_state(browser) -> tuple[list, list | None]:
    return browser.execute_script("return [PAGE.ask.history, PAGE.ask.picker.value()]")


def test_enter_answers_wherever_the_focus_is(browser, pages):
    """Enter after a click on New game, Undo or an answer button sends the typed answer; it does not press
    that button again. Enter presses a button the Tab key has put the focus on, unless numbers were typed since."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    open_page(browser, pages["bulls-4x10-total"])
    browser.find_element(By.ID, "ask-new").click()
    keys(browser, "0", "2", Keys.ENTER)
    assert ask_state(browser)[0] == [["0123", "0,2"]]
    browser.find_element(By.ID, "ask-undo").click()
    keys(browser, "1", "1", Keys.ENTER)
    assert ask_state(browser)[0] == [["0123", "1,1"]]
    browser.find_element(By.CSS_SELECTOR, "#ask-picker button[data-k=h][data-v='0']").click()
    keys(browser, Keys.ENTER)  # the answer is not complete: Enter says so, and presses nothing
    assert ask_state(browser) == [[["0123", "1,1"]], None] and "choose" in browser.find_element(By.ID, "ask-msg").text
    keys(browser, "2", Keys.ENTER)  # hits clicked, blows typed
    third = browser.find_element(By.ID, "ask-question").text
    assert [a for _, a in ask_state(browser)[0]] == ["1,1", "0,2"]
    # from the keyboard alone: Tab onto the first answer button, Enter presses it, a number completes the answer
    keys(browser, Keys.TAB, Keys.ENTER, "3", Keys.ENTER)
    assert ask_state(browser)[0][-1] == [third, "0,3"]
    browser.execute_script("arguments[0].focus()", browser.find_element(By.ID, "ask-undo"))  # as Tab would
    keys(browser, "0", "1", Keys.ENTER)  # typing takes the focus to the answer: Enter sends it
    assert [a for _, a in ask_state(browser)[0]] == ["1,1", "0,2", "0,3", "0,1"]
    browser.execute_script("arguments[0].focus()", browser.find_element(By.ID, "ask-new"))
    keys(browser, Keys.ENTER)  # nothing typed: Enter presses the button the focus is on
    assert ask_state(browser) == [[], None]


def test_backspace_erases_the_number_typed_then_takes_back_the_answer(browser, pages):
    """Backspace erases the last number typed; with none typed it takes back the last answer and shows it
    in the buttons (so a second Backspace erases its second number, as in a line of text)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    open_page(browser, pages["bulls-4x10-total"])
    browser.find_element(By.ID, "ask-new").click()
    keys(browser, "0", "2", Keys.ENTER)
    keys(browser, "1", Keys.BACKSPACE)
    assert ask_state(browser) == [[["0123", "0,2"]], None]
    keys(browser, "1", "2", Keys.BACKSPACE, "1", Keys.ENTER)  # 2 was a typo for 1
    asked = ask_state(browser)[0]
    assert len(asked) == 2 and asked[1][1] == "1,1"
    keys(browser, Keys.BACKSPACE)  # nothing typed: the last answer comes back, to change
    assert ask_state(browser) == [asked[:1], [1, 1]]
    assert "Took back" in browser.find_element(By.ID, "ask-msg").text
    keys(browser, Keys.BACKSPACE, Keys.BACKSPACE)
    assert ask_state(browser) == [asked[:1], None]
    keys(browser, Keys.BACKSPACE)
    assert ask_state(browser) == [[], [0, 2]]


def test_the_race_by_keyboard(browser, pages):
    """Question by keys, then my answer by number keys and Enter, round after round, with no click."""
    open_page(browser, pages["mastermind-4x6-total"], secret="1123")
    race_to_the_end(browser, Walker.load(TREES / "mastermind-4x6-total.json"), "1123", "5501", keyboard=True)


def contradiction(browser) -> None:
    """The tree asks 0123, 1245, 0514 for these answers; the third contradicts the second."""
    from selenium.webdriver.common.by import By

    browser.find_element(By.ID, "ask-new").click()
    for h, b in ((0, 2), (0, 4), (4, 0)):
        click_answer(browser, h, b, keyboard=False)
    assert [q for q, _ in ask_state(browser)[0]] == ["0123", "1245", "0514"]


def test_edit_asks_for_the_corrected_answer(browser, pages):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    open_page(browser, pages["bulls-4x10-total"])
    contradiction(browser)
    before = ask_state(browser)[0]
    click_answer = "#ask-picker button[data-k={}][data-v='{}']"
    browser.find_element(By.CSS_SELECTOR, click_answer.format("h", 0)).click()
    browser.find_element(By.CSS_SELECTOR, click_answer.format("b", 1)).click()  # left in the buttons
    browser.find_element(By.CSS_SELECTOR, "button[data-edit='2']").click()
    assert ask_state(browser) == [before, None], "edit used the answer left in the buttons"
    assert "What was the answer to 0514?" in browser.find_element(By.ID, "ask-msg").text
    assert browser.find_element(By.ID, "ask-label").text == "Correcting question 3:"
    assert "editing" in browser.find_elements(By.CSS_SELECTOR, "#ask-history tr")[3].get_attribute("class")
    keys(browser, Keys.ESCAPE)  # cancel: nothing changes
    assert ask_state(browser)[0] == before and not browser.find_element(By.ID, "ask-cancel").is_displayed()
    browser.find_element(By.CSS_SELECTOR, "button[data-edit='1']").click()
    keys(browser, Keys.ENTER)  # nothing chosen yet: still asking
    assert ask_state(browser)[0] == before and "the answer to 1245" in browser.find_element(By.ID, "ask-msg").text
    keys(browser, "0", "3", Keys.ENTER)
    after = ask_state(browser)[0]
    assert after[1] == ["1245", "0,3"] and after[0] == before[0] and after[2] == before[2]
    assert "Correcting" not in browser.find_element(By.ID, "ask-label").text


def test_the_contradiction_view_is_true(browser, pages):
    """With no secret left the page shows no question, no remaining secret, no 'may be your secret', and
    a short message naming the answers that clash; solved, it shows no stale count either."""
    from selenium.webdriver.common.by import By

    open_page(browser, pages["bulls-4x10-total"])
    contradiction(browser)
    tab = browser.find_element(By.ID, "tab-ask").text
    assert "may be your secret" not in tab and not re.search(r"\d+ secrets? remains?", tab), tab
    assert browser.find_element(By.ID, "ask-left").text == "No secret remains."
    assert browser.find_element(By.ID, "ask-cands").text == ""
    assert not browser.find_element(By.ID, "ask-row").is_displayed()  # no question, no number
    msg = browser.find_element(By.ID, "ask-msg").text
    assert msg.startswith("No secret fits answers 2 and 3 together") and len(msg) < 120, msg
    rows = browser.find_elements(By.CSS_SELECTOR, "#ask-history tr")
    assert [r.get_attribute("class") for r in rows[1:]] == ["", "conflict", "conflict"]
    # solved: the question is the secret, and no count of secrets is left over from before
    browser.find_element(By.ID, "ask-new").click()
    walker = Walker.load(TREES / "bulls-4x10-total.json")
    secret, history = walker.game.read_code("9876"), []
    while not history or history[-1][1] != "4,0":
        shown = browser.find_element(By.ID, "ask-question").text
        h, b = feedback(secret, walker.game.read_code(shown))
        click_answer(browser, h, b, keyboard=True)
        history.append((shown, f"{h},{b}"))
    assert browser.find_element(By.ID, "ask-question").text == "9876"
    assert browser.find_element(By.ID, "ask-left").text == browser.find_element(By.ID, "ask-mark").text == ""


OVERFLOW = """const w = document.documentElement.clientWidth, out = [];
for (const e of document.querySelectorAll("body *")) {
  const r = e.getBoundingClientRect();
  if (r.width && r.right > w + 0.5) out.push(`${e.tagName}#${e.id} ${Math.round(r.right)} > ${w}`);
}
if (document.documentElement.scrollWidth > w) out.push(`the page is ${document.documentElement.scrollWidth} wide`);
return out;"""


@pytest.mark.parametrize(
    "name,questions",
    [
        ("bulls-4x10-total", ["0123", "4567", "8901", "2345"]),
        ("mastermind-4x6-total", ["0123", "4455", "1122", "2345"]),
    ],
)
def test_every_tab_fits_a_phone(browser, pages, name, questions):
    """Each tab in use (answers, rows, the tree opened a few levels) is no wider than a 390 px phone
    (less its scroll bar), so nothing scrolls sideways."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    open_page(browser, pages[name], secret="2345")
    browser.set_window_size(390, 844)
    try:
        wide = {}
        contradiction_or_game = ["0", "2", Keys.ENTER, "0", "1", Keys.ENTER, "1", "1", Keys.ENTER]
        keys(browser, *contradiction_or_game)
        wide["ask"] = browser.execute_script(OVERFLOW)
        browser.find_element(By.CSS_SELECTOR, "nav button[data-tab=you]").click()
        for q in questions:
            keys(browser, q, Keys.ENTER)
        assert len(browser.find_elements(By.CSS_SELECTOR, "#you-history tr")) > len(questions)
        wide["you"] = browser.execute_script(OVERFLOW)
        browser.find_element(By.CSS_SELECTOR, "nav button[data-tab=race]").click()
        for q in questions[:3]:
            keys(browser, q, Keys.ENTER, "1", "1", Keys.ENTER)
        wide["race"] = browser.execute_script(OVERFLOW)
        browser.find_element(By.CSS_SELECTOR, "nav button[data-tab=explore]").click()
        for _ in range(5):  # the first two closed nodes at each level, five levels down
            for summary in browser.find_elements(By.CSS_SELECTOR, "#outline details:not([open]) > summary")[:2]:
                summary.click()
        wide["explore"] = browser.execute_script(OVERFLOW)
        if name.startswith("bulls"):
            browser.save_screenshot(str(SHOTS / "explore-phone.png"))
            browser.find_element(By.CSS_SELECTOR, "nav button[data-tab=ask]").click()
            browser.save_screenshot(str(SHOTS / "ask-phone.png"))
    finally:
        browser.set_window_size(1200, 900)
    assert wide == {"ask": [], "you": [], "race": [], "explore": []}


def chain_tree(spec: str) -> TreeDoc:
    """A tree for a one-symbol game: ask each symbol in turn (enough for a page to show and play)."""
    game = parse_game(spec)
    codes = [game.format_code(c) for c in game.codes()]
    node: dict = {"guess": codes[-1]}
    for code in reversed(codes[:-1]):
        node = {"guess": code, "next": {"0,0": node}}
    return TreeDoc(game, node, "total", {})


def test_phones_show_the_keyboard_the_symbols_need(browser, pages, tmp_path):
    """Digits only: a numeric keyboard; symbols past 9 (letters): a text keyboard that keeps them lower case."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    for name in ("bulls-4x10-total", "mastermind-4x6-total"):
        open_page(browser, pages[name])
        for box in ("you-input", "race-input"):
            assert browser.find_element(By.ID, box).get_attribute("inputmode") == "numeric", (name, box)
    page = tmp_path / "letters.html"
    page.write_text(render(chain_tree("bulls:1x12")), encoding="utf-8")
    open_page(browser, page, secret="b")
    for box in ("you-input", "race-input"):
        assert browser.find_element(By.ID, box).get_attribute("inputmode") == "text"
        assert browser.find_element(By.ID, box).get_attribute("autocapitalize") == "none"
    browser.find_element(By.CSS_SELECTOR, "nav button[data-tab=you]").click()
    keys(browser, "B", Keys.ENTER)
    assert "You found b" in browser.find_element(By.ID, "you-msg").text


# -- hostile trees: any string in a tree reaches the page as text, and the page still works -----------------

HOSTILE = [
    "<!-- a comment opened -->",
    "</script><script>window.PWNED = 1</script>",
    "<!--<script>",
    "/*DATA*/ and /*TITLE*/",
    "\u2028\u2029 line separators",
    '<b>bold</b><img src=x onerror="window.PWNED = 2"> & &amp; "quotes" \'too\'',
]


def hostile_doc(text: str) -> TreeDoc:
    doc = load(TREES / "bulls-3x10-total.json")
    generator = {**doc.generator, "strategy": text, text: [text], "run": {"seconds": text, "executor": text}}
    return replace(doc, objective=text, generator=generator)


def test_script_json_round_trips_any_string():
    for text in HOSTILE + ["".join(HOSTILE), "<\\!-- \\u003c", "\x00\x1f\x7f é ✓ 𝄞"]:
        out = script_json({"k": text, text: [text]})
        assert json.loads(out) == {"k": text, text: [text]}
        assert not any(c in out for c in "<>&\u2028\u2029")


@pytest.mark.parametrize("text", HOSTILE + ["".join(HOSTILE)])
def test_a_hostile_tree_loads_shows_its_text_and_plays(browser, tmp_path, text):
    from selenium.webdriver.common.by import By

    doc = hostile_doc(text)
    page = tmp_path / "hostile.html"
    page.write_text(render(doc), encoding="utf-8")
    browser.get_log("browser")
    open_page(browser, page)
    # document.title strips and collapses ASCII white space, and only that
    assert browser.title == re.sub(r"[ \t\n\f\r]+", " ", f"{doc.game.spec} — {text} tree").strip()
    assert (
        browser.execute_script("return document.getElementById('title').textContent") == f"{doc.game.spec}: {text} tree"
    )
    assert browser.execute_script("return JSON.parse(document.getElementById('data').textContent).doc") == doc.to_json()
    facts = browser.execute_script("return [...document.querySelectorAll('#facts td')].map(td => td.textContent)")
    assert text in facts and f"{text} s, {text}" in facts
    assert browser.execute_script(
        "return window.PWNED === undefined && !document.querySelector('img') && "
        "![...document.querySelectorAll('b')].some(b => b.textContent === 'bold')"
    )
    assert not [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    if text != "".join(HOSTILE):
        return
    # and it plays: the tree's longest game, by keys
    walker = Walker.load(TREES / "bulls-3x10-total.json")
    need = measure(walker.game, walker.doc.root)[1]
    secret, history = walker.game.read_code(max(need, key=need.get)), []
    while not history or history[-1][1] != "3,0":
        shown = browser.find_element(By.ID, "ask-question").text
        assert shown == walker.next_guess(history)
        h, b = feedback(secret, walker.game.read_code(shown))
        click_answer(browser, h, b, keyboard=True)
        history.append((shown, f"{h},{b}"))
    assert "Solved in" in browser.find_element(By.ID, "ask-msg").text


def latin1_locale(folder: Path) -> dict[str, str]:
    """Environment for a Latin-1 locale compiled into `folder` (no system locale is installed)."""
    made = subprocess.run(
        ["localedef", "-i", "en_US", "-f", "ISO-8859-1", str(folder / "en_US.ISO-8859-1")],
        check=False,
        capture_output=True,
        text=True,
    )
    if not (folder / "en_US.ISO-8859-1").is_dir():
        pytest.fail(f"the locale test needs localedef and Debian's locales package: {made.stderr.strip()[:200]}")
    return {"LOCPATH": str(folder), "LC_ALL": "en_US.ISO-8859-1"}


def test_the_page_is_utf8_whatever_the_locale(tmp_path):
    """`strategy html` in an ASCII (C) and a Latin-1 locale writes the same bytes as here: the template is
    read, and the page written, as UTF-8, with the tree's own non-ASCII text."""
    doc = hostile_doc("naïve — ✓ 𝄞 " + "".join(HOSTILE))
    tree = tmp_path / "tree.json"
    tree.write_bytes(dumps(doc))
    want = render(doc).encode("utf-8")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "PYTHONUTF8", "PYTHONIOENCODING"))}
    locales = {"C": {"LC_ALL": "C"}, "Latin-1": latin1_locale(tmp_path)}
    for name, env in locales.items():
        env = {**base, **env, "PYTHONUTF8": "0", "PYTHONPATH": str(ROOT)}
        probe = subprocess.run(
            [sys.executable, "-c", "import locale; print(locale.getpreferredencoding(False))"],
            check=False,
            env=env,
            capture_output=True,
            text=True,
        )
        assert probe.stdout.strip() in ({"C": ("ANSI_X3.4-1968", "ascii"), "Latin-1": ("ISO-8859-1",)}[name]), probe
        out = tmp_path / f"page-{name}.html"
        done = subprocess.run(
            [sys.executable, "-m", "strategy", "html", str(tree), "-o", str(out)],
            check=False,
            env=env,
            capture_output=True,
            timeout=120,
        )
        assert done.returncode == 0, (name, done.stderr.decode(errors="replace"))
        assert out.read_bytes() == want, name
