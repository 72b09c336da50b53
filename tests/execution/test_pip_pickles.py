"""Pickle weights of a ``pip`` model reach the sandbox only with both consents, and never load on the host.

A wheel is built here and served to the product's own ``pip download`` from a local folder (``PIP_NO_INDEX``,
``PIP_FIND_LINKS``), so the real fetch code runs. Its ``pytorch_model.bin`` is a real pickle whose
unpickling creates a marker folder: the marker proves what the host never did.
"""

from __future__ import annotations

import os
import pickle
import zipfile
from pathlib import Path

import pytest

from leaderboard.execution.weights import WeightsError, fetch_weights
from leaderboard.intake.manifest import load_submission

MANIFEST = """\
id: pickled-pip
name: A pip model with pickle weights
authors: [ChemRobust tests]
contact: https://example.org/issues
license: MIT
model:
  source: pip
  package: pickledpkg
  version: "{version}"
  path: pickledpkg/weights
  architecture: encoder
  capabilities: [embed]
  allow_pickle: {allow_pickle}
adapter: transformers
"""


class _Payload:
    """Unpickling this creates ``marker``: the code a pickle file can run."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (str(self.marker),))


def _wheel(folder: Path, version: str, files: dict[str, bytes]) -> Path:
    """A minimal valid wheel ``pickledpkg-<version>`` holding ``files`` under ``pickledpkg/weights/``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"pickledpkg-{version}-py3-none-any.whl"
    info = f"pickledpkg-{version}.dist-info"
    members = {
        "pickledpkg/__init__.py": b"",
        **{f"pickledpkg/weights/{name}": data for name, data in files.items()},
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: pickledpkg\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: chemrobust-tests\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    record = "".join(f"{name},,\n" for name in [*members, f"{info}/RECORD"])
    with zipfile.ZipFile(path, "w") as wheel:
        for name, data in members.items():
            wheel.writestr(name, data)
        wheel.writestr(f"{info}/RECORD", record)
    return path


@pytest.fixture
def index(tmp_path, monkeypatch) -> Path:
    """A local wheel folder that the product's ``pip download`` reads instead of the registry."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    return wheels


def _submission(tmp_path: Path, version: str, *, allow_pickle: bool):
    folder = tmp_path / f"{version}-{allow_pickle}" / "pickled-pip"
    folder.mkdir(parents=True)
    (folder / "submission.yaml").write_text(
        MANIFEST.format(version=version, allow_pickle=str(allow_pickle).lower())
    )
    return load_submission(folder / "submission.yaml"), folder


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} - {
        ".chemrobust-complete"
    }


def test_pickle_only_weights_need_the_manifest_and_a_maintainer(index, tmp_path) -> None:
    marker = tmp_path / "unpickled-on-the-host"
    bomb = pickle.dumps(_Payload(marker))
    _wheel(index, "1.0", {"config.json": b"{}", "pytorch_model.bin": bomb})
    state = tmp_path / "state"
    state.mkdir()

    asks = {flag: _submission(tmp_path, "1.0", allow_pickle=flag) for flag in (True, False)}
    for manifest, maintainer in [(True, False), (False, True), (False, False)]:
        sub, folder = asks[manifest]
        with pytest.raises(WeightsError) as caught:
            fetch_weights(sub, folder, state, allow_pickle=maintainer)
        message = str(caught.value)
        assert "pickledpkg==1.0" in message and "pytorch_model.bin" in message
        assert "model.allow_pickle: true" in message and "CHEMROBUST_ALLOW_PICKLE" in message

    sub, folder = asks[True]
    mounted = fetch_weights(sub, folder, state, allow_pickle=True)
    assert (mounted / "pytorch_model.bin").read_bytes() == bomb
    assert not marker.exists()  # fetched, unpacked and mounted, never unpickled on the host


def test_pickles_are_left_out_of_the_mount_when_safetensors_load_without_them(index, tmp_path) -> None:
    marker = tmp_path / "unpickled-on-the-host"
    bomb = pickle.dumps(_Payload(marker))
    safe = b"\x08\x00\x00\x00\x00\x00\x00\x00{}      "
    _wheel(index, "2.0", {"config.json": b"{}", "model.safetensors": safe, "pytorch_model.bin": bomb,
                          "sub/optimizer.pt": bomb, "vocab.txt": b"[PAD]\nC\n"})  # fmt: skip
    state = tmp_path / "state"
    state.mkdir()
    sub, folder = _submission(tmp_path, "2.0", allow_pickle=False)

    mounted = fetch_weights(sub, folder, state, allow_pickle=True)  # the manifest did not ask
    assert _files(mounted) == {"config.json", "model.safetensors", "vocab.txt"}
    assert (mounted / "model.safetensors").read_bytes() == safe
    unpacked = state / "models" / "pip" / "pickledpkg-2.0" / "pickledpkg" / "weights"
    assert mounted != unpacked.resolve()
    assert _files(unpacked) == {"config.json", "model.safetensors", "pytorch_model.bin", "sub/optimizer.pt",
                                "vocab.txt"}  # fmt: skip  (nothing stored is lost)
    assert fetch_weights(sub, folder, state, allow_pickle=True) == mounted  # reused, not rebuilt

    consented, consented_folder = _submission(tmp_path, "2.0", allow_pickle=True)
    both = fetch_weights(consented, consented_folder, state, allow_pickle=True)
    assert both == unpacked.resolve() and "pytorch_model.bin" in _files(both)
    assert not marker.exists()


def test_a_pickle_free_wheel_is_mounted_as_is(index, tmp_path) -> None:
    _wheel(index, "3.0", {"config.json": b"{}", "model.safetensors": b"\x08" + bytes(15)})
    state = tmp_path / "state"
    state.mkdir()
    sub, folder = _submission(tmp_path, "3.0", allow_pickle=False)
    mounted = fetch_weights(sub, folder, state, allow_pickle=False)
    assert mounted == (state / "models" / "pip" / "pickledpkg-3.0" / "pickledpkg" / "weights").resolve()
    assert not (state / "models" / "pip-mount").exists()
