"""What one hostile run costs the host: its bound (:mod:`leaderboard.execution.budget`), and measured.

``test_default_budget_is_printed`` prints the worst case under the default limits.
``test_a_hostile_run_stays_within_its_budget`` runs one snippet that does everything at once — fills
``/out`` to just short of its cap, floods stdout and stderr, holds memory, never ends — and measures the
job folder's host disk, the orchestrator's memory and the wall time against the budget of its (small)
limits.
``test_parsing_a_hostile_result_json`` measures the memory factor the budget assumes for ``result.json``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from leaderboard.execution.budget import host_budget
from leaderboard.execution.docker_runner import DRAIN_S, STOP_GRACE_S, DockerRunner
from leaderboard.execution.sandbox import SandboxLimits, human_size

MIB = 1024**2
LIMITS = SandboxLimits(
    memory="256m", timeout_s=10, out_cap_bytes=64 * MIB, out_max_files=200, output_cap_bytes=64 * 1024
)

HOSTILE = """\
import os, sys, threading, time

def flood(stream):
    line = b"x" * 1023 + b"\\n"
    for _ in range(16 * 1024):  # 16 MiB per stream
        stream.write(line)
    stream.flush()

threads = [threading.Thread(target=flood, args=(s,)) for s in (sys.stdout.buffer, sys.stderr.buffer)]
for t in threads:
    t.start()
held = [bytearray(160 << 20)]  # 160 MiB of a 256 MiB limit, touched
for i in range(0, len(held[0]), 4096):
    held[0][i] = 1
block, written, reason = os.urandom(1 << 20), 0, "stopped short of the host's full mark"
fd = os.open("/out/fill.bin", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
try:
    # Fill /out to within 8 MiB of full, never further: the host stops a run whose /out has less than
    # 4 MiB free (sandbox.FULL_MARGIN_BYTES, a sixteenth of this cap), and this run must last to its
    # timeout. Writing on to ENOSPC and freeing room at once left a window of several writes in which the
    # host's poll, under load, saw /out full (it failed that way once in a full suite run).
    while True:
        fs = os.statvfs("/out")
        if fs.f_bavail * fs.f_frsize < (8 << 20):
            break
        os.write(fd, block)
        written += 1
except OSError as exc:
    reason = exc.strerror
os.close(fd)
print(f"out: {reason} after {written} MiB", flush=True)
for t in threads:
    t.join()
time.sleep(3600)
"""


def _rss() -> int:
    text = Path("/proc/self/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", text).group(1)) * 1024


def _host_usage(folder: Path) -> int:
    device, total = folder.stat().st_dev, 0
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if os.lstat(os.path.join(root, d)).st_dev == device]
        for name in files:
            info = os.lstat(os.path.join(root, name))
            total += info.st_blocks * 512 if info.st_dev == device else 0
    return total


def test_default_budget_is_printed(capsys):
    budget = host_budget(SandboxLimits())
    with capsys.disabled():
        print("\n\nworst case of one hostile run, default limits\n" + "\n".join(budget.lines()))
    assert budget.bounded
    assert budget.total("disk", lasting=False) < 4.1 * 1024**3
    assert budget.total("memory") < 8 * 1024**3
    assert budget.total("time") < 3600 + 600
    assert not host_budget(SandboxLimits(), kernel=False).bounded
    assert host_budget(SandboxLimits(read_only_root=False)).total("disk") == float("inf")


@pytest.mark.docker
def test_a_hostile_run_stays_within_its_budget(docker_client, sandbox_image, tmp_path, capsys):
    if os.geteuid() != 0 and not os.environ.get("CI"):
        pytest.skip("mounting /out's filesystem needs root")
    job, data, models, out = (tmp_path / n for n in ("job", "data", "models", "out"))
    for folder in (job, data, models):
        folder.mkdir()
    (job / "job.json").write_text(json.dumps({"track": "probe"}))
    (job / "snippet.py").write_text(textwrap.dedent(HOSTILE))
    runner = DockerRunner(docker_client)
    peak = {"disk": 0, "rss": 0}
    baseline = _rss()
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak["disk"] = max(peak["disk"], _host_usage(tmp_path))
            peak["rss"] = max(peak["rss"], _rss() - baseline)
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    with runner.output_volume(out, LIMITS) as volume:
        assert volume.kernel, volume.note
        sampler.start()
        started = time.monotonic()
        outcome = runner.run(sandbox_image, job_dir=job, data_dir=data, models_dir=models, out_dir=out,
                             limits=LIMITS, gpu=False)  # fmt: skip
        wall = time.monotonic() - started
        done.set()
        sampler.join()
    budget = host_budget(LIMITS)
    buffers = sum(c.amount for c in budget.costs if c.kind == "memory" and c.item.startswith("orchestrator: ")
                  and "result.json" not in c.item)  # fmt: skip
    measured = [
        ("disk", "job folder, peak (the /out image and job.json)", human_size(peak["disk"]),
         human_size(LIMITS.out_cap_bytes + 76 * 1024)),
        ("memory", "orchestrator RSS growth, peak (budget: its buffers + 64 MiB)",
         human_size(max(peak["rss"], 0)), human_size(int(buffers) + 64 * MIB)),
        ("time", "wall clock, start to outcome", f"{wall:.1f} s",
         f"{LIMITS.timeout_s + STOP_GRACE_S + DRAIN_S + 1:g} s"),
    ]  # fmt: skip
    with capsys.disabled():
        print(f"\n\none hostile run ({outcome.status}: {outcome.reason}); limits {LIMITS.model_dump_json()}")
        for kind, item, value, bound in measured:
            print(f"{kind:<7} {value:>12} measured, at most {bound:>10}  {item}")
    assert outcome.status == "timeout", outcome
    # The snippet filled /out close to its cap (48 MiB of the 64 MiB image measured), not just stopped early.
    assert LIMITS.out_cap_bytes // 2 <= peak["disk"] <= LIMITS.out_cap_bytes + 2 * MIB
    assert peak["rss"] < 64 * MIB
    assert wall <= LIMITS.timeout_s + STOP_GRACE_S + DRAIN_S + 1 + 5


def test_parsing_a_hostile_result_json(tmp_path):
    """``[{},{},…]`` is the costliest JSON per byte: the budget assumes at most 28 bytes of objects each."""
    size = 8 * MIB
    doc = tmp_path / "result.json"
    doc.write_text("[" + ",".join(["{}"] * (size // 3)) + "]")
    # VmHWM, not ru_maxrss: a child's ru_maxrss starts at its parent's (pytest's) size.
    probe = (
        "import json, re, sys; text = open(sys.argv[1]).read(); "
        "kib = lambda key: int(re.search(key + r':\\s+(\\d+)', open('/proc/self/status').read()).group(1)); "
        "before = kib('VmRSS'); json.loads(text); print((kib('VmHWM') - before) * 1024)"
    )
    grown = int(subprocess.run([sys.executable, "-c", probe, str(doc)], capture_output=True, text=True,
                               check=True).stdout)  # fmt: skip
    factor = grown / doc.stat().st_size
    print(f"parsing {human_size(doc.stat().st_size)} of '[{{}},…]' took {human_size(grown)}: {factor:.1f}x")
    assert 5 < factor <= 28
