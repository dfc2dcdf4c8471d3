"""`strategy play`: a person or a program against a stored tree (offence, auto, defence, race, protocol)."""
from __future__ import annotations

import argparse
import random

from ..rules import parse_game
from .options import MAX_GAMES, MAX_SEED, TREE_HELP, CommandError, add_game, command, int_in, print_json, probability

PLAY_MODES = ("all", "defence", "race", "self_test")


def cmd_play(args: argparse.Namespace) -> int:
    from ..play import session
    from ..play.channels import JsonChannel, TextChannel
    from ..play.walker import Walker

    modes = [m for m in PLAY_MODES if getattr(args, m)]
    if len(modes) > 1:
        raise CommandError(f"choose one mode: --{modes[0].replace('_', '-')} and --{modes[1].replace('_', '-')} exclude each other")
    mode = modes[0] if modes else "offence"
    _play_option_conflicts(args, mode)
    walker = Walker.load(args.tree) if args.tree else None
    game = parse_game(args.game) if args.game else (walker.game if walker else None)
    if game is None:
        raise CommandError("play needs a TREE (or --game for --defence and --self-test)")
    if walker and game != walker.game:
        raise CommandError(f"the tree is for {walker.game.spec}, not {game.spec}")
    if walker is None and mode not in ("defence", "self_test"):
        raise CommandError("this mode needs a TREE")
    secret = game.parse_code(args.secret) if args.secret else None
    if mode == "self_test":
        return _self_test(game, args)
    if mode == "all":
        return _play_all(walker, args)
    channel = JsonChannel() if args.protocol else TextChannel(game)
    rng = random.Random(args.seed)
    if mode == "defence":
        def play(code): return session.defence(game, channel, code or rng.choice(game.codes()), coach=not args.protocol)
    elif mode == "race":
        def play(code): return session.race(walker, channel, code or rng.choice(game.codes()), tree=args.tree,
                                            model=args.opponent or "tree")
    else:
        def play(code): return session.offence(walker, channel, code, args.noise, tree=args.tree)
    if args.protocol:  # programs may play many games in one process
        return session.serve(channel, game, play, secret)
    return play(secret)


def _play_option_conflicts(args: argparse.Namespace, mode: str) -> None:
    """Refuse options that the chosen mode would silently ignore."""
    allowed = {
        "offence": {"secret", "noise", "protocol"},
        "defence": {"secret", "seed", "protocol", "game"},
        "race": {"secret", "seed", "protocol", "opponent"},
        "all": {"json"},
        "self_test": {"noise", "seed", "games", "json", "game"},
    }[mode] | {"game"}
    given = {"secret": args.secret is not None, "noise": args.noise is not None, "seed": args.seed is not None,
             "games": args.games is not None, "protocol": args.protocol, "json": args.json,
             "opponent": args.opponent is not None}
    for option, present in given.items():
        if present and option not in allowed:
            name = "offence" if mode == "offence" else "--" + mode.replace("_", "-")
            raise CommandError(f"--{option} does not apply to {name}")
    if mode == "self_test" and args.noise is None:
        raise CommandError("--self-test needs --noise Q")


def _play_all(walker, args: argparse.Namespace) -> int:
    from ..tree.report import distribution_table, stats_json
    from ..tree.verify import verify

    stats = verify(walker.doc)
    if args.json:
        print_json({"tree": args.tree, "game": walker.game.spec, "objective": walker.doc.objective,
                     "stats": stats_json(stats)})
    else:
        print(f"{walker.game.spec}: every secret played through the tree")
        print(distribution_table(stats))
    return 0


def _self_test(game, args: argparse.Namespace) -> int:
    from ..play.noisy import self_test

    games = args.games if args.games is not None else 100
    result = self_test(game, args.noise, games, args.seed or 0, progress=not args.json)
    if args.json:
        print_json({"game": game.spec, "noise": args.noise, "games": result.games, "found": result.found,
                     "average_questions": round(result.average_questions, 4), "longest": result.worst})
    else:
        print(f"{game.spec}, answers wrong with probability {args.noise}: {result.games} games, "
              f"secret found in {result.found} ({result.found / result.games:.1%}), "
              f"average {result.average_questions:.2f} questions, longest {result.worst}")
    return 0


PLAY_EPILOG = """answers may be typed in any common notation: 1,2  1 2  12  1H2B  1A2B  '1 hit, 2 blows'
'Hit = 1, Blow = 2'  '1 bull 2 cows'  1B2C  '1 black 2 white'  1B2W, or the code length alone (4)
for all hits. While playing: undo, correct NUMBER ANSWER, noisy [Q], q.
exit status: 0 solved (or the race decided), 2 bad input, 3 quit, 4 end of input,
5 ended while the answers contradicted each other."""


def add_commands(sub) -> None:
    """Register play."""
    p = command(sub, "play", "play from a stored tree: offence, auto, defence, race",
                "Play a game with a person or a program. Offence: I ask from the tree, you answer. With --secret: "
                "I answer for that secret too. --defence: I hold a secret, you ask. --race: we both ask in turn. "
                "--protocol: one JSON object per line for programs (see the README).", cmd_play, epilog=PLAY_EPILOG)
    p.add_argument("tree", metavar="TREE", nargs="?", help=TREE_HELP)
    p.add_argument("--secret", metavar="CODE", help="auto mode: answer for this secret (with --defence/--race: my secret)")
    p.add_argument("--all", action="store_true", help="play every secret and print the distribution")
    p.add_argument("--defence", action="store_true", help="I hold a secret, you ask")
    p.add_argument("--race", action="store_true", help="Numeron: we both hold a secret and ask in turn")
    add_game(p, required=False)
    p.add_argument("--seed", type=int_in(0, MAX_SEED, "--seed"), help="seed for my random secret / the self-test")
    p.add_argument("--noise", type=probability, metavar="Q", help="answers may be wrong with probability Q (noisy-answer mode)")
    p.add_argument("--self-test", action="store_true", help="with --noise: play a simulated liar and report")
    p.add_argument("--games", type=int_in(1, MAX_GAMES, "--games"), help="games for --self-test (default 100)")
    p.add_argument("--opponent", choices=["tree", "random-consistent"],
                   help="race: how I expect you to play (default: as my tree would, from what you know)")
    p.add_argument("--protocol", action="store_true", help="speak the JSON-lines protocol on standard input and output")
    p.add_argument("--json", action="store_true", help="with --all or --self-test: print the report as JSON")
