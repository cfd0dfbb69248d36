"""Where the machine's CPU went during a stretch of a benchmark: the seconds of CPU each kind of process
used (/proc's utime + stime), counted for the processes alive at its end (a process that ended meanwhile
is not counted: the stacks the benches start live throughout)."""

import os
from collections import Counter
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")
# The first of these words found in a process's command line names its kind.
KINDS = (("postgres", "postgres"), ("gunicorn", "web"), ("celery", "worker"), ("redis", "redis"))


def _kind(pid: str) -> str:
    if pid == str(os.getpid()):
        return "bench"
    try:
        line = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "other"
    return next((kind for word, kind in KINDS if word in line), "other")


def snapshot() -> dict[str, tuple[str, float]]:
    """pid -> (kind, CPU seconds so far) of every process now."""
    seen = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # utime and stime are the stat file's 14th and 15th fields; the 3rd is the first after the name.
        seen[entry.name] = (_kind(entry.name), (int(fields[11]) + int(fields[12])) / TICKS)
    seen[MACHINE] = snapshot_machine()
    return seen


def used_since(before: dict[str, tuple[str, float]]) -> Counter:
    """Kind -> CPU seconds used since `before` (a snapshot)."""
    used = Counter()
    for pid, (kind, seconds) in snapshot().items():
        if pid != MACHINE:
            used[kind] += seconds - before.get(pid, (kind, 0.0))[1]
    used[MACHINE] = snapshot_machine()[1] - before[MACHINE][1]
    return used


MACHINE = "machine"


def snapshot_machine() -> tuple[str, float]:
    """The CPU seconds every process of the machine has used so far, those that ended too (/proc/stat's
    first line: all but idle and iowait). A PostgreSQL backend lives as long as its connection, which a
    worker's task may close: counted here, not always under "postgres"."""
    ticks = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    return MACHINE, (sum(ticks) - ticks[3] - ticks[4]) / TICKS


def describe(used: Counter, wall_seconds: float) -> str:
    """One line: each kind's CPU seconds and the share of the cores they kept busy, and the share the whole
    machine's counters say were busy."""
    cores = os.cpu_count() or 1
    kinds = Counter({kind: seconds for kind, seconds in used.items() if kind != MACHINE})
    parts = [f"{kind} {seconds:.1f}" for kind, seconds in kinds.most_common() if seconds >= 0.05]
    busy = sum(kinds.values()) / (wall_seconds * cores)
    return (f"CPU seconds: {', '.join(parts)}; {busy:.0%} of {cores} cores over {wall_seconds:.1f} s "
            f"(by the machine's counters: {used[MACHINE]:.1f} s, {used[MACHINE] / (wall_seconds * cores):.0%})")
