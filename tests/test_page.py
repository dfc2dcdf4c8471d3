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

from strategy.io.html import render, script_json
from strategy.io.tree import TreeDoc, dumps, load
from strategy.io.verify import measure
from strategy.play.walker import Walker
from strategy.rules import feedback

from .conftest import ROOT, TREES

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
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1200,900"):
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
        chunk = pairs[i:i + 4000]
        out += [tuple(a) for a in browser.execute_script(
            "return arguments[0].map(([s, p]) => PAGE.feedback(PAGE.readCode(s)[0], PAGE.readCode(p)[0]))", chunk)]
    return out


@pytest.mark.parametrize("name,sample", [("bulls-3x10-total", None), ("bulls-4x10-total", 20000),
                                         ("mastermind-4x6-total", 20000)])
def test_the_pages_rules_are_the_rules(browser, pages, name, sample):
    open_page(browser, pages[name])
    game = load(TREES / f"{name}.json").game
    codes = [game.format_code(c) for c in game.codes()]
    assert browser.execute_script("return PAGE.CODES.map(PAGE.fmt)") == codes  # same codes, same order
    if sample is None:  # every pair, one row of answers per secret computed in the page
        rows = browser.execute_script(
            "return PAGE.CODES.map(s => PAGE.CODES.map(p => PAGE.feedback(s, p).join(',')).join(' '))")
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
    if "cannot all be true" in msg:
        browser.find_element(By.CSS_SELECTOR, "#ask-picker button[data-k=h][data-v='0']").click()
        browser.find_element(By.CSS_SELECTOR, "#ask-picker button[data-k=b][data-v='1']").click()
        browser.find_element(By.CSS_SELECTOR, "button[data-edit='0']").click()
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
    assert len(rows) == len(history) + 1 and "(exact)" in rows[1].text
    # the race: I ask my secret's tree questions; the page answers and asks; I answer truthfully for 9876
    browser.find_element(By.CSS_SELECTOR, "nav button[data-tab=race]").click()
    browser.find_element(By.ID, "race-new").click()
    mine = game.read_code("9876")
    race_box = browser.find_element(By.ID, "race-input")
    history = []
    for _ in range(12):
        guess = walker.next_guess(history)
        race_box.send_keys(guess, Keys.ENTER)
        history.append((guess, game.format_answer(feedback(secret, game.read_code(guess)))))
        asked = browser.find_element(By.ID, "race-question").text
        h, b = feedback(mine, game.read_code(asked))
        browser.find_element(By.CSS_SELECTOR, f"#race-picker button[data-k=h][data-v='{h}']").click()
        browser.find_element(By.CSS_SELECTOR, f"#race-picker button[data-k=b][data-v='{b}']").click()
        browser.find_element(By.ID, "race-answer").click()
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
        lambda b: b.find_elements(By.CSS_SELECTOR, "#outline > details > details"))
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
    browser.set_window_size(390, 844)
    browser.save_screenshot(str(SHOTS / "ask-phone.png"))
    width = browser.execute_script("return document.documentElement.scrollWidth")
    assert width <= 400, "the page does not fit a phone-sized window"
    browser.set_window_size(1200, 900)


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
    assert browser.execute_script("return document.getElementById('title').textContent") == f"{doc.game.spec}: {text} tree"
    assert browser.execute_script("return JSON.parse(document.getElementById('data').textContent).doc") == doc.to_json()
    facts = browser.execute_script("return [...document.querySelectorAll('#facts td')].map(td => td.textContent)")
    assert text in facts and f"{text} s, {text}" in facts
    assert browser.execute_script("return window.PWNED === undefined && !document.querySelector('img') && "
                                  "![...document.querySelectorAll('b')].some(b => b.textContent === 'bold')")
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
    made = subprocess.run(["localedef", "-i", "en_US", "-f", "ISO-8859-1", str(folder / "en_US.ISO-8859-1")],
                          check=False, capture_output=True, text=True)
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
        probe = subprocess.run([sys.executable, "-c", "import locale; print(locale.getpreferredencoding(False))"],
                               check=False, env=env, capture_output=True, text=True)
        assert probe.stdout.strip() in ({"C": ("ANSI_X3.4-1968", "ascii"), "Latin-1": ("ISO-8859-1",)}[name]), probe
        out = tmp_path / f"page-{name}.html"
        done = subprocess.run([sys.executable, "-m", "strategy", "html", str(tree), "-o", str(out)],
                              check=False, env=env, capture_output=True, timeout=120)
        assert done.returncode == 0, (name, done.stderr.decode(errors="replace"))
        assert out.read_bytes() == want, name
