"""Where the machine's CPU went during a stretch of a benchmark: the seconds of CPU each kind of process
used (/proc's utime + stime), counted for the processes alive at its end (a process that ended meanwhile
is not counted: the stacks the benches start live throughout)."""

import os
from collections import defaultdict
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")
# The first of these words found in a process's command line names its kind.
KINDS = (
    ("postgres", "postgres"),
    ("gunicorn", "web"),
    ("celery", "worker"),
    ("memory.model.process", "worker"),
    ("redis", "redis"),
)


def _kind(pid: str) -> str:
    if pid == str(os.getpid()):
        return "bench"
    try:
        line = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "other"
    return next((kind for word, kind in KINDS if word in line), "other")


def cpu_seconds(pid: int | str) -> float:
    """The CPU seconds process `pid` has used so far (raises OSError once it is gone)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    # utime and stime are the stat file's 14th and 15th fields; the 3rd is the first after the name.
    return (int(fields[11]) + int(fields[12])) / TICKS


def snapshot() -> dict[str, tuple[str, float]]:
    """pid -> (kind, CPU seconds so far) of every process now."""
    seen = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            seen[entry.name] = (_kind(entry.name), cpu_seconds(entry.name))
        except OSError:
            continue
    return {**seen, **_machine()}


def used_since(before: dict[str, tuple[str, float]]) -> defaultdict[str, float]:
    """Kind -> CPU seconds used since `before` (a snapshot); the machine's own counters under MACHINE and
    STOLEN."""
    used: defaultdict[str, float] = defaultdict(float)
    for pid, (kind, seconds) in snapshot().items():
        if pid.isdigit():
            used[kind] += seconds - before.get(pid, (kind, 0.0))[1]
    for name, (_, seconds) in _machine().items():
        used[name] = seconds - before[name][1]
    return used


MACHINE, STOLEN = "machine", "stolen"


def _machine() -> dict[str, tuple[str, float]]:
    """The CPU seconds the whole machine has used so far, processes that ended too (/proc/stat's first line:
    user, nice, system, irq, softirq), and those the hypervisor gave to other machines (steal). A PostgreSQL
    backend lives as long as its connection, which a worker's task may close: counted here, not always under
    "postgres"."""
    user, nice, system, _idle, _iowait, irq, softirq, steal = (
        int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]
    )
    return {MACHINE: (MACHINE, (user + nice + system + irq + softirq) / TICKS), STOLEN: (STOLEN, steal / TICKS)}


def describe(used: defaultdict[str, float], wall_seconds: float) -> str:
    """One line: each kind's CPU seconds and the share of the cores they kept busy; then the share the
    machine's counters say were busy, and the share stolen (a shared host's other guests on these cores)."""
    cores = os.cpu_count() or 1
    kinds = {kind: seconds for kind, seconds in used.items() if kind not in (MACHINE, STOLEN)}
    busiest = sorted(kinds.items(), key=lambda kind_seconds: kind_seconds[1], reverse=True)
    parts = [f"{kind} {seconds:.1f}" for kind, seconds in busiest if seconds >= 0.05]

    def share(seconds: float) -> str:
        return f"{seconds / (wall_seconds * cores):.0%}"

    return (
        f"CPU seconds: {', '.join(parts)}; {share(sum(kinds.values()))} of {cores} cores over "
        f"{wall_seconds:.1f} s (by the machine's counters: {used[MACHINE]:.1f} s, {share(used[MACHINE])}; "
        f"stolen by the host {used[STOLEN]:.1f} s, {share(used[STOLEN])})"
    )
