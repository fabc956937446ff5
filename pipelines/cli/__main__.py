"""`python -m pipelines.cli`: the `ratings` command without the console script."""

import sys

from pipelines.cli.app import main

sys.exit(main())
