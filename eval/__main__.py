"""`python -m eval validate|run|calibrate|sweep|candidates|probe` from a checkout: the product's golden-set
commands (`hippo eval`, hippo_cli/eval.py), kept under this name for the benchmark scripts' users."""

from __future__ import annotations

import sys

from hippo_cli.eval import main

if __name__ == "__main__":
    sys.exit(main())
