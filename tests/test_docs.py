"""The README and the documentation site: every generated block is what tools/readme.py writes (no number typed by
hand), the site builds with `mkdocs build --strict`, and the README stays short, with working links and the test
command CI runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from .conftest import ROOT, import_tool

README = ROOT / "README.md"


@pytest.mark.slow
def test_generated_blocks_are_up_to_date():
    """Run in this process: the shipped trees the blocks walk are walked once for the whole suite (verify_file)."""
    readme = import_tool("readme")
    assert not readme.unused_blocks(), "a generator no page uses: its block was dropped from its page"
    stale = readme.out_of_date()
    assert not stale, f"generated blocks out of date: {'; '.join(stale)} (run python tools/readme.py)"


def test_a_number_typed_into_a_block_is_caught():
    readme = import_tool("readme")
    text = (ROOT / "docs" / "games.md").read_text()
    limits = re.search(r"<!-- begin limits -->.*?<!-- end limits -->", text, re.S).group(0)
    typed = text.replace(limits, limits.replace("| 1,000,000 |", "| 999,999 |"))
    assert typed != text
    assert readme.regenerate(typed) == (text, ["limits"])


def test_the_command_reference_covers_every_command_and_option():
    readme = import_tool("readme")
    from strategy.cli import make_parser

    page = (ROOT / "docs" / "commands.md").read_text()
    parser = make_parser()
    commands = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, sub in commands.choices.items():
        assert f"### strategy {name}\n" in page, name
        for action in sub._actions:
            for flag in set(action.option_strings) - {"-h", "--help"}:  # every command has it: said once, above
                assert f"`{flag}" in page or f", {flag}" in page, (name, flag)
    assert readme.generated("cli") in page


def test_the_site_builds_strict(tmp_path):
    """Broken links, missing anchors and pages left out of the navigation all fail the build."""
    site = tmp_path / "site"
    r = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(ROOT / "mkdocs.yml"), "-d", str(site)],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, NO_MKDOCS_2_WARNING="1"),
    )
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "strategy solve" in (site / "commands" / "index.html").read_text()
    assert (site / "page-ask.png").exists()


def test_the_readme_is_short_and_its_links_work():
    text = README.read_text()
    assert len(text.encode()) <= 12_000, len(text.encode())
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if "://" not in link]
    assert local, "the README links into docs/"
    for link in local:
        assert (ROOT / link).exists(), link


def test_ci_runs_the_readme_install_and_test_commands():
    """The README's set-up is two commands (install, test) and the main job; CI runs the same install, the same
    Debian packages, and exactly the test command as its last line."""
    setup = re.search(r"## Set-up\n.*?```\n(.*?)```", README.read_text(), re.S).group(1).splitlines()
    assert len(setup) == 3, setup
    install, test, _main_job = setup
    steps = install.split(" && ")
    apt = next(step for step in steps if " apt-get install " in step).split()
    pip = next(step for step in steps if step.startswith("python -m pip install"))
    assert any(step.startswith("python3 -m venv ") for step in steps) and ". .venv/bin/activate" in steps, install
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert any(
        line.startswith("python -m pip install") and line.endswith(pip.removeprefix("python -m pip install"))
        for line in ci
    ), pip
    ci_apt = next(line for line in ci if " apt-get install " in line).split()
    ci_packages = {
        w
        for w in ci_apt
        if w[0].isalpha() and w not in {"apt-get", "install"} and "=" not in w and not w.startswith("$")
    }
    assert ci_packages and ci_packages <= set(apt), (ci_packages, apt)
    assert ci[-1] == test == "python -m pytest -q", (ci[-1], test)
