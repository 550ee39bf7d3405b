"""The README is a page a newcomer reads in five minutes, and stays true: at most 15 KB, no dated
measurement, commit hash, machine path or link outside the repository, an asset graph whose every box and
arrow is in the wiring snapshot, and one `hippo mcp install` line per client that the CLI accepts."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
NOT_ASSETS = {"librarian"}  # the one box that is a process, not an asset


def test_the_readme_is_short() -> None:
    assert len(README.encode("utf-8")) <= 15_000


def test_no_dated_measurement_commit_hash_or_machine_path() -> None:
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b", README), "dates belong in eval/results and CHANGELOG.md"
    assert not re.search(r"\b[0-9a-f]{7,40}\b", README), "a commit hash"
    assert not re.search(r"(/work/|/home/|/Users/|/tmp/|/root/)", README), "a machine path"
    assert not re.search(r"load average", README)


def test_every_link_points_into_the_repository() -> None:
    links = re.findall(r"\]\(([^)]+)\)", README)
    assert links
    for link in links:
        assert "://" not in link and not link.startswith("/"), link
        assert (ROOT / link.split("#")[0]).exists(), f"{link} does not exist"


def wiring() -> tuple[dict[str, str], set[tuple[str, str]]]:
    """Assets with their group, and every (upstream, downstream) pair, from tests/wiring.txt."""
    text = (ROOT / "tests" / "wiring.txt").read_text(encoding="utf-8")
    section = text.split("## assets", 1)[1].split("\n## ", 1)[0]
    groups, edges = {}, set()
    for name, group, deps in re.findall(r"^(\w+) \((\w+)\): (.+?)(?:  \[.*)?$", section, re.M):
        groups[name] = group
        edges |= {(dep, name) for dep in deps.split(", ") if dep != "-"}
    return groups, edges


def test_the_asset_graph_is_true_to_the_wiring() -> None:
    graph = re.search(r"```mermaid\n(.*?)```", README, re.S)
    assert graph is not None
    groups, edges = wiring()
    drawn_edges: set[tuple[str, str]] = set()
    for line in graph.group(1).splitlines():
        names = re.findall(r"(\w+)(?:\(\[[^\]]*\]\))?\s*(?:-\.?->|$)", line.strip())
        names = [n for n in names if n not in ("flowchart", "LR", "subgraph", "end")]
        drawn_edges |= set(zip(names, names[1:], strict=False))
    assert drawn_edges
    for up, down in drawn_edges:
        assert up in groups, f"{up} is not an asset"
        assert down in groups or down in NOT_ASSETS, f"{down} is not an asset"
        assert down in NOT_ASSETS or (up, down) in edges, f"{up} → {down} is not a dependency"
    for subgraph, members in re.findall(r"subgraph g_\w+ \[([^\]]+)\]\n(.*?)\n\s*end", graph.group(1), re.S):
        for name in set(re.findall(r"\b([a-z_]+)\b", members)) - NOT_ASSETS:
            assert groups.get(name) in subgraph.split(", "), f"{name} is not in group {subgraph}"


def test_one_install_line_per_client_and_each_parses() -> None:
    from hippo_cli.main import build_parser
    from hippo_cli.mcp_install import CLIENTS

    lines = re.findall(r"^hippo mcp install (\S+)", README, re.M)
    assert sorted(lines) == sorted(CLIENTS)
    for client in lines:
        args = build_parser().parse_args(["mcp", "install", client])
        assert args.command == "mcp"
    hooks = re.findall(r"^hippo hook install (\S+)", README, re.M)
    assert hooks and all(build_parser().parse_args(["hook", "install", h]) for h in hooks)
