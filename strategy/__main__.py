from .cli import run

if __name__ == "__main__":  # worker processes are spawned and re-import the main module
    run()
