"""``python -m devtools.pgcluster {start,stop,status}``."""

import sys

from devtools.pgcluster.cli import main

sys.exit(main())
