"""`python -m eval validate|run|calibrate|sweep|candidates|probe` from a checkout: the product's golden-set
commands (`hippo eval`, hippo_cli/eval.py), kept under this name for the benchmark scripts' users.

`python -m eval run` also writes its figures to `eval/results/golden.json` (eval/results.py), as every
benchmark does; `hippo eval run` does not (the product never writes the checkout's results).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from eval.results import write_result
from hippo_cli.eval import main as golden_main

METRICS = ("hit@1", "hit@3", "hit@10", "mrr@10", "ndcg@10", "section@1")


def golden_tables(report: dict[str, Any]) -> dict[str, Any]:
    """The figures `eval/results` keeps of a golden run: a row per slice (overall, category, language)."""
    slices = {"overall": report["overall"], **report["by_category"], **report["by_lang"]}
    rows = {
        name: {"n": m["n"]} | {k: round(m[k], 3) for k in METRICS if k in m} for name, m in slices.items()
    }
    return {
        "golden set": rows,
        "dataset": report["dataset_fingerprint"],
        "signature": report["run_signature"],
    }


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] != ["run"]:
        return golden_main(args)
    with tempfile.TemporaryDirectory(prefix="hippo-golden-") as tmp:
        given = args.index("--json") + 1 if "--json" in args else None
        out = Path(args[given]) if given else Path(tmp) / "golden.json"
        rc = golden_main(args if given else [*args, "--json", str(out)])
        if rc == 0 and out.is_file():
            write_result(
                "golden", golden_tables(json.loads(out.read_text(encoding="utf-8"))), args, module="eval"
            )
    return rc


if __name__ == "__main__":
    sys.exit(main())
