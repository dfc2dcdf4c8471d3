"""The web page in a real browser (Debian's chromium, driven by Selenium through chromedriver): the
JavaScript rules equal rules.feedback, complete games through the page's buttons and keys follow the
walker question by question, and the page makes no network request."""
from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from strategy.export.page import render
from strategy.play.walker import Walker
from strategy.rules import feedback
from strategy.tree.format import load
from strategy.tree.verify import measure

from ..conftest import ROOT, TREES

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
