"""`python -m strategy` and the `strategy` command: the command line, loaded where a Ctrl-C is told as later."""

import sys


def main() -> None:
    """Load and run the command line. A Ctrl-C while it loads (about 0.3 s) ends in one line and the status a
    later one gives, not a traceback through the imports."""
    try:
        from .cli import run
    except KeyboardInterrupt:
        from .protocol import EXIT_INTERRUPTED

        sys.stderr.write("strategy: interrupted\n")
        sys.exit(EXIT_INTERRUPTED)
    run()


if __name__ == "__main__":  # worker processes are spawned and re-import the main module
    main()
