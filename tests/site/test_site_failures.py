"""Failures on the public site: a category and a scrubbed reason (no host details), and the reserved ids.

The full reason and log tail stay in MLflow; what the site publishes (pages, ``runs.json``,
``security.json``) and the pull-request summary go through :mod:`leaderboard.scrub`. The reserved ids
(:mod:`leaderboard.reserved`) are checked against the layout a real build produces.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from leaderboard.reserved import RESERVED_IDS
from leaderboard.scrub import CATEGORIES, NO_REASON, PUBLIC_REASON_MAX, failure_category, public_reason
from leaderboard.site.build import build_site, generate_pages, write_exports
from leaderboard.site.normalise import check_slug, normalise_runs
from leaderboard.site.pages.security import read_security_table, security_page, write_security_table
from leaderboard.text import printable
from tests.site import _builders as b

REPO = Path(__file__).resolve().parents[2]
CONTAINER_ID = "3f2a9c1b7d4e8a90b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4"

# Reasons a hostile or unlucky run can record: (reason, category, host details that must not be published).
HOSTILE: list[tuple[str, str, tuple[str, ...]]] = [
    (
        "chemrobust: error: PermissionError: [Errno 13] Permission denied: "
        "'/work/main/.state/jobs/acme-3f2a9c1b/out/result.json'",
        "crashed",
        ("/work", ".state", "3f2a9c1b"),
    ),
    (
        "docker error: 500 Server Error for http+docker://localhost/v1.43/containers/"
        f'{CONTAINER_ID}/start: error mounting "/srv/ci/chemrobust/.state/wheelhouse" to rootfs at '
        f'"/wheels": mount /var/lib/docker/overlay2/{CONTAINER_ID}/merged: no such file',
        "engine error",
        ("/srv", "/var/lib/docker", "overlay2", CONTAINER_ID, CONTAINER_ID[:12], "localhost"),
    ),
    (
        "chemrobust: error: RuntimeError: /proc/cmdline says BOOT_IMAGE=/boot/vmlinuz-5.15.0-91-generic "
        "root=UUID=6a1f2c3d-1111-2222-3333-444455556666 ro console=ttyS0,115200 quiet splash",
        "crashed",
        ("BOOT_IMAGE", "vmlinuz", "root=", "UUID", "6a1f2c3d", "ttyS0", "/proc"),
    ),
    (
        "chemrobust: error: RuntimeError: Linux version 5.15.0-91-generic (buildd@lcy02-amd64-045) (gcc 11)",
        "crashed",
        ("5.15.0", "buildd", "lcy02"),
    ),
    (
        "chemrobust: error: RuntimeError: mounts: overlay / overlay rw,lowerdir=/var/lib/docker/overlay2/l/"
        "ABCDEF:/var/lib/docker/overlay2/l/GHIJK,upperdir=/var/lib/docker/overlay2/x/diff",
        "crashed",
        ("/var/lib", "lowerdir", "ABCDEF", "GHIJK", "upperdir"),
    ),
    (
        "chemrobust: error: ConnectionError: host 172.17.0.1:2375 and fe80::42:acff:fe11:2 "
        "(mac 02:42:ac:11:00:02) refused; hostname 9d8f7e6a5b4c",
        "crashed",
        ("172.17", "fe80", "02:42", "9d8f7e6a5b4c"),
    ),
    (
        "chemrobust: error: FileNotFoundError: /home/alice/.cache/huggingface/token, ~/.netrc, "
        "/root/.ssh/id_rsa, /Users/bob/x, /tmp/tmpab12cd/x, C:\\Users\\carol\\x",
        "crashed",
        ("alice", "huggingface/token", ".netrc", "/root", "bob", "/tmp", "carol"),
    ),
    (
        "image build failed: Could not install packages: [Errno 28] No space left on device: "
        "'/var/lib/docker/tmp/buildkit-mount123/pip'",
        "image build failed",
        ("/var/lib/docker", "buildkit"),
    ),
    (
        f"cannot fetch org/model@{'a1' * 20}: OSError: /data/hf-cache/models--org--model/blobs is full",
        "data or weights unavailable",
        ("hf-cache", "blobs", "a1a1a1a1a1a1"),
    ),
    (
        "chemrobust: error: RuntimeError: leaked "
        "aGVsbG8gd29ybGQgdGhpcyBpcyBhIGxvbmcgc2VjcmV0IHN0cmluZzEyMw==",
        "crashed",
        ("aGVsbG8",),
    ),
    (
        "\x1b[2Jwall-clock timeout after 600 s while reading /work/x\r\nforged second line /etc/shadow",
        "timeout",
        ("/work", "\x1b", "/etc/shadow", "forged"),
    ),
]

# Reasons the host writes (and the adversarial suite recorded): nothing to scrub, kept as they are.
BENIGN: list[tuple[str, str]] = [
    ("wall-clock timeout after 600 s", "timeout"),
    ("out of memory (limit 8g)", "memory limit"),
    ("killed (exit 137): probably out of memory (limit 512m)", "memory limit"),
    ("CUDA out of memory while embedding batch 3 (reduce batch_size)", "memory limit"),
    (
        "invalid output: 'host-environ.txt' in the output is a symbolic link; a run may write only files",
        "invalid output",
    ),  # fmt: skip
    ("output limit exceeded: more than 96 MiB or 200 files written to /out", "invalid output"),
    ("interrupted: the evaluation stopped before this run ended; it was run again", "interrupted"),
    ("image build failed: No matching distribution found for selfies==9.9.9", "image build failed"),
    (
        "cannot download https://zenodo.org/records/123/files/chebi20.csv: HTTP Error 503",
        "data or weights unavailable",
    ),  # fmt: skip
    (
        "chemrobust: error: EmbeddingError: layer 'last': expected an array of shape (96, d), got (97, 8)",
        "crashed",
    ),  # fmt: skip
    ("chemrobust: error: RuntimeError: nothing written outside /out: 11 of 11 targets refused", "crashed"),
    ("exit code 1 (no output on stderr)", "crashed"),
]


@pytest.mark.parametrize(("reason", "category", "secrets"), HOSTILE, ids=lambda v: str(v)[:30])
def test_public_reason_hides_host_details(reason: str, category: str, secrets: tuple[str, ...]) -> None:
    shown = public_reason(reason)
    for secret in secrets:
        assert secret not in shown, (secret, shown)
    assert shown.isprintable() and len(shown) <= PUBLIC_REASON_MAX
    assert public_reason(shown) == shown  # idempotent: pages scrub what runs.json already holds
    assert failure_category(reason) == category == failure_category(shown)


@pytest.mark.parametrize(("reason", "category"), BENIGN, ids=lambda v: str(v)[:30])
def test_public_reason_keeps_what_explains_the_failure(reason: str, category: str) -> None:
    assert public_reason(reason) == reason
    assert failure_category(reason) == category


def test_recorded_security_reasons_are_kept_and_categorised() -> None:
    cases = read_security_table(REPO / "site" / "data")
    for case in cases:
        shown = public_reason(case["reason"])
        assert shown == printable(case["reason"]), shown  # none names a host detail
        assert failure_category(shown) in CATEGORIES


def test_categories_and_empty_reasons() -> None:
    assert set(CATEGORIES) == {
        "image build failed", "interrupted", "invalid output", "engine error", "timeout", "memory limit",
        "data or weights unavailable", "crashed", "unknown",
    }  # fmt: skip
    for empty in (None, float("nan"), "", "  \n "):
        assert public_reason(empty) == NO_REASON and failure_category(empty) == "unknown"
    assert len(public_reason("x" * 5000)) == PUBLIC_REASON_MAX


def test_runs_export_publishes_the_scrubbed_reason() -> None:
    reason = HOSTILE[1][0]
    runs = pd.DataFrame(
        [b.run("mu", "chebi20", "FAILED", reason), b.run("zeta", "datamol-default", reason="")]
    )
    by_status = {r["status"]: r for r in normalise_runs(runs)}
    failed, finished = by_status["FAILED"], by_status["FINISHED"]
    assert failed["reason"] == public_reason(reason) and "/var/lib" not in failed["reason"]
    assert finished["reason"] == ""


def test_security_table_publishes_scrubbed_reasons(tmp_path: Path) -> None:
    case = {"attack": "attack-x", "title": "X", "does": "d", "expected": "e", "outcome": "FAILED",
            "reason": HOSTILE[0][0], "contained": True}  # fmt: skip
    write_security_table([case], tmp_path)
    (written,) = read_security_table(tmp_path)
    assert written["reason"] == public_reason(HOSTILE[0][0]) and "/work" not in written["reason"]
    # A security.json written before the scrub is scrubbed on the page too.
    (tmp_path / "security.json").write_text(json.dumps({"schema_version": 1, "cases": [case]}))
    assert "/work/main" not in security_page(tmp_path)


# --------------------------------------------------------------------------------------------------------
# The built site


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root, site = b.repo(tmp_path_factory.mktemp("failures"))
    runs = b.runs()
    hostile = [b.run("alpha", "chebi20", "FAILED", reason, track="amore") for reason, _, _ in HOSTILE[:3]]
    runs = pd.concat([runs.loc[~((runs["submission"] == "alpha") & (runs["dataset"] == "chebi20"))],
                      pd.DataFrame(hostile[:1])])  # fmt: skip
    runs.loc[(runs["submission"] == "mu") & (runs["dataset"] == "chebi20"), "reason"] = HOSTILE[2][0]
    write_exports(b.results(b.BASE_SCORE), runs, b.submissions(["mu", "alpha", "zeta"]), site)
    pages = generate_pages(site)
    public = build_site(root, strict=True)
    return {"root": root, "site": site, "public": public, "pages": pages}


def test_site_shows_category_and_scrubbed_reason(built: dict) -> None:
    overview = b.text(built["public"] / "index.html")
    failed = overview[overview.index("Failed runs") :]
    assert "Failure" in failed and "crashed" in failed
    assert "Permission denied" in failed and "<path>" in failed
    model = b.text(built["public"] / "submissions" / "mu" / "index.html")
    assert "Failed: crashed" in model and "<kernel command line>" in model
    public_text = "\n".join(
        p.read_text(encoding="utf-8", errors="replace")
        for p in built["public"].rglob("*")
        if p.is_file() and p.suffix in {".html", ".json", ".md", ".csv"}
    )
    for secret in ("/work/main", "BOOT_IMAGE", "vmlinuz", "6a1f2c3d-1111", "3f2a9c1b"):
        assert secret not in public_text, secret


def _stem(name: str) -> str:
    return re.sub(r"(\.(md|html|xml|gz))+$", "", name)


def test_reserved_ids_cover_the_built_layout(built: dict) -> None:
    """Every top-level page and folder of site/ and public/ is a reserved id (and so is ``index``)."""
    site_names = {_stem(p.name) for p in built["site"].iterdir()}
    public_names = {_stem(p.name) for p in built["public"].iterdir()}
    assert site_names <= RESERVED_IDS, site_names - RESERVED_IDS
    assert public_names <= RESERVED_IDS, public_names - RESERVED_IDS
    model_pages = {_stem(p.name) for p in (built["site"] / "submissions").iterdir()}
    assert model_pages - {"mu", "alpha", "zeta"} == {"index"} <= RESERVED_IDS


def test_reserved_ids_cover_the_committed_site_and_its_nav() -> None:
    committed = {_stem(p.name) for p in (REPO / "site").iterdir() if not p.name.startswith(".")}
    assert committed <= RESERVED_IDS, committed - RESERVED_IDS
    config = yaml.load((REPO / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    nav = {_stem(next(iter(item.values())).split("/")[0]) for item in config["nav"]}
    assert nav <= RESERVED_IDS, nav - RESERVED_IDS


@pytest.mark.parametrize("sub_id", sorted(RESERVED_IDS | {"Index", "DATA"}))
def test_the_site_refuses_a_reserved_id_in_its_data(sub_id: str) -> None:
    with pytest.raises(ValueError, match="is reserved"):
        check_slug(sub_id, "runs: row 0 'submission'")


def test_the_security_page_states_the_host_side_limits_from_the_code(tmp_path) -> None:
    """Issue 30: the page says what one hostile run's scoring can cost, read from the limits in force."""
    from evaluators.answers import opsin
    from leaderboard.execution.limits import ScoringLimits

    page = security_page(tmp_path)
    limits = ScoringLimits()
    section = page.split("## The host's own parsers and clients", 1)[1].split("\n## ", 1)[0]
    figures = (f"{limits.memory_bytes // 1024**3} GiB", f"{limits.cpu_s} CPU seconds", f"{limits.wall_s:g} s",
               f"{opsin.MAX_NAME_LENGTH} characters", f"-Xmx{opsin.OPSIN_HEAP}", "name resolution")
    for figure in figures:
        assert figure in " ".join(section.split()), figure
    assert "become `?`" not in page and "visible escapes" in page
