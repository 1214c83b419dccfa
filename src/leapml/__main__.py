"""``python -m leapml``: the ``leapml`` command."""

from leapml.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
