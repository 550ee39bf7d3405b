"""What `eval.scale` needs from the machine: child processes it always reaps, and honest context.

Every child runs in its own session (process group), so stopping it also stops what it started
(Dagster's log-tailing `tail -F`, uvicorn workers); on Linux the kernel also sends it SIGTERM if the
benchmark dies without cleaning up. `OthersCpu` measures how busy the rest of the machine was during a
stage (the machine's busy CPU time from /proc/stat minus the benchmark tree's own, reaped children
included), so every figure can be read against the load it was measured under.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

PR_SET_PDEATHSIG = 1
CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def log(message: str) -> None:
    print(f"[scale {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


class Children:
    """Starts subprocesses and guarantees they (and their process groups) are gone on `close()`."""

    def __init__(self) -> None:
        self.procs: list[tuple[str, subprocess.Popen]] = []

    @property
    def pids(self) -> list[int]:
        return [p.pid for _, p in self.procs]

    def start(
        self,
        name: str,
        cmd: Sequence[str],
        env: Mapping[str, str],
        cwd: Path,
        stdout: int | None = subprocess.DEVNULL,
        stderr: object = subprocess.DEVNULL,
    ) -> subprocess.Popen:
        proc = subprocess.Popen(
            list(cmd),
            env=dict(env),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,  # type: ignore[arg-type]
            start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
        )
        self.procs.append((name, proc))
        log(f"started {name} pid {proc.pid}")
        return proc

    def stop(self, proc: subprocess.Popen, grace: float = 10.0) -> None:
        """SIGTERM to the child's whole group, SIGKILL after `grace` seconds; also reaps leftovers."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=grace)
        # Members of the group that outlived their leader (e.g. a `tail -F`).
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)

    def close(self) -> None:
        for name, proc in reversed(self.procs):
            running = proc.poll() is None
            self.stop(proc, grace=5.0)
            if running:
                log(f"stopped {name} pid {proc.pid}")
        for pid in session_members(set(self.pids)):  # a descendant that left its process group
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
            log(f"killed pid {pid}, left over in a child's session")


@dataclass
class CpuSample:
    at: float
    busy: int  # machine-wide busy ticks, all CPUs (/proc/stat)
    ours: int  # ticks of the benchmark's tree, reaped children included
    ticks: dict[int, int]  # per process, for naming the busiest others
    names: dict[int, str]
    tree: set[int]


def print_figures(figures: dict, path: Path | None) -> None:
    """A benchmark's figures as JSON on stdout, and in `path` when given (`--json`)."""
    text = json.dumps(figures, indent=2, ensure_ascii=False)
    print(text)
    if path is not None:
        path.write_text(text + "\n", encoding="utf-8")


def _machine_busy_ticks() -> int:
    """user + nice + system + irq + softirq + steal of the `cpu` line of /proc/stat."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    values = [int(v) for v in fields]
    return sum(values[i] for i in (0, 1, 2, 5, 6, 7) if i < len(values))


def sample_cpu() -> CpuSample:
    """CPU ticks of the machine, of the benchmark's process tree and of every process."""
    ticks: dict[int, int] = {}
    with_children: dict[int, int] = {}
    parents: dict[int, int] = {}
    names: dict[int, str] = {}
    busy = _machine_busy_ticks()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            raw = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        pid = int(entry.name)
        names[pid] = raw[raw.find("(") + 1 : raw.rfind(")")]
        fields = raw[raw.rfind(")") + 2 :].split()
        parents[pid] = int(fields[1])
        ticks[pid] = int(fields[11]) + int(fields[12])  # utime + stime
        with_children[pid] = ticks[pid] + int(fields[13]) + int(fields[14])  # + reaped children's
    tree = {os.getpid()}
    changed = True
    while changed:  # descendants of the benchmark, however deep
        changed = False
        for pid, ppid in parents.items():
            if ppid in tree and pid not in tree:
                tree.add(pid)
                changed = True
    ours = sum(with_children.get(pid, 0) for pid in tree)
    return CpuSample(time.monotonic(), busy, ours, ticks, names, tree)


@dataclass
class Context:
    """The machine around one figure: load average and how busy the other processes were."""

    load1: float
    load5: float
    others_cores: float  # mean cores used by processes outside the benchmark during the stage
    ours_cores: float  # mean cores used by the benchmark and everything it started
    ours_cpu_s: float  # CPU seconds of the benchmark's tree: the cost that contention inflates least
    top_others: list[str] = field(default_factory=list)

    def short(self) -> str:
        return f"load {self.load1:.2f}, others {self.others_cores:.2f} cores, ours {self.ours_cores:.2f}"


def loadavg() -> tuple[float, float]:
    try:
        parts = Path("/proc/loadavg").read_text().split()
        return float(parts[0]), float(parts[1])
    except OSError:
        return float("nan"), float("nan")


def context_since(start: CpuSample) -> Context:
    """Machine busy time minus the benchmark tree's (children reaped meanwhile included) = others."""
    end = sample_cpu()
    wall = max(end.at - start.at, 1e-6)
    ours = max(end.ours - start.ours, 0) / CLK_TCK
    others = max(end.busy - start.busy, 0) / CLK_TCK - ours
    tree = start.tree | end.tree
    used = {
        pid: t - start.ticks.get(pid, 0)
        for pid, t in end.ticks.items()
        if pid not in tree and t - start.ticks.get(pid, 0) > 0
    }
    top = sorted(used.items(), key=lambda kv: -kv[1])[:3]
    load1, load5 = loadavg()
    return Context(
        load1=load1,
        load5=load5,
        others_cores=round(max(others, 0.0) / wall, 2),
        ours_cores=round(ours / wall, 2),
        ours_cpu_s=round(ours, 1),
        top_others=[f"{_command(pid, end.names.get(pid, '?'))} {v / CLK_TCK / wall:.2f}" for pid, v in top],
    )


def _command(pid: int, name: str) -> str:
    """The process's command line, shortened (its name alone says only `python`)."""
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return name
    text = " ".join(a.decode("utf-8", "replace") for a in args if a)
    return (text or name)[:80]


def rss_bytes(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process in bytes, from /proc/<pid>/status; (0, 0) when it is gone."""
    out = {"VmRSS": 0, "VmHWM": 0}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in out:
                out[key] = int(value.split()[0]) * 1024
    except OSError:
        pass
    return out["VmRSS"], out["VmHWM"]


def disk_bytes(root: Path) -> int:
    """Bytes allocated on disk under `root` (like `du -s`), symlinks not followed."""
    total = 0
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            total += st.st_blocks * 512
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
    return total


def session_members(sessions: set[int]) -> list[int]:
    """Live processes whose session id is one of `sessions` (each child leads its own session)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            raw = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        fields = raw[raw.rfind(")") + 2 :].split()
        if int(fields[3]) in sessions and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return state[state.rfind(")") + 2 :].split()[0] != "Z"
