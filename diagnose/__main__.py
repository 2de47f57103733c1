"""``python -m diagnose``: the same command line as the ``diagnose`` script."""

from diagnose.cli import main

if __name__ == "__main__":
    main()
