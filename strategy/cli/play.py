"""`strategy play`: a person or a program against a stored tree, or live play without one (offence, auto,
defence, race, protocol; `--all` and its sample)."""

from __future__ import annotations

import argparse
import random
import sys
from typing import TYPE_CHECKING, Sequence

from ..files import FileError
from ..interrupts import Terminated
from ..play.advice import ADVICE_SECONDS, ANALYSE_TIMES, advisor_for
from ..rules import MAX_CODES, MAX_LIVE_CODES, MAX_TABLE_CODES, GameError, parse_game
from ..tree.format import TreeError
from .options import (
    MAX_GAMES,
    MAX_SEED,
    TREE_HELP,
    CommandError,
    command,
    int_in,
    positive_seconds,
    print_json,
    probability,
    require_compiled_code,
    signal_status,
    tree_argument,
)

if TYPE_CHECKING:
    from ..play.live import LiveWalker

PLAY_MODES = ("all", "defence", "race", "self_test")


class LiveGame(str):
    """play's TREE argument when it is a game no shipped tree names (`bulls:10x10`): that game, played live."""


def play_tree_argument(text: str) -> str:
    """An argparse type: what play's TREE stands for: a tree file (as `tree_argument`), or a game that no shipped
    tree names, to play live (`LiveGame`)."""
    try:
        return tree_argument(text)
    except argparse.ArgumentTypeError:
        if ":" not in text or "/" in text:
            raise
    try:
        return LiveGame(parse_game(text, MAX_LIVE_CODES).spec)
    except GameError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def protocol_requested(argv: Sequence[str]) -> bool:
    """Whether a command line, even one argparse refuses, is `play ... --protocol` (or an abbreviation of it)."""
    if not argv or argv[0] != "play":
        return False
    options = list(argv[1:])
    options = options[: options.index("--")] if "--" in options else options
    return any(len(a) >= 3 and "--protocol".startswith(a) for a in options)


def failed_to_start(message: str) -> None:
    """Tell a program that the player could not start, in the protocol (the line on standard error is told too)."""
    from ..play import session
    from ..play.channels import JsonChannel

    session.failed_to_start(JsonChannel(), message)


def cmd_play(args: argparse.Namespace) -> int:
    try:
        play = _prepare(args)
    except (GameError, TreeError, FileError, CommandError) as e:
        if args.protocol:
            failed_to_start(str(e))
        raise
    try:
        return play()
    except (KeyboardInterrupt, Terminated) as e:
        if args.protocol:  # a program hears it too: the game ended, and the status the process exits with
            _interrupted(signal_status(e))  # a second signal meanwhile is the same request (interrupts._stop)
        raise


def _interrupted(status: int) -> None:
    """The protocol's last event when a signal stops the player (unless its output is gone already)."""
    from ..play.channels import JsonChannel

    try:
        JsonChannel().emit({"event": "end", "reason": "interrupted", "exit": status})
    except (OSError, ValueError):
        pass


def _prepare(args: argparse.Namespace):
    """Everything play does before the first game: the options checked, the game and the tree read; the rest as a
    function to call."""
    from ..play import session
    from ..play.channels import JsonChannel, TextChannel
    from ..play.walker import Walker
    from ..tree.shipped import label

    if isinstance(args.tree, LiveGame):  # a game that no shipped tree names: live play, as with --game
        if args.game is not None and parse_game(args.game, MAX_LIVE_CODES).spec != args.tree:
            raise CommandError(f"TREE names the game {args.tree} and --game {args.game[:40]!r} another")
        args.game, args.tree = str(args.tree), None
    modes = [m for m in PLAY_MODES if getattr(args, m)]
    if len(modes) > 1:
        raise CommandError(
            f"choose one mode: --{modes[0].replace('_', '-')} and --{modes[1].replace('_', '-')} exclude each other"
        )
    mode = modes[0] if modes else "offence"
    _play_option_conflicts(args, mode)
    # the game first, from its spec alone: a game beyond the mode is refused before any file is read
    given = (
        parse_game(args.game, MAX_CODES if args.tree or mode == "self_test" else MAX_LIVE_CODES)
        if args.game is not None
        else None
    )
    # Walker.open: a shipped tree asks its first question at once, before the rest of it is read
    walker: Walker | LiveWalker | None = Walker.open(args.tree) if args.tree else None
    game = given or (walker.game if walker else None)
    if game is None:
        raise CommandError("play needs a TREE or --game G (without a tree: live play, in every mode)")
    if walker and game != walker.game:
        raise CommandError(f"the tree is for {walker.game.spec}, not {game.spec}")
    if args.noise is not None and game.count() > MAX_TABLE_CODES:
        raise CommandError(
            f"{game.spec} has {game.count():,} codes; noisy mode keeps the N×N answer table: games of "
            f"up to {MAX_TABLE_CODES:,} codes"
        )
    secret = game.parse_code(args.secret) if args.secret is not None else None
    if args.budget is not None:
        if game.count() > MAX_TABLE_CODES:
            raise CommandError(
                f"--budget does not apply to {game.spec}: advice needs the answer table, games of up to "
                f"{MAX_TABLE_CODES:,} codes"
            )
        advisor_for(game).seconds = args.budget
    if mode == "self_test":
        return lambda: _self_test(game, args)
    tree_name = label(args.tree) if args.tree else None
    if walker is None and mode != "defence":
        from ..play.live import live_walker, shipped_tree

        walker = live_walker(game, args.seed or 0)  # the shipped tree's questions while on it, then live
        found = shipped_tree(game)
        tree_name = label(str(found)) if walker.tree is not None and found is not None else None
    if mode == "all":
        return lambda: _play_all(walker, args) if args.tree else _play_live_all(walker, args)
    games = session.Games(JsonChannel(), game) if args.protocol else None  # programs may play many games
    channel = games or TextChannel(game)
    rng = random.Random(args.seed)

    def drawn() -> tuple[int, ...]:  # what rng.choice(game.codes()) draws, without listing the codes
        return game.code_at(rng.randrange(game.count()))

    if mode == "defence":

        def play(code):
            return session.defence(game, channel, code or drawn(), coach=not args.protocol)
    elif mode == "race":

        def play(code):
            return session.race(walker, channel, code or drawn(), tree=tree_name, model=args.opponent or "tree")
    else:

        def play(code):
            return session.offence(walker, channel, code, args.noise, tree=tree_name)

    if games is not None:
        return lambda: session.serve(games, play, secret)
    return lambda: play(secret)


def _play_option_conflicts(args: argparse.Namespace, mode: str) -> None:
    """Refuse options that the chosen mode would silently ignore."""
    live = not args.tree  # live play: --seed fixes its samples
    allowed = {
        "offence": {"secret", "noise", "protocol", "budget"} | ({"seed"} if live else set()),
        "defence": {"secret", "seed", "protocol", "game", "budget"},
        "race": {"secret", "seed", "protocol", "budget"} | (set() if live else {"opponent"}),
        "all": {"json"} | ({"sample", "seed"} if live else set()),
        "self_test": {"noise", "seed", "games", "json", "game"},
    }[mode] | {"game"}
    given = {
        "secret": args.secret is not None,
        "noise": args.noise is not None,
        "seed": args.seed is not None,
        "games": args.games is not None,
        "protocol": args.protocol,
        "json": args.json,
        "opponent": args.opponent is not None,
        "sample": args.sample is not None,
        "budget": args.budget is not None,
    }
    for option, present in given.items():
        if present and option not in allowed:
            name = "offence" if mode == "offence" else "--" + mode.replace("_", "-")
            why = (
                " with a tree file"
                if option in ("seed", "sample") and not live
                else " without a tree file"
                if option == "opponent"
                else ""
            )
            raise CommandError(f"--{option} does not apply to {name}{why}")
    if args.budget is not None:  # where no advice can be asked, a budget would be silently ignored
        if args.noise is not None:
            raise CommandError("--budget does not apply to noisy-answer mode (--noise): it gives no advice")
        if mode == "offence" and args.secret is not None and not args.protocol:
            raise CommandError("--budget does not apply to a game that plays itself (offence with --secret)")
    if mode == "self_test" and args.noise is None:
        raise CommandError("--self-test needs --noise Q")


def _play_all(walker, args: argparse.Namespace) -> int:
    from ..tree.report import distribution_table, stats_json
    from ..tree.verify import verify

    stats = verify(walker.doc)
    if args.json:
        from ..tree.shipped import label

        print_json(
            {
                "tree": label(args.tree),
                "game": walker.game.spec,
                "objective": walker.doc.objective,
                "stats": stats_json(stats),
            }
        )
    else:
        print(f"{walker.game.spec}: every secret played through the tree")
        print(distribution_table(stats))
    return 0


def _play_live_all(walker, args: argparse.Namespace) -> int:
    """Every secret played live (small games), or `--sample N` seeded secrets with a 95% interval."""
    from ..play.sample import ALL_LIVE, play_many
    from ..tree.report import distribution_table

    game = walker.game
    if args.sample is None and game.count() > ALL_LIVE:
        raise CommandError(
            f"{game.spec} has {game.count():,} codes: --all without a tree plays every secret of games "
            f"up to {ALL_LIVE:,} codes; give --sample N to play N seeded secrets"
        )
    played = play_many(walker, args.sample, args.seed or 0, progress=not args.json and sys.stderr.isatty())
    source = "live" + (" (the shipped tree's questions while on it)" if walker.tree is not None else "")
    if args.json:
        print_json(played.to_json() | {"played": source})
    else:
        print(played.summary(source))
        print(distribution_table(played.stats))
    return 0


def _self_test(game, args: argparse.Namespace) -> int:
    from ..play.noisy import self_test

    require_compiled_code()  # the noisy player's scores are compiled kernels
    games = args.games if args.games is not None else 100
    result = self_test(game, args.noise, games, args.seed or 0, progress=not args.json)
    if args.json:
        print_json(
            {
                "game": game.spec,
                "noise": args.noise,
                "games": result.games,
                "found": result.found,
                "average_questions": round(result.average_questions, 4),
                "longest": result.worst,
            }
        )
    else:
        print(
            f"{game.spec}, answers wrong with probability {args.noise}: {result.games} games, "
            f"secret found in {result.found} ({result.found / result.games:.1%}), "
            f"average {result.average_questions:.2f} questions, longest {result.worst}"
        )
    return 0


PLAY_GAME_HELP = (
    f"the game (bulls:4x10, bulls:4x10:nz, mastermind:4x6); without a TREE, live play: every mode, "
    f"games of up to {MAX_LIVE_CODES:,} codes (bulls 10 of 10, Mastermind 7x10); with a TREE or "
    f"--self-test, up to {MAX_CODES:,} codes"
)
PLAY_EPILOG = """answers may be typed in any common notation: 1,2  1 2  12  1H2B  1A2B  '1 hit, 2 blows'
'Hit = 1, Blow = 2'  '1 bull 2 cows'  1B2C  '1 black 2 white'  1B2W, or the code length alone (4)
for all hits. While playing: undo, correct NUMBER ANSWER, noisy [Q], hint, grade CODE, analyse [K], help, q.
exit status: 0 solved (or the race decided), 2 bad input, 3 quit, 4 end of input,
5 ended while the answers contradicted each other."""


def add_commands(sub) -> None:
    """Register play."""
    p = command(
        sub,
        "play",
        "play from a stored tree, or live: offence, auto, defence, race",
        "Play a game with a person or a program. Offence: I ask from the tree, you answer. With --secret: "
        "I answer for that secret too. --defence: I hold a secret, you ask. --race: we both ask in turn. "
        "--protocol: one JSON object per line for programs (see docs/protocol.md). Without a TREE (--game G, "
        "or a game as TREE that no shipped tree names: play bulls:10x10), live play: each question is chosen at play time (the shipped tree's while on it, an exact search "
        "once the secrets are few, else entropy over a seeded sample), on games of up to "
        f"{MAX_LIVE_CODES:,} codes.",
        cmd_play,
        epilog=PLAY_EPILOG,
    )
    p.add_argument(
        "tree",
        type=play_tree_argument,
        metavar="TREE",
        nargs="?",
        help=TREE_HELP + "; a game no shipped tree names (bulls:10x10) plays live, as --game does; "
        "none: live play of --game",
    )
    p.add_argument(
        "--secret", metavar="CODE", help="auto mode: answer for this secret (with --defence/--race: my secret)"
    )
    p.add_argument(
        "--all",
        action="store_true",
        help="play every secret and print the distribution (without a TREE: "
        "games of up to 10,000 codes, or --sample N)",
    )
    p.add_argument(
        "--sample",
        type=int_in(1, MAX_GAMES, "--sample"),
        metavar="N",
        help="with --all and no TREE: play N seeded secrets; the average comes with its 95%% interval",
    )
    p.add_argument("--defence", action="store_true", help="I hold a secret, you ask")
    p.add_argument("--race", action="store_true", help="Numeron: we both hold a secret and ask in turn")
    p.add_argument("--game", metavar="SPEC", help=PLAY_GAME_HELP)
    p.add_argument(
        "--seed",
        type=int_in(0, MAX_SEED, "--seed"),
        help="seed for my random secret, the self-test, and live play's samples (default 0)",
    )
    p.add_argument(
        "--noise", type=probability, metavar="Q", help="answers may be wrong with probability Q (noisy-answer mode)"
    )
    p.add_argument("--self-test", action="store_true", help="with --noise: play a simulated liar and report")
    p.add_argument("--games", type=int_in(1, MAX_GAMES, "--games"), help="games for --self-test (default 100)")
    p.add_argument(
        "--opponent",
        choices=["tree", "random-consistent"],
        help="race with a TREE: how I expect you to play (default: as my tree would, from what you know)",
    )
    p.add_argument(
        "--budget",
        type=positive_seconds,
        metavar="SECONDS",
        help=f"the engine's time for each hint and grade (default {ADVICE_SECONDS:g}; analyse gets {ANALYSE_TIMES} "
        "times as long) and, playing a tree, for its question once the answers leave the tree's path: what it "
        "proves within it is exact, the rest bounds",
    )
    p.add_argument("--protocol", action="store_true", help="speak the JSON-lines protocol on standard input and output")
    p.add_argument("--json", action="store_true", help="with --all or --self-test: print the report as JSON")
