"""The house rules, tested: which product package may import which, and the core does no I/O.

An AST walk over every module of the product packages (imports inside functions included) checks each
`import` against the table below and names the offending file and line. The table is the one
`docs/architecture.md` quotes (`RULES`, rendered by `rules_table()`; a test keeps this docstring equal
to it).

--8<-- [start:rules]
| package | may import (besides itself, the standard library and third-party libraries) |
|---|---|
| `hippo_settings` | nothing of the project: the one reader of the configuration (`HIPPO_*` variables, the user's config file) |
| `hippo_core` | nothing of the project; no Dagster, and no I/O (no files, no processes, no network) |
| `hippo_resources` | `hippo_settings`, `hippo_core` |
| `hippo_search` | `hippo_settings`, `hippo_core`, `hippo_resources` |
| `hippo_work` | `hippo_settings`, `hippo_core`, `hippo_resources`, `hippo_search` |
| `sensors` | `hippo_settings`, `hippo_core`, `hippo_resources` |
| `expectations` | `hippo_core` |
| `hippo_assets` | `hippo_settings`, `hippo_core`, `hippo_resources`, `hippo_search`, `hippo_work`, `sensors`, `expectations` |
| `hippo_server` | `hippo_settings`, `hippo_core`, `hippo_resources`, `hippo_search`, `hippo_work` |
| `hippo_cli` | every product package above |
| `eval`, `tests` | everything (no product package imports them) |
--8<-- [end:rules]

"No I/O" in `hippo_core` is checked precisely: no call of `open()`, of a file or process function of
`os` (`os.open`, `os.fsync`, `os.replace`, `os.scandir`, ...), of `numpy`'s file readers and writers
(`np.load`, `np.save`, ...), of a `Path` method that touches the disk (`read_text`, `write_bytes`,
`mkdir`, `iterdir`, `exists`, ...), and no import of a module whose purpose is I/O (`shutil`,
`subprocess`, `socket`, `sqlite3`, `tempfile`, `urllib.request`, HTTP clients, Chroma, Dagster). Callers
hand the core bytes and text; the resources own the files. Reading the configuration (the environment and
the user's config file) is `hippo_settings`' job, below the core, so the core has no exception.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CORE = "hippo_core"
RULES: dict[str, tuple[str, ...]] = {
    "hippo_settings": (),
    "hippo_core": (),
    "hippo_resources": ("hippo_settings", "hippo_core"),
    "hippo_search": ("hippo_settings", "hippo_core", "hippo_resources"),
    "hippo_work": ("hippo_settings", "hippo_core", "hippo_resources", "hippo_search"),
    "sensors": ("hippo_settings", "hippo_core", "hippo_resources"),
    "expectations": ("hippo_core",),
    "hippo_assets": (
        "hippo_settings",
        "hippo_core",
        "hippo_resources",
        "hippo_search",
        "hippo_work",
        "sensors",
        "expectations",
    ),
    "hippo_server": ("hippo_settings", "hippo_core", "hippo_resources", "hippo_search", "hippo_work"),
    "hippo_cli": (
        "hippo_settings",
        "hippo_core",
        "hippo_resources",
        "hippo_search",
        "hippo_work",
        "sensors",
        "expectations",
        "hippo_assets",
        "hippo_server",
    ),
}
PROJECT = (*RULES, "eval", "tests")
"""Every top-level name of the project: an import of one of these is checked against `RULES`."""

CORE_IO_MODULES = (
    "dagster",
    "shutil",
    "subprocess",
    "socket",
    "sqlite3",
    "tempfile",
    "urllib.request",
    "http.client",
    "httpx",
    "requests",
    "chromadb",
    "psycopg",
    "git",
)
OS_IO = {
    "open",
    "fdopen",
    "fsync",
    "replace",
    "rename",
    "remove",
    "unlink",
    "mkdir",
    "makedirs",
    "rmdir",
    "listdir",
    "scandir",
    "walk",
    "stat",
    "lstat",
    "read",
    "write",
    "system",
    "popen",
    "link",
    "symlink",
}
NUMPY_IO = {
    "load",
    "save",
    "savez",
    "savez_compressed",
    "fromfile",
    "memmap",
    "loadtxt",
    "savetxt",
    "genfromtxt",
}
PATH_IO = {
    "read_text",
    "read_bytes",
    "write_text",
    "write_bytes",
    "mkdir",
    "touch",
    "unlink",
    "rmdir",
    "iterdir",
    "glob",
    "rglob",
    "exists",
    "is_file",
    "is_dir",
    "stat",
    "lstat",
    "rename",
    "symlink_to",
    "hardlink_to",
}


@dataclass(frozen=True)
class Violation:
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def _top(name: str) -> str:
    return name.split(".", 1)[0]


def _imports(tree: ast.AST, module: str) -> list[tuple[int, str]]:
    """(line, imported module) for every import in the module, relative ones resolved against `module`."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = module.split(".")[: -node.level]
                name = ".".join([*parts, node.module] if node.module else parts)
            else:
                name = node.module or ""
            out.append((node.lineno, name))
    return out


def _io_calls(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, call) for every call that reads or writes files, starts processes or opens sockets."""
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "open":
            out.append((node.lineno, "open()"))
        elif isinstance(func, ast.Attribute):
            owner = func.value.id if isinstance(func.value, ast.Name) else None
            if owner == "os" and func.attr in OS_IO:
                out.append((node.lineno, f"os.{func.attr}()"))
            elif owner in ("np", "numpy") and func.attr in NUMPY_IO:
                out.append((node.lineno, f"{owner}.{func.attr}()"))
            elif owner not in ("os", "np", "numpy", "str", "re") and func.attr in PATH_IO:
                out.append((node.lineno, f".{func.attr}() (a Path touching the disk)"))
    return out


def check(
    root: Path, rules: dict[str, tuple[str, ...]] = RULES, project: tuple[str, ...] = PROJECT
) -> list[Violation]:
    """Every broken rule under `root` (a folder holding the packages of `rules`)."""
    found: list[Violation] = []
    for package, allowed in rules.items():
        for file in sorted((root / package).rglob("*.py")):
            rel = file.relative_to(root)
            module = ".".join(rel.with_suffix("").parts)
            if module.endswith(".__init__"):
                module = (
                    module[: -len(".__init__")] + ".__init__"
                )  # relative imports resolve from the package
            tree = ast.parse(file.read_bytes(), filename=str(rel))
            for line, name in _imports(tree, module):
                top = _top(name)
                if top in project and top != package and top not in allowed:
                    found.append(Violation(rel.as_posix(), line, f"{package} may not import {name}"))
                if package == CORE and any(name == m or name.startswith(m + ".") for m in CORE_IO_MODULES):
                    found.append(Violation(rel.as_posix(), line, f"{CORE} does no I/O: imports {name}"))
            if package == CORE:
                for line, call in _io_calls(tree):
                    found.append(Violation(rel.as_posix(), line, f"{CORE} does no I/O: calls {call}"))
    return found


def rules_table(rules: dict[str, tuple[str, ...]] = RULES) -> dict[str, set[str]]:
    return {package: set(allowed) for package, allowed in rules.items()}


def _docstring_table() -> dict[str, set[str]]:
    """The rules as this module's docstring states them (the table the docs quote)."""
    table: dict[str, set[str]] = {}
    for row in (__doc__ or "").split("[start:rules]", 1)[1].split("--8<--", 1)[0].splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) != 2 or not cells[0].startswith("`"):
            continue
        names = {c.strip(" `") for c in cells[1].split(",") if c.strip().startswith("`")}
        for package in (c.strip(" `") for c in cells[0].split(",")):
            if package in RULES:
                table[package] = names
    table["hippo_cli"] = {p for p in RULES if p != "hippo_cli"}  # "every product package above"
    return table


# --- the tests ---------------------------------------------------------------------------------------


def test_the_product_keeps_the_house_rules() -> None:
    violations = check(ROOT)
    assert not violations, "broken house rules (tests/test_layers.py):\n" + "\n".join(map(str, violations))


def test_the_documented_table_is_the_enforced_one() -> None:
    assert _docstring_table() == rules_table()


def _package(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_a_forbidden_import_is_named_with_its_file_and_line(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "hippo_core/__init__.py": "",
            "hippo_core/ok.py": "import json\nfrom hippo_core import x\n",
            "hippo_search/__init__.py": "",
            "hippo_search/late.py": "def f():\n    from hippo_assets.index import assets\n",
            "hippo_work/__init__.py": "",
            "hippo_work/cli_use.py": "import os\n\nimport hippo_cli.ingest\n",
            "hippo_assets/__init__.py": "",
            "hippo_assets/quality/__init__.py": "",
            "hippo_assets/quality/bench.py": "from eval.golden import run_golden\nfrom hippo_search import x\n",
            "hippo_cli/__init__.py": "",
            "hippo_cli/main.py": "from hippo_assets import definitions\nfrom tests import conftest\n",
        },
    )
    found = {str(v) for v in check(root)}
    assert found == {
        "hippo_search/late.py:2: hippo_search may not import hippo_assets.index",
        "hippo_work/cli_use.py:3: hippo_work may not import hippo_cli.ingest",
        "hippo_assets/quality/bench.py:1: hippo_assets may not import eval.golden",
        "hippo_cli/main.py:2: hippo_cli may not import tests",
    }


def test_the_core_doing_io_is_named(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "hippo_core/__init__.py": "",
            "hippo_core/pure.py": "import re\n\ndef f(text: str) -> str:\n    return text.replace('a', 'b')\n",
            "hippo_core/files.py": (
                "import os\nimport numpy as np\nfrom dagster import asset\nfrom . import pure\n\n"
                "def save(path, arr):\n"
                "    with open(path, 'wb') as fh:\n"
                "        np.save(fh, arr)\n"
                "        os.fsync(fh.fileno())\n"
                "    path.with_suffix('.json').write_text('{}')\n"
            ),
            "hippo_core/sub/__init__.py": "from .. import files\nimport hippo_resources.vault\n",
        },
    )
    found = {str(v) for v in check(root, {"hippo_core": ()})}
    assert found == {
        "hippo_core/files.py:3: hippo_core does no I/O: imports dagster",
        "hippo_core/files.py:7: hippo_core does no I/O: calls open()",
        "hippo_core/files.py:8: hippo_core does no I/O: calls np.save()",
        "hippo_core/files.py:9: hippo_core does no I/O: calls os.fsync()",
        "hippo_core/files.py:10: hippo_core does no I/O: calls .write_text() (a Path touching the disk)",
        "hippo_core/sub/__init__.py:2: hippo_core may not import hippo_resources.vault",
    }


if __name__ == "__main__":  # print the current violations; exit 1 when there are any
    found = check(ROOT)
    for v in found:
        print(v)
    sys.exit(1 if found else 0)
