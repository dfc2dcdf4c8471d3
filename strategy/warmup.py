"""Compiling the kernels before the work: the one home of every warm-up.

A command's first call of a compiled kernel compiles it (about a minute on a busy machine, once after install
or an upgrade; numba keeps the result in its cache, see `strategy.engine`). A command checks whether the kernels
it calls are in numba's cache (`ready`), and if not compiles them here (`warm_up`) while the terminal counts the
seconds, before any worker process or thread starts: a compile later on would be silent, and for a solve
repeated in every worker at once. Each warm-up runs the command's own code on a small game, so that every entry
point it calls from Python is compiled with the signatures it uses (a test checks that a real run then compiles
nothing more).
"""

from __future__ import annotations

WARM_UP_GAME = "bulls:3x8"  # 336 codes: the solve driver splits it, and every kernel path is reached
PARTS = {
    "search": "the search engine",
    "builder": "the tree builder",
    "bound": "the bound kernels",
    "fallback": "the greedy fallback of an interrupted solve",
    "analyse": "the analysis engine",
}


def ready(part: str, strategy: str = "entropy") -> bool:
    """True when numba's cache holds what `warm_up(part)` compiles."""
    from .engine import compiled, exact, greedy

    if part == "search":
        return compiled(exact, "solve") and compiled(exact, "probe_bounds")
    if part == "fallback":
        return compiled(greedy, "build_steps")
    if part == "builder":
        return all(compiled(greedy, kernel) for kernel in ("build_steps", "probe_scores"))
    if part == "bound":
        return compiled(exact, "probe_bounds") and compiled(exact, "solve")
    if part == "analyse":
        from .engine import symmetry

        return (
            compiled(exact, "solve")
            and compiled(exact, "bound_set")
            and compiled(symmetry, "stabiliser")
            and compiled(greedy, "build_steps")
        )
    raise ValueError(f"no warm-up for {part!r}")


def warm_up(part: str, strategy: str = "entropy") -> None:
    """Compile (or load from numba's cache) every kernel that `part` calls: a search (solve, improve, build
    --exact-below), a greedy build (of `strategy`), or a lookahead bound."""
    from .rules import parse_game

    game = parse_game(WARM_UP_GAME)
    if part in ("search", "bound", "analyse"):
        _search_kernels(game)
    if part == "search":
        _search(game)
    elif part == "fallback":  # an interrupted solve's best tree falls back on greedy trees where it searched none
        from .engine.table import game_codes
        from .search.solve import GREEDY_FALLBACKS

        _greedy(game_codes(game), GREEDY_FALLBACKS[0])
    elif part == "builder":
        _builder(game, strategy)
    elif part == "bound":
        from .engine.table import game_table
        from .search import objectives
        from .search.lookahead import lookahead_bound

        lookahead_bound(game_table(game), objectives.total(), 2, exact_below=60)
    elif part == "analyse":
        _analyse(game)
    else:
        raise ValueError(f"no warm-up for {part!r}")


def in_background(part: str) -> None:
    """Compile `part` in a process of its own, at low priority, unless numba's cache holds it: for kernels a command
    may need later (an interrupted solve's greedy fallback), compiled on the other core while it works. The process
    outlives the command if it must: what it compiles is kept in the cache for the next run."""
    import os
    import subprocess
    import sys
    import time

    if ready(part):
        return
    # one such process at a time (a first run of the tests starts many solves at once): a marker in the cache folder
    marker = os.path.join(os.environ.get("NUMBA_CACHE_DIR") or os.path.expanduser("~"), f".warming-{part}")
    try:
        if time.time() - os.path.getmtime(marker) < 600:
            return
    except OSError:
        pass
    try:
        with open(marker, "w"):
            pass
    except OSError:
        return
    code = (
        f"import os; os.nice(10); from strategy import warmup\ntry: warmup.warm_up({part!r})\n"
        f"finally: os.unlink({marker!r})"
    )
    subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        # a group of its own, so that a Ctrl-C at the terminal does not reach it; in this session still, where its
        # low priority counts (a session of its own would have a fair share of its own: half the machine)
        preexec_fn=os.setpgrp,
        env=child_env(),
    )


# the first lines of a helper process given its parent's pid: on Linux the kernel kills it when the parent ends
# (prctl PR_SET_PDEATHSIG, SIGKILL), before it imports anything; a parent gone already ends it at once
ORPHANLESS = (
    "import os, sys\ntry:\n    import ctypes; ctypes.CDLL(None).prctl(1, 9)\nexcept Exception:\n    pass\n"
    "if os.getppid() != int(sys.argv[1]):\n    os._exit(1)\n"
)


def _search_kernels(game) -> None:
    """The exact search's two largest kernels at once: `probe_bounds` in a process of its own while this one compiles
    `solve`, which calls it through its address (`searcher.ProbeBoundsFn`) and so compiles without it. Each takes
    about as long as the other; one after the other they were most of a first run."""
    import os
    import subprocess
    import sys

    from .engine import compiled, exact

    helper = None
    if not compiled(exact, "probe_bounds"):
        helper = subprocess.Popen(
            [
                sys.executable,
                "-c",
                ORPHANLESS + "from strategy import warmup; warmup.compile_probe_bounds()",
                str(os.getpid()),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=child_env(),
        )
    try:
        if not compiled(exact, "solve"):
            exact.solve.compile(_engine(game).solve_types())
    except BaseException:  # a Ctrl-C: nobody waits for the other compile any more
        if helper is not None:
            helper.kill()
        raise
    finally:
        if helper is not None:
            helper.wait()  # its result is in numba's cache; if it failed, the first call compiles it here


def compile_probe_bounds() -> None:
    """`probe_bounds` for the warm-up game's engine (see `_search_kernels`), in a process that ends with its parent
    (`ORPHANLESS`): a compile nobody waits for any more is not left running."""
    import os
    import sys
    import threading
    import time

    from .rules import parse_game

    def watch() -> None:  # where the kernel cannot end it with its parent
        while os.getppid() == int(sys.argv[1]):
            time.sleep(0.2)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()
    _engine(parse_game(WARM_UP_GAME)).probe_bounds_fn.__wrapper_address__()


def _engine(game):
    """An engine of the warm-up game under the least total."""
    from .engine.searcher import Engine, Spec
    from .engine.table import game_table
    from .search import objectives

    return Engine(game_table(game), Spec(game, objectives.total(), False, tt_bits=4))


def child_env() -> dict:
    """The environment of a process of this package's own: it imports this package, from wherever this one was."""
    import os

    home = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the folder that holds this package
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [home, os.environ.get("PYTHONPATH")])))


def _search(game) -> None:
    """Solve a small game in this process with the driver splitting it; then what a solve calls besides: the
    worst-case objectives' first depth, and both kernels of a set's branching (a probe task's extraction calls
    it). The greedy fallback of an interrupted solve is a part of its own, compiled beside (`in_background`)."""
    import numpy as np

    from .engine import exact
    from .engine.table import game_table
    from .search.solve import Resources, min_depth_bound, solve_game

    gt = game_table(game)
    solve_game(gt, "total", Resources(jobs=1, plan="coarse"), progress=False)
    min_depth_bound(gt)
    engine = _engine(game)
    for n in (exact.BYTES_MAX, gt.size):
        engine.branching(np.arange(n, dtype=np.int32))


def _analyse(game) -> None:
    """Every question of a position of the small game valued, under both objectives, with a budget (the threaded
    searches and the greedy upper bounds) and without, and a set of secrets given as such."""
    import time

    from .engine.table import game_table
    from .search.analyse import Analyser, position_from_history, position_from_secrets

    gt = game_table(game)
    pos = position_from_history(gt, [("012", "0,1")])
    for objective in ("total", "worst"):
        Analyser(gt, objective).analyse(pos)
    Analyser(gt).analyse(pos, top=2, deadline=time.perf_counter() + 1e-3)
    Analyser(gt).grade(position_from_secrets(gt, ["123", "124", "135", "456"]), "012")


def _builder(game, strategy: str) -> None:
    """Build the small game's tree, pilot its root, and scan it as a big node is scanned by threads."""
    from .build.pilot import build_pilot
    from .engine.table import game_codes

    gc = game_codes(game)
    _greedy(gc, strategy)
    build_pilot(gc, "entropy", 1, gc.size, progress=False)  # the pilot's own kernels, at the root alone


def _greedy(gc, strategy: str) -> None:
    """A greedy build of the small game, and a scan of its root by two threads: every kernel of a greedy build (one
    compile serves every rule)."""
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np

    from .build.greedy import Steps, build_checked

    build_checked(gc, strategy, progress=False, threads=2)
    codes = np.arange(gc.size, dtype=np.int32)
    with ThreadPoolExecutor(2) as executor:
        Steps(gc, strategy, False, 0, gc.size).scanner(executor, 2)(codes, codes)
