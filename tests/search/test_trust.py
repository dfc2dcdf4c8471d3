"""Proofs come from the game, never from what a file claims: forged trees and tampered stores.

Mastermind 4x6 has the published least total 5625 (Koyama and Lai); the entropy tree costs 5722. Every
forgery here claims 5722 (or more) in some field of a file: a solve proves 5625 again, or the file is refused
in one line. Only `--trust FILE` takes a file's claim, and then the proof says so, with the file's SHA-256.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sqlite3
import subprocess
import sys
import zlib
from pathlib import Path

import orjson
import pytest

from strategy.files import quote

from ..conftest import ROOT, run_cli

OPTIMUM, ENTROPY = 5625, 5722


@pytest.fixture(scope="module")
def entropy(tmp_path_factory) -> dict:
    """The entropy tree of Mastermind 4x6 as a tree document."""
    path = tmp_path_factory.mktemp("entropy") / "entropy.json"
    r = run_cli("build", "--game", "mastermind:4x6", "--strategy", "entropy", "-o", str(path))
    assert r.returncode == 0, r.stderr
    doc = orjson.loads(path.read_bytes())
    assert doc["stats"]["total"] == ENTROPY
    return doc


def forged(tmp_path: Path, doc: dict, name: str, objective: str, generator: dict) -> str:
    path = tmp_path / name
    path.write_bytes(orjson.dumps({**doc, "objective": objective, "generator": {"tool": "forger", **generator}}))
    return str(path)


FORGERIES = {
    "a proof record": ("total", {"proven": {"total": ENTROPY}}),
    "a lower bound": ("partial", {"lower_bound": ENTROPY, "bound_of": "total", "objective_of_the_search": "total"}),
    "a bound above its own total": (
        "partial",
        {"lower_bound": 6000, "bound_of": "total", "objective_of_the_search": "total"},
    ),
}


def solved_total(r, output: Path) -> int:
    assert r.returncode == 0, r.stderr
    total = orjson.loads(output.read_bytes())["generator"]["proven"]["total"]
    assert f"proved: minimum total {total} " in r.stderr
    return total


@pytest.mark.parametrize("claim", ["a proof record", "a lower bound"])
@pytest.mark.parametrize("option", ["--incumbent", "--partial"])
def test_a_forged_tree_is_an_upper_bound_and_nothing_more(tmp_path, entropy, claim, option):
    """Given as an incumbent or as an earlier run's partial file, a tree whose record claims 5722 (or more) is
    only a tree of total 5722: the solve proves 5625."""
    path = forged(tmp_path, entropy, "forged.json", *FORGERIES[claim])
    out = tmp_path / "t.json"
    r = run_cli("solve", "--game", "mastermind:4x6", option, path, "--quiet", "-o", str(out))
    assert solved_total(r, out) == OPTIMUM
    assert "settled with no search" not in r.stderr and "relies on" not in r.stderr
    assert "relies_on" not in orjson.loads(out.read_bytes())["generator"]["proven"]


def test_a_trusted_file_is_named_in_the_proof_with_its_sha256(tmp_path, entropy):
    """`--trust FILE` takes the claim, and the printed proof and `generator.proven` say that it relies on FILE."""
    path = forged(tmp_path, entropy, "forged.json", *FORGERIES["a proof record"])
    out = tmp_path / "t.json"
    r = run_cli("solve", "--game", "mastermind:4x6", "--incumbent", path, "--trust", path, "--quiet", "-o", str(out))
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    assert r.returncode == 0, r.stderr
    assert f"relies on the bound claimed by 'forged.json' (sha256 {digest})" in r.stderr
    proven = orjson.loads(out.read_bytes())["generator"]["proven"]
    assert proven == {"total": ENTROPY, "relies_on": [{"file": "forged.json", "sha256": digest}]}


@pytest.mark.parametrize("objective", ["total", "partial"])
def test_a_proof_relies_on_what_a_trusted_file_relied_on(tmp_path, entropy, objective):
    """Trust is passed on: a trusted file whose own proof relied on another file (or a store) brings that one
    into the new proof too, not only its own name."""
    upstream = [{"file": "upstream.json", "sha256": "ab" * 32}, {"file": "s.db", "sha256": "cd" * 32, "store": True}]
    claim = (
        {"proven": {"total": ENTROPY, "relies_on": upstream}}
        if objective == "total"
        else {**FORGERIES["a lower bound"][1], "relies_on": upstream}
    )
    path = forged(tmp_path, entropy, "forged.json", objective, claim)
    out = tmp_path / "t.json"
    r = run_cli("solve", "--game", "mastermind:4x6", "--incumbent", path, "--trust", path, "--quiet", "-o", str(out))
    assert r.returncode == 0, r.stderr
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    relies_on = orjson.loads(out.read_bytes())["generator"]["proven"]["relies_on"]
    assert relies_on == [{"file": "forged.json", "sha256": digest}, *upstream]
    assert "the bounds stored in 's.db'" in r.stderr and "the bound claimed by 'upstream.json'" in r.stderr


@pytest.mark.parametrize("option", ["--incumbent", "--partial"])
@pytest.mark.parametrize("trust", [False, True])
def test_a_claim_above_its_own_tree_is_refused(tmp_path, entropy, option, trust):
    """A record that contradicts its own tree (a lower bound of 6000 on a tree of 5722) is refused in one line,
    trusted or not."""
    path = forged(tmp_path, entropy, "forged.json", *FORGERIES["a bound above its own total"])
    out = tmp_path / "t.json"
    r = run_cli(
        "solve", "--game", "mastermind:4x6", option, path, *(["--trust", path] if trust else []), "-o", str(out)
    )
    assert r.returncode == 2 and not out.exists() and "Traceback" not in r.stderr, r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert (
        last.startswith("strategy: error: ")
        and "its proof record says lower_bound = 6000 but the tree gives 5722" in last
    )


def test_trust_names_a_given_file(tmp_path, entropy):
    path = forged(tmp_path, entropy, "forged.json", *FORGERIES["a proof record"])
    r = run_cli("solve", "--game", "mastermind:4x6", "--trust", path, "--quiet", "-o", str(tmp_path / "t.json"))
    assert r.returncode == 2 and "--trust" in r.stderr and "Traceback" not in r.stderr


@pytest.fixture(scope="module")
def solved_store(tmp_path_factory) -> Path:
    """A store a solve of Mastermind 4x6 wrote (its exact results with their subtrees)."""
    path = tmp_path_factory.mktemp("store") / "s.db"
    r = run_cli(
        "solve", "--game", "mastermind:4x6", "--store", str(path), "--quiet", "-o", str(path.with_suffix(".json"))
    )
    assert r.returncode == 0, r.stderr
    with sqlite3.connect(path) as con:
        assert con.execute("SELECT count(*) FROM results WHERE exact = 1 AND tree IS NOT NULL").fetchone()[0] > 10
    return path


def loosened(sql: str) -> bool:
    """Whether the tampering writes NULL into a NOT NULL column (it needs a table of its own)."""
    return "value = NULL" in sql or "seconds = NULL" in sql


def tampered(solved_store: Path, tmp_path: Path, sql: str, *params) -> str:
    path = tmp_path / "s.db"
    path.write_bytes(solved_store.read_bytes())
    with contextlib.closing(sqlite3.connect(path)) as con, con:  # closed: the file holds it all, no WAL beside
        if loosened(sql):  # NOT NULL keeps them out: only a table of its own holds them, and that is refused
            con.executescript(
                "CREATE TABLE loose AS SELECT * FROM results; DROP TABLE results;ALTER TABLE loose RENAME TO results;"
            )
        con.execute(sql, params)
    return str(path)


HEAVIEST = "(SELECT key FROM results WHERE exact = 1 AND tree IS NOT NULL ORDER BY size DESC LIMIT 1)"
TAMPERING = {
    "a value as text": (f"UPDATE results SET value = 'many' WHERE key = {HEAVIEST}", "value is str"),
    "a NULL value": (f"UPDATE results SET value = NULL WHERE key = {HEAVIEST}", "is not the one this tool writes"),
    "NULL seconds": (f"UPDATE results SET seconds = NULL WHERE key = {HEAVIEST}", "is not the one this tool writes"),
    "a value of 2^62": (f"UPDATE results SET value = 4611686018427387904 WHERE key = {HEAVIEST}", "value is int"),
    "a negative value": (f"UPDATE results SET value = -5 WHERE key = {HEAVIEST}", "value is int"),
    "exact as 7": (f"UPDATE results SET exact = 7 WHERE key = {HEAVIEST}", "exact is int 7"),
    "a subtree that is an array": (
        f"UPDATE results SET tree = ? WHERE key = {HEAVIEST}",
        "not a node",
        zlib.compress(b"[1, 2, 3]"),
    ),
    "a subtree that is not zlib": (
        f"UPDATE results SET tree = ? WHERE key = {HEAVIEST}",
        "cannot be read",
        b"not zlib at all",
    ),
    "a subtree that unpacks to 100 MB": (
        f"UPDATE results SET tree = ? WHERE key = {HEAVIEST}",
        "unpacks to more than",
        zlib.compress(b" " * (100 << 20), 9),
    ),
    "a subtree that unpacks a thousandfold": (
        f"UPDATE results SET tree = ? WHERE key = {HEAVIEST}",
        "64 times its",
        zlib.compress(b'{"guess": "0011", "x": [' + b"[], " * (2 << 20) + b"[]]}", 9),
    ),
    "a subtree that misses secrets": (
        f"UPDATE results SET tree = ? WHERE key = {HEAVIEST}",
        "not a tree of the",
        zlib.compress(b'{"guess": "0011"}'),
    ),
    "a subtree as text": (f"UPDATE results SET tree = 'x' WHERE key = {HEAVIEST}", "its tree is str"),
}


@pytest.mark.parametrize("case", TAMPERING)
@pytest.mark.parametrize("command", ["bound", "solve"])
def test_a_tampered_store_row_is_refused_in_one_line(tmp_path, solved_store, case, command):
    """A store's exact results are checked as they are read: the row is refused, naming the store and the row,
    and nothing is proven from it (today's main reported a bound of 5725 with the values raised by 100)."""
    sql, expect, *params = TAMPERING[case]
    path = tampered(solved_store, tmp_path, sql, *params)
    extra = ["--levels", "2"] if command == "bound" else ["-o", str(tmp_path / "t.json"), "--quiet"]
    r = run_cli(command, "--game", "mastermind:4x6", "--store", path, *extra)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    where = ": its table 'results'" if loosened(sql) else ", row '"  # a table of its own is refused whole
    assert lines[-1].startswith(f"strategy: error: store {path!r}{where}") and expect in lines[-1], lines[-1]
    assert "proved" not in r.stderr and "at least" not in r.stdout and not (tmp_path / "t.json").exists()


@pytest.mark.slow
def test_an_untouched_store_proves_the_optimum_again(tmp_path, solved_store):
    """The checks pass what a solve wrote: bound and solve read it back (the bound reaches the optimum with
    the stored root, the solve writes the same tree)."""
    out = tmp_path / "t.json"
    path = tampered(solved_store, tmp_path, "SELECT 1")
    r = run_cli("solve", "--game", "mastermind:4x6", "--store", path, "--quiet", "-o", str(out))
    assert solved_total(r, out) == OPTIMUM
    assert out.read_bytes().split(b'"run"')[0] == solved_store.with_suffix(".json").read_bytes().split(b'"run"')[0]
    r = run_cli("bound", "--game", "mastermind:4x6", "--levels", "2", "--store", path, "--json")
    assert r.returncode == 0 and orjson.loads(r.stdout)["lower_bound"] == OPTIMUM, r.stderr


# rows a store from elsewhere could hold: nothing in them shows the change, so they are searched again
ALTERED = {
    "exact values raised by 100": "UPDATE results SET value = value + 100 WHERE exact = 1",
    "exact values made bounds raised by 100": "UPDATE results SET exact = 0, tree = NULL, value = value + 100",
    "exact values with no subtree": "UPDATE results SET tree = NULL",
    "seals moved to other rows": "UPDATE results SET exact = 0, tree = NULL, value = value + 100, "
    "seal = (SELECT seal FROM results r WHERE r.key < results.key ORDER BY r.key DESC LIMIT 1)",
}


def sealed_elsewhere(r) -> bool:
    return "not sealed by this installation (written elsewhere, or altered) searched again" in r.stderr


@pytest.mark.parametrize("case", ALTERED)
def test_a_bound_is_believed_only_with_this_installations_seal(tmp_path, solved_store, case):
    """A stored bound cannot be checked short of the search it saves, so it is believed only when this
    installation sealed it: raised bounds are searched again, and the bound stays at most the optimum (today's
    main printed "at least 5725")."""
    path = tampered(solved_store, tmp_path, ALTERED[case])
    r = run_cli("bound", "--game", "mastermind:4x6", "--levels", "2", "--store", path, "--json")
    result = orjson.loads(r.stdout)
    assert result["lower_bound"] <= OPTIMUM and result["relies_on"] == [] and result["not_believed"] > 0
    path = tampered(solved_store, tmp_path, ALTERED[case])  # afresh: what the bound searched again is sealed now
    r = run_cli("bound", "--game", "mastermind:4x6", "--levels", "2", "--store", path)
    assert r.returncode == 0 and sealed_elsewhere(r), r.stderr


@pytest.mark.slow
def test_a_solve_proves_the_optimum_again_from_raised_bounds(tmp_path, solved_store):
    out = tmp_path / "t.json"
    path = tampered(solved_store, tmp_path, ALTERED["exact values made bounds raised by 100"])
    r = run_cli("solve", "--game", "mastermind:4x6", "--store", path, "--quiet", "-o", str(out))
    assert solved_total(r, out) == OPTIMUM and sealed_elsewhere(r)
    assert "relies_on" not in orjson.loads(out.read_bytes())["generator"]["proven"]


def test_a_trusted_store_is_named_in_the_result_and_a_false_claim_is_refused(tmp_path, solved_store):
    """`--trust` naming the store believes what it holds unsealed, and the result names the store with its
    SHA-256; a solve that finds a tree below a trusted bound refuses the row rather than print either."""
    path = tampered(solved_store, tmp_path, ALTERED["exact values made bounds raised by 100"])
    r = run_cli("bound", "--game", "mastermind:4x6", "--levels", "2", "--store", path, "--trust", path, "--json")
    assert r.returncode == 0, r.stderr
    result = orjson.loads(r.stdout)
    assert result["lower_bound"] == OPTIMUM + 100 and not sealed_elsewhere(r)
    assert result["relies_on"] == [{"file": "s.db", "sha256": result["relies_on"][0]["sha256"], "store": True}]
    out = tmp_path / "t.json"
    r = run_cli("solve", "--game", "mastermind:4x6", "--store", path, "--trust", path, "--quiet", "-o", str(out))
    assert r.returncode == 2 and "Traceback" not in r.stderr and not out.exists(), r.stderr
    assert re.search(r"row '[0-9a-f]+': it claims a lower bound of (\d+), and the search found (\d+)", r.stderr)


def test_a_trusted_store_that_holds_true_bounds_is_named_in_the_proof(tmp_path, solved_store, monkeypatch):
    """Sealed by another installation (another XDG_DATA_HOME), a store's bounds are searched again; trusted, they
    are used, and the proof record says it relies on the store."""
    path = tampered(solved_store, tmp_path, "UPDATE results SET exact = 0, tree = NULL WHERE depth = 0")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "elsewhere"))
    out = tmp_path / "t.json"
    r = run_cli("solve", "--game", "mastermind:4x6", "--store", path, "--trust", path, "--quiet", "-o", str(out))
    proven = orjson.loads(out.read_bytes())["generator"]["proven"] if r.returncode == 0 else {}
    assert solved_total(r, out) == OPTIMUM and proven["relies_on"][0]["store"] is True, r.stderr
    assert f"the proof relies on the bounds stored in 's.db' (sha256 {proven['relies_on'][0]['sha256']})" in r.stderr
    assert (tmp_path / "elsewhere" / "strategy" / "store.key").stat().st_mode & 0o077 == 0


KEYS = {
    "a folder in its place": lambda key: key.mkdir(),
    "damaged": lambda key: key.write_text("not hex\n"),
    "a FIFO": lambda key: os.mkfifo(key),
    "a link to /dev/zero": lambda key: key.symlink_to("/dev/zero"),
}


@pytest.mark.parametrize("key", [*KEYS, "a file in the way"])
def test_a_key_that_cannot_be_kept_or_read_is_one_line(tmp_path, key, monkeypatch):
    """The key file is read only when it is a small regular file: a FIFO would block, /dev/zero never ends."""
    home = tmp_path / "home"
    if key == "a file in the way":
        home.write_text("")
    else:
        (home / "strategy").mkdir(parents=True)
        KEYS[key](home / "strategy" / "store.key")
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    r = run_cli("bound", "--game", "bulls:3x6", "--levels", "1", "--store", str(tmp_path / "s.db"))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1 and "store key" in r.stderr, r.stderr


def test_a_version_1_store_is_upgraded_and_its_exact_results_still_count(tmp_path, solved_store):
    """A store written before seals (version 1) opens as version 2: its subtrees are checked as before and used,
    its bounds are searched again, and compact and merge read it."""
    from strategy.search.store import compact, merge

    path = tampered(solved_store, tmp_path, "ALTER TABLE results DROP COLUMN seal")
    with contextlib.closing(sqlite3.connect(path)) as con, con:
        con.execute("UPDATE meta SET value = '1' WHERE key = 'version'")
    for copy, made in (("c.db", lambda t: compact(path, t, 0.0)), ("m.db", lambda t: merge([path], t))):
        assert made(tmp_path / copy) > 10
        with sqlite3.connect(tmp_path / copy) as con:
            assert con.execute("SELECT value FROM meta WHERE key = 'version'").fetchone() == ("2",)
            assert con.execute("SELECT count(*) FROM results WHERE seal IS NOT NULL").fetchone() == (0,)
    given = Path(path).read_bytes()
    copy = tmp_path / "v1.db"
    copy.write_bytes(given)
    r = run_cli("bound", "--game", "mastermind:4x6", "--levels", "2", "--store", path, "--json")
    assert r.returncode == 0 and orjson.loads(r.stdout)["lower_bound"] <= OPTIMUM, r.stderr
    with sqlite3.connect(path) as con:
        assert con.execute("SELECT value FROM meta WHERE key = 'version'").fetchone() == ("2",)
    # trusted, it is named by the SHA-256 of the file as given, before its upgrade
    r = run_cli("bound", "--game", "mastermind:4x6", "--levels", "2", "--store", str(copy), "--trust", str(copy))
    assert r.returncode == 0 and f"(sha256 {hashlib.sha256(given).hexdigest()})" in r.stdout, r.stdout


def test_an_exact_row_is_believed_only_with_its_seal(tmp_path, solved_store, entropy):
    """A subtree shows that its value can be reached, not that it is the least: an unsealed exact row holding the
    entropy tree (5722) at the root is searched again (a forged store proved 5722 before seals covered exact rows)."""
    path = tampered(
        solved_store,
        tmp_path,
        "UPDATE results SET value = ?, tree = ?, seal = NULL WHERE depth = 0 AND size = 1296 AND exact = 1",
        ENTROPY,
        zlib.compress(orjson.dumps(entropy["tree"])),
    )
    r = run_cli("bound", "--game", "mastermind:4x6", "--levels", "2", "--store", path, "--json")
    assert r.returncode == 0 and orjson.loads(r.stdout)["lower_bound"] <= OPTIMUM, r.stderr
    out = tmp_path / "t.json"
    r = run_cli("solve", "--game", "mastermind:4x6", "--store", path, "--quiet", "-o", str(out))
    assert solved_total(r, out) == OPTIMUM and sealed_elsewhere(r)


def test_two_runs_may_create_one_store_at_once(tmp_path):
    """Two runs started on one new store both use it (one of them failed on a UNIQUE constraint 1 time in 4)."""
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "strategy", "bound", "--game", "bulls:3x6", "--levels", "1", "--store", str(store)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
        )
        for store in [tmp_path / f"s{i // 2}.db" for i in range(8)]
    ]
    for run in runs:
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0 and "at least" in out, err


def test_a_relative_data_home_is_ignored(tmp_path, monkeypatch):
    """The XDG specification says a relative XDG_DATA_HOME is ignored: the key does not follow the current folder."""
    from strategy.search.store import key_path

    monkeypatch.setenv("XDG_DATA_HOME", "relative")
    assert key_path().is_absolute() and "relative" not in key_path().parts


def test_what_a_run_finds_on_trust_is_not_sealed_as_its_own(tmp_path, solved_store):
    """A trusted store's lie must not become this installation's work: what a run finds after believing an
    unsealed row is written unsealed, and a later run without --trust searches it again (it printed "proved 5637"
    with no relies_on)."""
    path = tampered(solved_store, tmp_path, "DELETE FROM results WHERE key NOT LIKE '%/%'")
    with contextlib.closing(sqlite3.connect(path)) as con, con:
        con.execute("UPDATE results SET value = value + 100, exact = 0, tree = NULL")
    out = tmp_path / "t.json"
    trusted = run_cli("solve", "--game", "mastermind:4x6", "--store", path, "--trust", path, "--quiet", "-o", str(out))
    assert trusted.returncode in (0, 2) and "Traceback" not in trusted.stderr, trusted.stderr
    if trusted.returncode == 0:  # a proof that says what it rests on
        assert orjson.loads(out.read_bytes())["generator"]["proven"]["relies_on"][0]["store"] is True
    r = run_cli("solve", "--game", "mastermind:4x6", "--store", path, "--quiet", "-o", str(out))
    assert solved_total(r, out) == OPTIMUM
    r = run_cli("bound", "--game", "mastermind:4x6", "--levels", "2", "--store", path, "--json")
    assert orjson.loads(r.stdout)["lower_bound"] <= OPTIMUM


def test_a_trusted_claim_the_search_refutes_is_refused(tmp_path, entropy):
    """A trusted file claiming a least total of 5700 (above the optimum, below its own tree's 5722) is refused in
    one line when the search finds 5625, as a trusted store's row is: it was proven 5625 in silence."""
    claim = {"lower_bound": 5700, "bound_of": "total", "objective_of_the_search": "total"}
    path = forged(tmp_path, entropy, "forged.json", "partial", claim)
    out = tmp_path / "t.json"
    r = run_cli("solve", "--game", "mastermind:4x6", "--incumbent", path, "--trust", path, "--quiet", "-o", str(out))
    assert r.returncode == 2 and not out.exists() and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.strip().splitlines()[-1] == (
        f"strategy: error: 'forged.json' claims a lower bound of 5700, and the search found {OPTIMUM}: the claim is "
        f"false (it was trusted with --trust)"
    )


def test_improve_says_what_it_searched_again(tmp_path, entropy):
    """`improve --store` searches unsealed endgames again and says so, as solve and bound do."""
    tree = tmp_path / "e.json"
    tree.write_bytes(orjson.dumps(entropy))
    store = tmp_path / "eg.db"
    args = ("improve", str(tree), "--exact-below", "100", "--store", str(store), "-o", str(tmp_path / "i.json"))
    r = run_cli(*args)
    assert r.returncode == 0 and not sealed_elsewhere(r), r.stderr
    with contextlib.closing(sqlite3.connect(store)) as con, con:
        con.execute("UPDATE results SET seal = NULL")
    r = run_cli(*args)
    assert r.returncode == 0 and sealed_elsewhere(r), r.stderr


def test_improve_trusts_the_endgames_of_a_store_it_is_told_to(tmp_path, entropy):
    """`improve --store S --trust S` takes the endgames S holds unsealed (a frontier store restored from its shipped
    copy) instead of searching them again, and its record names S with its SHA-256."""
    tree = tmp_path / "e.json"
    tree.write_bytes(orjson.dumps(entropy))
    store, out = tmp_path / "eg.db", tmp_path / "i.json"
    args = ("improve", str(tree), "--exact-below", "100", "--store", str(store), "-o", str(out))
    assert run_cli(*args).returncode == 0
    searched = orjson.loads(out.read_bytes())["generator"]["exact_endgame"]
    with contextlib.closing(sqlite3.connect(store)) as con, con:
        con.execute("UPDATE results SET seal = NULL")
    digest = hashlib.sha256(store.read_bytes()).hexdigest()
    r = run_cli(*args, "--trust", str(store))
    assert r.returncode == 0 and not sealed_elsewhere(r), r.stderr
    record = orjson.loads(out.read_bytes())["generator"]["exact_endgame"]
    assert record["from_store"] == searched["subtrees"] > 0
    assert record["relies_on"] == [{"file": "eg.db", "sha256": digest, "store": True}]
    assert f"the endgames rely on the bounds stored in 'eg.db' (sha256 {digest})" in r.stderr
    r = run_cli(*args, "--trust", str(store), "--json")  # the report says so too
    assert orjson.loads(r.stdout)["exact_endgame"]["relies_on"] == record["relies_on"], r.stderr
    r = run_cli("improve", str(tree), "--exact-below", "100", "--trust", str(store), "-o", str(out))
    assert r.returncode == 2 and r.stderr.strip().splitlines()[-1] == (
        f"strategy: error: --trust {quote(store)}: name a file given with --store"
    ), r.stderr


@pytest.mark.parametrize(
    "args,said",
    [
        (["bound", "--game", "bulls:3x6", "--trust", "x.db"], "--trust 'x.db': name a file given with --store"),
        (
            ["bound", "--game", "bulls:3x6", "--store", "s.db", "--trust", "t.db"],
            "--trust 't.db': name a file given with --store",
        ),
        (
            ["solve", "--game", "bulls:3x6", "--trust", "x.db", "-o", "t.json"],
            "--trust 'x.db': name a file given with --incumbent, --partial or --store",
        ),
    ],
)
def test_trust_names_what_it_may_name(tmp_path, monkeypatch, args, said):
    """`bound` has only its store to trust, and a store's name is not mistaken for a missing tree."""
    monkeypatch.chdir(tmp_path)
    r = run_cli(*args)
    assert r.returncode == 2 and r.stderr.strip().splitlines()[-1] == f"strategy: error: {said}", r.stderr


def test_a_new_store_may_be_named_by_trust(tmp_path):
    """Trusting a store that a solve creates is allowed (and changes nothing: it holds nothing to believe)."""
    store, out = tmp_path / "s.db", tmp_path / "t.json"
    r = run_cli("solve", "--game", "bulls:3x6", "--store", str(store), "--trust", str(store), "--quiet", "-o", str(out))
    assert r.returncode == 0 and "relies_on" not in orjson.loads(out.read_bytes())["generator"]["proven"], r.stderr


def test_a_trusted_store_is_named_by_the_file_its_rows_came_from(tmp_path, entropy):
    """Beside a store a killed run may leave a hot rollback journal, which SQLite rolls back as it reads: the
    SHA-256 a trusted store is named by is taken after that, of the rows that were believed; a name that is not
    UTF-8 is written with backslash escapes."""
    tree = tmp_path / "e.json"
    tree.write_bytes(orjson.dumps(entropy))
    store = tmp_path / "s.db"
    args = ("improve", str(tree), "--exact-below", "100", "-o", str(tmp_path / "i.json"))
    assert run_cli(*args, "--store", str(store)).returncode == 0
    with contextlib.closing(sqlite3.connect(store)) as con:
        con.execute("PRAGMA journal_mode = DELETE")
        con.execute("UPDATE results SET seal = NULL")
        con.commit()
        con.execute("PRAGMA cache_size = 1")  # the changes spill into the file before the commit, as a large run's do
        con.execute("BEGIN IMMEDIATE")
        con.execute("UPDATE results SET value = value + 1000")  # never committed: the journal undoes it
        killed = os.fsencode(tmp_path) + b"/k\xff.db"
        for copy in (killed, os.fsencode(tmp_path / "m.db")):  # the pages and the journal as a killed run left them
            Path(os.fsdecode(copy)).write_bytes(store.read_bytes())
            Path(os.fsdecode(copy + b"-journal")).write_bytes(Path(f"{store}-journal").read_bytes())
        con.rollback()
    with contextlib.closing(sqlite3.connect(tmp_path / "m.db")) as con:
        con.execute("SELECT count(*) FROM results").fetchone()  # SQLite rolls the journal back as it reads
    rows_read = hashlib.sha256((tmp_path / "m.db").read_bytes()).hexdigest()
    assert rows_read != hashlib.sha256(Path(os.fsdecode(killed)).read_bytes()).hexdigest()  # the journal matters
    r = run_cli(
        *args[:-2], "--store", os.fsdecode(killed), "--trust", os.fsdecode(killed), "-o", str(tmp_path / "k.json")
    )
    assert r.returncode == 0, r.stderr
    (relied,) = orjson.loads((tmp_path / "k.json").read_bytes())["generator"]["exact_endgame"]["relies_on"]
    assert relied["file"] == "k\\xff.db" and not os.path.exists(killed + b"-journal")
    assert relied["sha256"] == rows_read


@pytest.mark.parametrize("side", ["-wal", "-shm", "-journal"])
def test_a_tree_is_never_a_file_sqlite_keeps_beside_the_store(tmp_path, entropy, side):
    """SQLite deletes or rewrites the files beside a store: a tree named as one of them is refused, in or out."""
    tree = tmp_path / "e.json"
    tree.write_bytes(orjson.dumps(entropy))
    store = tmp_path / "s.db"
    beside = f"{store}{side}"
    for args in (
        ("improve", str(tree), "--exact-below", "30", "--store", str(store), "-o", beside),
        (
            "build",
            "--game",
            "mastermind:4x6",
            "--strategy",
            "entropy",
            "--exact-below",
            "30",
            "--store",
            str(store),
            "-o",
            beside,
        ),
        ("solve", "--game", "bulls:3x6", "--store", str(store), "-o", beside),
    ):
        r = run_cli(*args)
        assert r.returncode == 2 and "name the same file" in r.stderr and "Traceback" not in r.stderr, r.stderr
    Path(beside).write_bytes(tree.read_bytes())
    r = run_cli("improve", beside, "--exact-below", "30", "--store", str(store), "-o", str(tmp_path / "i.json"))
    assert r.returncode == 2 and "name the same file" in r.stderr and Path(beside).exists(), r.stderr
    (tmp_path / "links").mkdir()
    link = tmp_path / "links" / "l.db"  # SQLite keeps the side files beside the file a link names
    link.symlink_to(store)
    r = run_cli("improve", beside, "--exact-below", "30", "--store", str(link), "-o", str(tmp_path / "i.json"))
    assert r.returncode == 2 and "name the same file" in r.stderr and Path(beside).exists(), r.stderr


@pytest.mark.parametrize("command", ["improve", "bound"])
@pytest.mark.parametrize("store", ["", "fifo"])
def test_a_store_has_a_name_and_is_a_regular_file(tmp_path, store, command):
    """SQLite would keep a store with no name in memory and lose it, or write one into a pipe: both are one line."""
    if store:
        store = str(tmp_path / store)
        os.mkfifo(store)
    args = (
        ("improve", "mastermind:4x6", "--exact-below", "30", "-o", str(tmp_path / "i.json"))
        if command == "improve"
        else ("bound", "--game", "bulls:3x6")
    )
    r = run_cli(*args, "--store", store)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert ("needs a file name" if not store else "is not a regular file") in r.stderr


def test_a_json_report_holds_file_names_that_are_not_utf8(tmp_path):
    """A name's bytes that are not UTF-8 are escaped in a --json report (it ended in an internal error, after the
    tree was written)."""
    out = os.fsdecode(os.fsencode(tmp_path) + b"/o\xff.json")
    r = run_cli("improve", "mastermind:4x6", "--exact-below", "30", "--json", "-o", out)
    assert r.returncode == 0 and orjson.loads(r.stdout)["output"].endswith("o\\xff.json"), r.stderr
