"""`python -m load`: see load.cli."""

import os
import sys

# Before Locust is imported: the calls run on a plain asyncio loop (load.bridge), which gevent's
# patched sockets and selectors would break.
os.environ.setdefault("LOCUST_SKIP_MONKEY_PATCH", "1")

from load.cli import main

sys.exit(main())
