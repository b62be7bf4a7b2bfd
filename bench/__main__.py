"""`python -m bench`: the benchmark, from a checkout."""

import sys

from bench.run import main

sys.exit(main())
