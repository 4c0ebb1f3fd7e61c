"""What every benchmark result names once: the machine it ran on and the commit it measured.
Shared by Benchmarks/run and the fleet scripts (Benchmarks/fleet/fleetkit.py). Stdlib only."""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def output(command, cwd=ROOT):
    try:
        return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return ""


def machine():
    """CPU model, cores, architecture, kernel, the Swift version and the memory (KiB)."""
    model = ""
    memory = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            memory = int(f.readline().split()[1])
    except (OSError, ValueError, IndexError):
        pass
    swift = output(["swift", "--version"])
    return {
        "cpu": model or output(["uname", "-m"]),
        "cores": os.cpu_count(),
        "arch": os.uname().machine,
        "kernel": os.uname().release,
        "swift": swift.splitlines()[0] if swift else "",
        "memoryKiB": memory,
    }


def commit(measured):
    """The short commit, with " + changes" when the tree differs from it in the `measured` paths
    (what the run measures: sources and its own suites or scripts, not results or notes)."""
    head = output(["git", "rev-parse", "--short", "HEAD"]) or "unknown"
    changed = output(["git", "status", "--porcelain", "--"] + list(measured))
    return head + (" + changes" if changed else "")
