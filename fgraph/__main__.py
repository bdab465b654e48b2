"""``python -m fgraph``: the same command line as the ``fgraph`` script."""
from fgraph.cli import main

raise SystemExit(main())
