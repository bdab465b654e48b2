"""Quickstart as a script: ``python examples/quickstart.py [--quick] [--out DIR]``.

The code lives in :mod:`fgraph.examples.quickstart` so that the installed
command ``fgraph run quickstart`` runs the same thing; read that module for
the model. This script is a thin entry point for people working from a clone.
"""
from fgraph.cli import main

if __name__ == "__main__":
    import sys

    raise SystemExit(main(["run", "quickstart", *sys.argv[1:]]))
