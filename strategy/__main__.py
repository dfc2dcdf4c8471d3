import sys

from .cli import main

if __name__ == "__main__":  # worker processes are spawned and re-import the main module
    sys.exit(main())
