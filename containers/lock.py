#!/usr/bin/env python3
"""Regenerate the image's lock files: exact pins and sha256 hashes of every wheel the image installs.

Usage (from the repository root, with a Python that has pip >= 23.1 and the repository's dependencies)::

    python containers/lock.py                  # writes requirements.lock and torch-cpu.txt in containers/
    python containers/lock.py --check          # exit 1 if those files differ from a fresh resolution
                                               # (exit 3: cannot resolve, e.g. no index reachable)
    python containers/lock.py --variant cuda --torch-index-url https://download.pytorch.org/whl/cu126
                                               # writes containers/torch-cuda.txt (needs that index)

How: ``pip install --dry-run --ignore-installed --report`` resolves :data:`TOP_LEVEL` for the image's platform
(CPython 3.11, manylinux glibc <= 2.36, x86_64: :data:`leaderboard.execution.wheelhouse.PIP_TARGET_ARGS`),
whatever the
host's own Python is; the report names each chosen wheel and its sha256. Everything except torch goes to
``requirements.lock``; torch (plus, for CUDA, the dependencies only the CUDA build has) goes to
``torch-<variant>.txt``. The files are sorted and carry no timestamp: a rerun on the same indexes gives the
same bytes.

The CPU build of torch comes from the host's pip configuration (on the reference hosts, a local
``find-links`` folder holding ``torch-2.13.0+cpu``); elsewhere add
``--torch-index-url https://download.pytorch.org/whl/cpu``. An unpinned torch from PyPI is the multi-GB CUDA
build.

Side effects: reads package indexes (network), writes the lock files in ``containers/``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
sys.path.insert(0, str(REPO_ROOT))

from leaderboard.execution.wheelhouse import PIP_TARGET_ARGS  # noqa: E402 - after the sys.path line above

TORCH = "torch==2.13.0"
"""The torch pin, shared by both variants."""

TOP_LEVEL = [
    "transformers",
    "tokenizers",
    "safetensors",
    "huggingface-hub",
    "numpy",
    "rdkit",
    "faiss-cpu",
    "pyyaml",
    "tqdm",
]
"""What the evaluators need in the image (besides torch); everything else is a transitive dependency."""

CUDA_TEMPLATE = """\
# containers/torch-cuda.txt: torch for the CUDA variant (TORCH_VARIANT=cuda).
#
# NOT LOCKED YET: these machines reach neither a GPU nor the CUDA wheel index, so this file holds only the
# pin and the index. Lock it (torch + the nvidia-* and triton wheels it needs, with hashes) on a host that
# reaches the index:
#     python containers/lock.py --variant cuda --torch-index-url https://download.pytorch.org/whl/cu126
# Until then wheelhouse.ensure_wheelhouse("cuda", ...) fetches torch WITH its dependencies from this index,
# and the image resolves them from that wheelhouse (no hash checking for this file).
--extra-index-url https://download.pytorch.org/whl/cu126
torch==2.13.0
"""


def canonical(name: str) -> str:
    """Return the PEP 503 normalized form of a distribution name."""
    return "-".join(name.lower().replace("_", "-").replace(".", "-").split("-"))


def resolve(requirements: list[str], extra_args: list[str]) -> list[tuple[str, str, str]]:
    """Resolve ``requirements`` for the image's platform.

    Parameters
    ----------
    requirements : list of str
        Requirement strings.
    extra_args : list of str
        More pip options (index URLs).

    Returns
    -------
    list of tuple
        ``(canonical name, version, sha256)`` of every distribution to install, sorted by name.
    """
    with tempfile.TemporaryDirectory(prefix="chemrobust-lock-") as tmp:
        req_file = Path(tmp) / "top-level.in"
        req_file.write_text("\n".join(requirements) + "\n", encoding="utf-8")
        report = Path(tmp) / "report.json"
        cmd = [
            sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--quiet",
            "--dry-run", "--ignore-installed", "--target", str(Path(tmp) / "target"),
            *PIP_TARGET_ARGS, *extra_args, "--report", str(report), "-r", str(req_file),
        ]  # fmt: skip
        print("$", " ".join(cmd), file=sys.stderr)
        if subprocess.run(cmd, check=False).returncode != 0:
            print("lock.py: pip could not resolve the requirements (see above)", file=sys.stderr)
            raise SystemExit(3)
        data = json.loads(report.read_text(encoding="utf-8"))
    rows = []
    for item in data["install"]:
        meta, info = item["metadata"], item["download_info"]
        hashes = info.get("archive_info", {}).get("hashes", {})
        if "sha256" not in hashes:
            raise SystemExit(f"no sha256 for {meta['name']} {meta['version']} ({info.get('url')})")
        rows.append((canonical(meta["name"]), meta["version"], hashes["sha256"]))
    return sorted(rows)


def render(title: str, rows: list[tuple[str, str, str]], *, regenerate: str, preamble: str = "") -> str:
    """Render a hashed requirements file with a header saying how to regenerate it."""
    lines = [
        f"# {title}",
        "# GENERATED by containers/lock.py; do not edit. Regenerate from the repository root with:",
        f"#     {regenerate}",
        "# Target: CPython 3.11, manylinux (glibc <= 2.36) x86_64 = Debian bookworm; one wheel hash each.",
        f"# Inputs: {TORCH} {' '.join(TOP_LEVEL)}",
    ]
    if preamble:
        lines.append(preamble.rstrip("\n"))
    for name, version, sha in rows:
        lines.append(f"{name}=={version} \\")
        lines.append(f"    --hash=sha256:{sha}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Resolve and write (or check) the lock files; return the exit status."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--variant", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--torch-index-url", default=None, help="extra index holding the torch build")
    parser.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 on a diff")
    parser.add_argument("--cuda-template", action="store_true", help="(re)write the unlocked CUDA template")
    args = parser.parse_args(argv)

    outputs: dict[Path, str] = {}
    if args.cuda_template:
        outputs[HERE / "torch-cuda.txt"] = CUDA_TEMPLATE
    else:
        extra = ["--extra-index-url", args.torch_index_url] if args.torch_index_url else []
        rows = resolve([TORCH, *TOP_LEVEL], extra)
        torch_rows = [r for r in rows if r[0] == "torch"]
        rest = [r for r in rows if r[0] != "torch"]
        if not torch_rows:
            raise SystemExit("torch was not resolved")
        index_line = f"--extra-index-url {args.torch_index_url}\n" if args.torch_index_url else ""
        command = "python containers/lock.py" + (
            f" --variant {args.variant} --torch-index-url {args.torch_index_url}"
            if args.torch_index_url or args.variant != "cpu"
            else ""
        )
        if args.variant == "cpu":
            outputs[HERE / "requirements.lock"] = render(
                "containers/requirements.lock: every dependency of the image except torch.",
                rest,
                regenerate=command,
            )
            outputs[HERE / "torch-cpu.txt"] = render(
                "containers/torch-cpu.txt: torch, CPU build (TORCH_VARIANT=cpu).",
                torch_rows,
                regenerate=command,
                preamble=index_line,
            )
        else:
            locked = {}
            for line in (HERE / "requirements.lock").read_text(encoding="utf-8").splitlines():
                if "==" in line and not line.startswith("#"):
                    name, _, version = line.split(" ")[0].partition("==")
                    locked[name] = version
            moved = [r for r in rest if r[0] in locked and locked[r[0]] != r[1]]
            if moved:
                raise SystemExit(f"the CUDA resolution moves locked packages {moved}: relock the CPU variant")
            only_cuda = [r for r in rest if r[0] not in locked]
            outputs[HERE / "torch-cuda.txt"] = render(
                "containers/torch-cuda.txt: torch, CUDA build (TORCH_VARIANT=cuda), and what only it needs.",
                torch_rows + only_cuda, regenerate=command, preamble=index_line,
            )  # fmt: skip

    stale = []
    for path, text in outputs.items():
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(path)
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(REPO_ROOT)}", file=sys.stderr)
    if stale:
        print("out of date: " + ", ".join(str(p.relative_to(REPO_ROOT)) for p in stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
