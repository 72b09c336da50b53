"""Fetch model weights on the host, before the sandbox, at the manifest's pinned version.

- ``huggingface``: ``huggingface_hub.snapshot_download`` of the 40-hex ``revision`` into the hub cache
  ``<state>/models/hf`` — safetensors, configs and tokenizer files only; pickle weights (``*.bin``,
  ``*.pt``) only when the manifest sets ``allow_pickle`` *and* a maintainer allows it. The files are then
  verified against the revision's tree (``HfApi.verify_repo_checksums``: sha256 of LFS files, git blob ids
  of the others; nothing missing, nothing extra) and copied as plain files (hard links) into
  ``<state>/models/hf-mount/<org>--<name>/<revision>`` — the cache's snapshot folder holds symlinks into
  ``../../blobs`` that would dangle once mounted alone. The repository's ``*.py`` files are fetched only
  with ``trust_remote_code`` (which a maintainer must allow, see :mod:`leaderboard.intake.manifest`). The hub
  address is an argument (``HF_ENDPOINT``, read by the entry point; tests serve the files from a local
  server). A hub failure is one line with the fix (:mod:`leaderboard.execution.hub_errors`).
- ``pip``: ``pip download <package>==<version> --no-deps`` and unpack the wheel (a zip) into
  ``<state>/models/pip/<package>-<version>``; the package is never installed or imported on the host, and
  its pickle files are never unpickled there. The folder mounted is ``model.path`` inside it: as is when the
  manifest sets ``allow_pickle`` *and* a maintainer allows it, else a copy (hard links) without the pickle
  files (``<state>/models/pip-mount/…``) — published SMILES BERTs (rxnfp, rxnmapper) ship only
  ``pytorch_model.bin``, which then needs that consent.
- ``local``: the folder inside the submission.
- ``dataset``: a registered data set's *training split* (``model.dataset``, ``model.split``): its files only,
  found in the data mirror, the cache or at their pinned URL and sha256-checked, in a folder of their own
  (:func:`leaderboard.data.prepare.prepare_training_split`) — never the set's folder, which also holds what
  is scored.
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

from leaderboard.execution.hub_errors import explain_hub_error
from leaderboard.intake.manifest import HuggingFaceModel, LocalModel, PipModel, Submission
from leaderboard.intake.schema import DatasetModel

SAFE_PATTERNS = ["*.safetensors", "*.json", "*.txt", "*.model", "*.tiktoken", "*.md", "merges.txt"]
REMOTE_CODE_PATTERNS = ["*.py"]  # the model repository's own code: only with ``trust_remote_code``
PICKLE_PATTERNS = ["*.bin", "*.pt", "*.pth", "*.ckpt"]
_MARKER = ".chemrobust-complete"


class WeightsError(RuntimeError):
    """Weights could not be fetched or do not match the pinned version."""


def _pip_model(model: PipModel, state_dir: Path, *, pickled: bool) -> Path:
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
    if pickled:
        return folder
    return _without_pickles(folder, state_dir / "models" / "pip-mount" / target.name / (model.path or "."),
                            f"{model.package}=={model.version}")  # fmt: skip


def _is_pickle(name: str) -> bool:
    return name.endswith(tuple(p[1:] for p in PICKLE_PATTERNS))


def _without_pickles(folder: Path, mount: Path, label: str) -> Path:
    """``folder`` itself when it holds no pickle file, else a hard-link copy at ``mount`` without them.

    Raises
    ------
    WeightsError
        If the pickle files were the only weights (nothing would load without them).
    """
    files = sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
    pickles = [p for p in files if _is_pickle(p.name)]
    if not pickles:
        return folder
    if not any(p.name.endswith(".safetensors") for p in files):
        names = ", ".join(p.relative_to(folder).as_posix() for p in pickles[:3])
        raise WeightsError(
            f"{label}: the only weights are pickle files ({names}), which can run code when loaded; "
            "set 'model.allow_pickle: true' in the manifest, and a maintainer must allow this submission "
            "(CHEMROBUST_ALLOW_PICKLE=<id>) — they are then loaded only inside the sandbox"
        )
    mount = mount.resolve()
    if (mount / _MARKER).is_file():
        return mount
    mount.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{mount.name}-", dir=mount.parent))
    try:
        kept = [p for p in files if not _is_pickle(p.name) and p.name != _MARKER]
        for source in kept:
            dest = staging / source.relative_to(folder)
            dest.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(source, dest)
            except OSError:
                shutil.copyfile(source, dest)
        (staging / _MARKER).write_text("\n".join(p.relative_to(folder).as_posix() for p in kept) + "\n")
        shutil.rmtree(mount, ignore_errors=True)
        os.replace(staging, mount)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return mount


def _hf_model(
    model: HuggingFaceModel, state_dir: Path, *, allow_pickle: bool, remote_code: bool, endpoint: str | None
) -> Path:
    from huggingface_hub import HfApi, snapshot_download
    from huggingface_hub.utils import filter_repo_objects

    pickled = model.allow_pickle and allow_pickle
    patterns = (
        SAFE_PATTERNS + (PICKLE_PATTERNS if pickled else []) + (REMOTE_CODE_PATTERNS if remote_code else [])
    )
    variant = model.revision + ("+pickle" * pickled) + ("+code" * remote_code)
    target = state_dir / "models" / "hf-mount" / model.id.replace("/", "--") / variant
    if (target / _MARKER).is_file():
        return target
    cache = state_dir / "models" / "hf"
    try:
        snapshot = Path(
            snapshot_download(
                repo_id=model.id,
                revision=model.revision,
                cache_dir=cache,
                allow_patterns=patterns,
                endpoint=endpoint,
            )
        )
        check = HfApi(endpoint=endpoint).verify_repo_checksums(
            model.id, revision=model.revision, cache_dir=cache
        )
    except Exception as exc:  # noqa: BLE001 - huggingface_hub raises many error types: one line with the fix
        raise WeightsError(
            explain_hub_error(exc, repo=model.id, revision=model.revision, endpoint=endpoint)
        ) from None
    wanted = set(filter_repo_objects(check.missing_paths, allow_patterns=patterns))
    problems = [
        f"{m['path']} ({m['algorithm']} {m['actual'][:12]}, expected {m['expected'][:12]})"
        for m in check.mismatches
    ]
    problems += [f"{p} (missing)" for p in sorted(wanted)] + [
        f"{p} (not in the revision)" for p in check.extra_paths
    ]
    if snapshot.name != model.revision or check.revision != model.revision or problems:
        raise WeightsError(
            f"{model.id}: the files fetched are not revision {model.revision}: "
            + ("; ".join(problems[:5]) or f"got snapshot {snapshot.name}")
            + f". Delete {state_dir / 'models' / 'hf'} and fetch again; if it persists, the server does not "
            "serve that commit."
        )
    files = sorted(
        filter_repo_objects(
            [p.relative_to(snapshot).as_posix() for p in snapshot.rglob("*") if p.is_file()],
            allow_patterns=patterns,
        )
    )
    if not any(f.endswith(".safetensors") for f in files) and not (pickled and any(map(_is_pickle, files))):
        raise WeightsError(
            f"{model.id}@{model.revision}: no safetensors weights; pickle weights need "
            "'model.allow_pickle: true' and a maintainer's CHEMROBUST_ALLOW_PICKLE"
        )
    return _materialise(snapshot, files, target, cache)


def _materialise(snapshot: Path, files: list[str], target: Path, cache: Path) -> Path:
    """Copy the snapshot's ``files`` into ``target`` as plain files (hard links where possible).

    The hub cache's snapshot folder holds relative symlinks into ``../../blobs``; mounted alone at
    ``/models`` they would dangle. The mounted folder holds only regular files, readable by the sandbox user.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        for rel in files:
            source, dest = (snapshot / rel).resolve(), staging / rel
            if cache.resolve() not in source.parents:
                raise WeightsError(f"{snapshot / rel} resolves to {source}, outside the hub cache {cache}")
            dest.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(source, dest)
            except OSError:
                shutil.copyfile(source, dest)
            os.chmod(dest, 0o644)
        for folder in [staging, *(p for p in staging.rglob("*") if p.is_dir())]:
            os.chmod(folder, 0o755)
        (staging / _MARKER).write_text("\n".join(files) + "\n")
        shutil.rmtree(target, ignore_errors=True)
        os.replace(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def fetch_weights(
    submission: Submission,
    submission_dir: Path,
    state_dir: Path,
    *,
    allow_pickle: bool = False,
    hf_endpoint: str | None = None,
    data_mirror: Path | None = None,
) -> Path | None:
    """Return the local folder with the submission's weights (to mount at ``/models``), or ``None``.

    ``allow_pickle`` is the maintainer's consent for this submission; ``hf_endpoint`` the hub address
    (``None``: the public hub; :attr:`leaderboard.settings.Settings.hf_endpoint`); ``data_mirror`` the local
    data mirror a ``dataset`` source's split is found in first
    (:attr:`leaderboard.settings.Settings.data_mirror`).

    Raises
    ------
    WeightsError
        If a download fails or the result is not the pinned version.
    """
    model = submission.model
    if isinstance(model, DatasetModel):
        from leaderboard.data.prepare import DataError, prepare_training_split

        try:
            return prepare_training_split(model.dataset, model.split, state_dir, mirror=data_mirror)
        except DataError as exc:
            raise WeightsError(str(exc)) from None
    if isinstance(model, PipModel):
        return _pip_model(model, state_dir, pickled=model.allow_pickle and allow_pickle)
    if isinstance(model, HuggingFaceModel):
        return _hf_model(
            model,
            state_dir,
            allow_pickle=allow_pickle,
            remote_code=submission.trust_remote_code,
            endpoint=hf_endpoint,
        )
    if isinstance(model, LocalModel):
        return (submission_dir / model.path).resolve()
    return None


def model_revision(submission: Submission) -> str:
    """Return the pinned version recorded with results (commit SHA, package version, 'local' or 'none').

    A training split: ``dataset:<set>/<split>@<sha256 over its files' pinned sha256s, 16 hex>``.
    """
    model = submission.model
    if isinstance(model, DatasetModel):
        import hashlib

        from evaluators.datasets import DATASETS

        split = DATASETS.get(model.dataset).training_split(model.split)
        pins = "".join(f"{f.path}\0{f.sha256}\n" for f in sorted(split.files, key=lambda f: f.path)) \
            if split is not None else ""  # fmt: skip
        return f"dataset:{model.dataset}/{model.split}@{hashlib.sha256(pins.encode()).hexdigest()[:16]}"
    if isinstance(model, HuggingFaceModel):
        return f"{model.id}@{model.revision}"
    if isinstance(model, PipModel):
        return f"{model.package}=={model.version}"
    return model.source
