"""Live progress on the host: the follower, the display, and both runners reporting progress during a run.

A job acknowledges nothing by itself, so the liveness tests make it wait: after each progress line the job
waits for a file ``ack-<done>`` in its output folder, which only the host's ``on_progress`` callback
writes. The job can only finish if the host saw each line while the job was still running.
"""

from __future__ import annotations

import io
import json
import textwrap
import time
import tracemalloc
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluators.progress import PROGRESS_PREFIX, Progress, format_progress, parse_progress
from leaderboard.execution.docker_runner import DockerRunner
from leaderboard.execution.inprocess_runner import InProcessRunner
from leaderboard.execution.progress import (
    MAX_LINE_BYTES,
    ProgressDisplay,
    ProgressFollower,
    compact_progress_lines,
    format_duration,
)
from leaderboard.execution.sandbox import NoSandboxWarning, Runner, RunOutcome, SandboxLimits

# A progress line exactly as evaluators.progress.format_progress writes it (the snippets run where the
# real evaluators package is not importable).
SNIPPET_HELPERS = """\
import json, os, sys, time
OUT = sys.argv[sys.argv.index("--out") + 1]
def progress(stage, done, total):
    body = json.dumps({"stage": stage, "done": done, "total": total}, separators=(",", ":"))
    sys.stdout.write("chemrobust-progress " + body + "\\n")
    sys.stdout.flush()
def wait_for_ack(done):
    deadline = time.monotonic() + 30
    while not os.path.exists(os.path.join(OUT, f"ack-{done}")):
        if time.monotonic() > deadline:
            sys.exit(f"the host did not see progress {done} while the job ran")
        time.sleep(0.05)
"""

LIVE_SNIPPET = SNIPPET_HELPERS + """\
print("starting")
for done in range(1, 4):
    progress("embed", done, 3)
    print(f"ordinary line {done}", file=sys.stderr if done == 2 else sys.stdout, flush=True)
    wait_for_ack(done)
print("all acknowledged", flush=True)
"""

FLOOD_SNIPPET = SNIPPET_HELPERS + """\
out = sys.stdout.buffer
garbage = [
    b"chemrobust-progress {broken\\n",
    b"chemrobust-progress {\\"stage\\":\\"x\\",\\"done\\":5,\\"total\\":1}\\n",
    b"chemrobust-progress " + b"9" * 300 + b"\\n",
    b"\\x1b[2J\\x07\\x00\\xff plain garbage \\xe2\\x80\\xae\\n",
]
LINES, BIG = @LINES@, @BIG@
for i in range(LINES):
    if i % (LINES // 100) == 0:
        progress("flood", i * 100 // LINES, 100)
    out.write(garbage[i % 4])
out.write(b"chemrobust-progress " + b"x" * BIG)  # one very long line
out.write(b"\\n")
out.flush()
progress("flood", 100, 100)
"""


def flood(lines: int, big: int) -> str:
    """A job printing ``lines`` lines of garbage with 101 progress lines among them, then a ``big`` line."""
    return FLOOD_SNIPPET.replace("@LINES@", str(lines)).replace("@BIG@", str(big))


def make_dirs(tmp_path: Path, snippet: str) -> dict[str, Path]:
    job, data, models, out = (tmp_path / n for n in ("job", "data", "models", "out"))
    for d in (job, data, models):
        d.mkdir(parents=True)
    (job / "job.json").write_text(json.dumps({"track": "probe"}))
    (job / "snippet.py").write_text(textwrap.dedent(snippet))
    return {"job_dir": job, "data_dir": data, "models_dir": models, "out_dir": out}


FAKE_MAIN = """\
import argparse, os, runpy, sys
p = argparse.ArgumentParser()
p.add_argument("command")
for name in ("--job", "--data", "--models", "--out", "--submission"):
    p.add_argument(name)
args = p.parse_args()
sys.argv = ["snippet", *sys.argv[1:]]
runpy.run_path(os.path.join(os.path.dirname(args.job), "snippet.py"), run_name="__main__")
"""


@pytest.fixture()
def fake_repo(tmp_path) -> Path:
    pkg = tmp_path / "repo" / "evaluators"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "__main__.py").write_text(FAKE_MAIN)
    return tmp_path / "repo"


class Acknowledger:
    """An ``on_progress`` callback that records what it saw and writes the ``ack-<done>`` files."""

    def __init__(self, out_dir: Path):
        self.out_dir = out_dir
        self.seen: list[Progress] = []

    def __call__(self, progress: Progress) -> None:
        self.seen.append(progress)
        (self.out_dir / f"ack-{progress.done}").write_text("")


def run_in_process(fake_repo, dirs, on_progress, **limit_overrides) -> RunOutcome:
    limits = SandboxLimits(**{"timeout_s": 60, **limit_overrides})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoSandboxWarning)
        return InProcessRunner(fake_repo).run(None, limits=limits, gpu=False, on_progress=on_progress, **dirs)


# --------------------------------------------------------------------------------------------------------
# Both runners


def test_both_runners_satisfy_the_protocol(fake_repo):
    docker_runner, in_process = DockerRunner(client=None), InProcessRunner(fake_repo)
    assert isinstance(docker_runner, Runner) and isinstance(in_process, Runner)
    assert (docker_runner.name, in_process.name) == ("docker", "in-process")
    assert in_process.remove_orphans() == 0 and docker_runner.remove_orphans() == 0


def test_in_process_progress_arrives_while_the_job_runs(fake_repo, tmp_path):
    dirs = make_dirs(tmp_path, LIVE_SNIPPET)
    ack = Acknowledger(dirs["out_dir"])
    outcome = run_in_process(fake_repo, dirs, ack)
    assert outcome.status == "succeeded", outcome
    assert ack.seen == [Progress("embed", 1, 3), Progress("embed", 2, 3), Progress("embed", 3, 3)]
    assert "all acknowledged" in outcome.log_tail and "ordinary line 3" in outcome.log_tail
    assert PROGRESS_PREFIX not in outcome.log_tail, "progress lines are left out of the kept tail"
    assert "[3 progress lines left out; last: embed 3/3]" in outcome.log_tail


def test_in_process_without_callback_never_acknowledges(fake_repo, tmp_path):
    snippet = LIVE_SNIPPET.replace("time.monotonic() + 30", "time.monotonic() + 1")
    outcome = run_in_process(fake_repo, make_dirs(tmp_path, snippet), None)
    assert outcome.status == "failed"
    assert outcome.reason == "the host did not see progress 1 while the job ran"


def test_in_process_flood_is_followed_in_bounded_memory(fake_repo, tmp_path):
    dirs = make_dirs(tmp_path, flood(lines=100_000, big=4 * 1024**2))  # about 15 MB
    seen: list[Progress] = []
    tracemalloc.start()
    try:
        outcome = run_in_process(fake_repo, dirs, seen.append, output_cap_bytes=64 * 1024)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert outcome.status == "succeeded", outcome
    assert peak < 8 * 1024**2, f"host peak {peak / 1024**2:.1f} MiB for a 15 MB flood"
    assert seen and seen[-1] == Progress("flood", 100, 100)
    assert [p.done for p in seen] == sorted({p.done for p in seen}), "in order, each once"
    assert len(outcome.log_tail) < 3 * 64 * 1024


def test_a_failing_callback_warns_once_and_the_run_goes_on(fake_repo, tmp_path):
    snippet = SNIPPET_HELPERS + "for d in range(3):\n    progress('embed', d, 3)\nprint('finished')\n"
    calls = []

    def broken(progress):
        calls.append(progress)
        raise KeyError("display bug")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outcome = InProcessRunner(fake_repo).run(
            None, limits=SandboxLimits(timeout_s=60), on_progress=broken, **make_dirs(tmp_path, snippet)
        )
    assert outcome.status == "succeeded" and "finished" in outcome.log_tail
    assert len(calls) == 1
    assert [str(w.message) for w in caught if w.category is RuntimeWarning] == [
        "progress callback failed (KeyError: 'display bug'); no more progress for this run"
    ]


@pytest.mark.docker
def test_docker_progress_arrives_live_from_the_container(docker_client, sandbox_image, tmp_path):
    dirs = make_dirs(tmp_path, LIVE_SNIPPET)
    ack = Acknowledger(dirs["out_dir"])
    limits = SandboxLimits(timeout_s=90, memory="256m")
    outcome = DockerRunner(docker_client).run(sandbox_image, limits=limits, on_progress=ack, **dirs)
    assert outcome.status == "succeeded", outcome
    assert ack.seen == [Progress("embed", 1, 3), Progress("embed", 2, 3), Progress("embed", 3, 3)]
    assert "all acknowledged" in outcome.log_tail and "ordinary line 2" in outcome.log_tail
    assert PROGRESS_PREFIX not in outcome.log_tail
    assert "[3 progress lines left out; last: embed 3/3]" in outcome.log_tail


@pytest.mark.docker
def test_docker_flood_does_not_break_the_run_or_the_progress(docker_client, sandbox_image, tmp_path):
    # About 5 MB: well under the engine's 20 MB log file (JSON-encoded, so larger than the output), beyond
    # which the engine itself drops output, for the follower as for the kept tail.
    dirs = make_dirs(tmp_path, flood(lines=40_000, big=1024**2))
    seen: list[Progress] = []
    limits = SandboxLimits(timeout_s=120, memory="256m", output_cap_bytes=64 * 1024)
    started = time.monotonic()
    outcome = DockerRunner(docker_client).run(sandbox_image, limits=limits, on_progress=seen.append, **dirs)
    assert outcome.status == "succeeded", outcome
    assert time.monotonic() - started < 90
    assert seen and seen[-1] == Progress("flood", 100, 100)
    assert [p.done for p in seen] == list(range(101)), "nothing skipped: the follower thread keeps up"
    assert len(outcome.log_tail) < 3 * 64 * 1024


class _CutContainer:
    """A container whose followed log stream ends early, as Docker's engine did under load, while its stored
    log holds every line: ``logs(follow=True)`` yields the first ``cut`` bytes, ``logs(follow=False)`` all."""

    id = "cut"

    def __init__(self, data: bytes, cut: int, chunk: int, stored: bytes | None = None) -> None:
        self.data, self.cut, self.chunk = data, cut, chunk
        self.stored = data if stored is None else stored

    def logs(self, *, stdout: bool, stderr: bool, stream: bool, follow: bool):
        assert stdout and not stderr and stream
        data = self.data[: self.cut] if follow else self.stored
        step = self.chunk if follow else self.chunk + 3  # other chunk boundaries than the live stream's
        return iter([data[i : i + step] for i in range(0, len(data), step)])


FLOOD = b"".join(format_progress(Progress("flood", i, 100)).encode() + b"\n" + b"x" * 17 + b"\n"
                 for i in range(101))  # fmt: skip


@pytest.mark.parametrize("cut", [0, 1, 200, 1_000, 2_891, None])
def test_a_stream_the_engine_ends_early_is_completed_from_the_stored_log(cut):
    from leaderboard.execution.docker_runner import _LiveOutput

    data = FLOOD
    seen: list[Progress] = []
    live = _LiveOutput(_CutContainer(data, len(data) if cut is None else cut, chunk=64), seen.append)
    live.stop(5.0)
    assert [p.done for p in seen] == list(range(101)), "every line once, in order"
    assert live.fed == len(data)


def test_a_rotated_stored_log_adds_nothing_to_what_the_stream_gave():
    # Past its size cap the engine keeps only the log's end: it no longer starts with what was fed.
    from leaderboard.execution.docker_runner import _LiveOutput

    seen: list[Progress] = []
    live = _LiveOutput(_CutContainer(FLOOD, 1_000, chunk=64, stored=FLOOD[700:]), seen.append)
    live.stop(5.0)
    assert seen and [p.done for p in seen] == list(range(len(seen))), "no line twice, none out of order"
    assert seen[-1].done < 100


# --------------------------------------------------------------------------------------------------------
# The follower


def _reference(data: bytes) -> list[Progress]:
    """What a follower must report for ``data``: every complete line that parses."""
    found = []
    for raw in data.split(b"\n")[:-1]:
        p = parse_progress(raw.decode("utf-8", errors="replace").removesuffix("\r"))
        if p is not None:
            found.append(p)
    return found


SAMPLE = (
    b"hello\n" + format_progress(Progress("a", 0, 2)).encode() + b"\r\n"
    + b"chemrobust-progress {nope}\n" + b"x" * 5000 + b"chemrobust-progress " + b"\n"
    + format_progress(Progress("a", 2, 2)).encode() + b"\n"
    + b"chemrobust-progress " + b"y" * 1000 + b"\n"
    + format_progress(Progress("b", 1, 1)).encode()  # no newline: not complete, not reported
)  # fmt: skip


@pytest.mark.parametrize("size", [1, 2, 7, 64, 300, 10**6])
def test_follower_reports_complete_lines_in_order_whatever_the_chunks(size):
    seen: list[Progress] = []
    follower = ProgressFollower(seen.append)
    for i in range(0, len(SAMPLE), size):
        follower.feed(SAMPLE[i : i + size])
    assert seen == [Progress("a", 0, 2), Progress("a", 2, 2)] == _reference(SAMPLE)
    assert follower.progress_lines == 2 and follower.last == Progress("a", 2, 2)
    assert follower.malformed_lines == 2  # "{nope}" and the 1000-character one
    assert len(follower._pending) <= MAX_LINE_BYTES


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.binary(max_size=40),
            st.sampled_from([b"\n", b"\r\n", PROGRESS_PREFIX.encode(), b"{", b"}", b'"stage":"s"']),
            st.builds(lambda s, d: format_progress(Progress(s, d, 9)).encode() + b"\n",
                      st.sampled_from(["embed", "k:1"]), st.integers(0, 9)),
        ),
        max_size=40,
    ),
    st.lists(st.integers(1, 50), min_size=1, max_size=10),
)  # fmt: skip
def test_follower_matches_the_line_by_line_reference(pieces, sizes):
    data = b"".join(pieces)
    seen: list[Progress] = []
    follower = ProgressFollower(seen.append)
    i = k = 0
    while i < len(data):
        step = sizes[k % len(sizes)]
        follower.feed(data[i : i + step])
        i, k = i + step, k + 1
    assert seen == _reference(data)


def test_follower_flood_of_100k_lines_in_bounded_memory():
    lines = []
    for i in range(100_000):
        if i % 1000 == 0:
            lines.append(format_progress(Progress("flood", i // 1000, 100)).encode())
        lines.append([b"chemrobust-progress {", b"\x1b[2J\xff junk", b"chemrobust-progress " + b"9" * 300,
                      b'chemrobust-progress {"stage":"x","done":5,"total":1}'][i % 4])  # fmt: skip
    data = b"\n".join(lines) + b"\n" + b"z" * (4 * 1024**2)  # and a 4 MiB unfinished line
    count = [0]
    follower = ProgressFollower(lambda p: count.__setitem__(0, count[0] + 1))
    tracemalloc.start()
    try:
        for i in range(0, len(data), 65536):
            follower.feed(data[i : i + 65536])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count[0] == follower.progress_lines == 100
    assert follower.malformed_lines == 75_000
    assert peak < 2 * 1024**2, f"peak {peak / 1024**2:.1f} MiB"
    assert len(follower._pending) == 0, "the unfinished 4 MiB line is skipped, not held"


def test_resync_drops_the_unfinished_line():
    seen: list[Progress] = []
    follower = ProgressFollower(seen.append)
    follower.feed(b"chemrobust-progress {\"sta")
    follower.resync()
    follower.feed(b'ge":"a","done":0,"total":1}\n' + format_progress(Progress("b", 0, 1)).encode() + b"\n")
    assert seen == [Progress("b", 0, 1)]


def test_compact_progress_lines():
    text = "start\n" + format_progress(Progress("embed", 1, 3)) + "\nmiddle\n" + format_progress(
        Progress("embed", 3, 3)
    ) + "\r\nchemrobust-progress {bad}\nend\n"
    assert compact_progress_lines(text) == (
        "start\nmiddle\nchemrobust-progress {bad}\nend\n[2 progress lines left out; last: embed 3/3]"
    )
    assert compact_progress_lines("no progress\n") == "no progress\n"
    assert compact_progress_lines(format_progress(Progress("s", 0, 1))) == (
        "[1 progress line left out; last: s 0/1]"
    )


# --------------------------------------------------------------------------------------------------------
# The display


class _Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_plain_display_prints_at_most_every_interval_with_eta():
    clock, out = _Clock(), io.StringIO()
    display = ProgressDisplay("[3/18] sub × amore × chebi20", stream=out, interval_s=30, clock=clock)
    assert not display.live, "a StringIO is not a terminal"
    display.update(Progress("embed", 0, 16500))
    clock.now += 20
    display.update(Progress("embed", 1200, 16500))  # within 30 s of the first line: not printed
    assert out.getvalue().splitlines() == ["[3/18] sub × amore × chebi20: embed 0/16500 (0%), ETA ?"]
    clock.now += 10
    display.update(Progress("embed", 1800, 16500))
    expected = "[3/18] sub × amore × chebi20: embed 1800/16500 (10%), ETA 4m05s"
    assert out.getvalue().splitlines()[-1] == expected
    clock.now += 5
    display.update(Progress("retrieve", 7, 9))
    display.close()
    display.update(Progress("retrieve", 9, 9))  # after close: ignored
    lines = out.getvalue().splitlines()
    assert lines[-1] == "[3/18] sub × amore × chebi20: retrieve 7/9 (77%), ETA ?", "close shows the latest"
    assert len(lines) == 3


def test_plain_display_final_line_has_no_eta():
    clock, out = _Clock(), io.StringIO()
    with ProgressDisplay("job", stream=out, clock=clock) as display:
        display.update(Progress("embed", 10, 10))
    assert out.getvalue() == "job: embed 10/10 (100%)\n"


def test_display_neutralises_untrusted_text():
    out = io.StringIO()
    display = ProgressDisplay("lab\x1b]0;title\x07el", stream=out, live=False)
    display.update(SimpleNamespace(stage="\x1b[2J" + "s" * 200, done=1, total=2))
    display.close()
    text = out.getvalue()
    assert "\x1b" not in text and "\x07" not in text
    assert text.startswith("lab\\x1b]0;title\\x07el: \\x1b[2J" + "s" * 57 + " 1/2 (50%)")  # 64 characters


def test_live_display_on_a_terminal_draws_a_rich_bar():
    clock, out = _Clock(), _Terminal()
    display = ProgressDisplay("[1/2] sub × amore × chebi20", stream=out, clock=clock)
    assert display.live
    try:
        for done in range(0, 101, 10):
            display.update(Progress("embed", done, 100))
            clock.now += 1
        display.update(Progress("retrieve", 1, 4))
    finally:
        display.close()
    text = out.getvalue()
    assert "[1/2] sub × amore × chebi20: retrieve" in text and "1/4" in text


def test_a_second_terminal_display_falls_back_to_plain_lines():
    first, second = _Terminal(), _Terminal()
    a = ProgressDisplay("a", stream=first)
    b = ProgressDisplay("b", stream=second)
    try:
        a.update(Progress("embed", 1, 4))
        b.update(Progress("embed", 2, 4))
    finally:
        a.close()
        b.close()
    assert a.live and not b.live
    assert second.getvalue() == "b: embed 2/4 (50%), ETA ?\n"


def test_format_duration():
    assert [format_duration(s) for s in (0, 59.4, 60, 250, 3599, 3600, 3720, 90000)] == [
        "0s", "59s", "1m00s", "4m10s", "59m59s", "1h00m", "1h02m", "25h00m",
    ]  # fmt: skip
