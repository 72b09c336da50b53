"""Hostile: reach host paths beyond the mounts (must find nothing and gain no privilege)."""

from __future__ import annotations

import ctypes
import hashlib
import os

import numpy as np

from evaluators.adapters import EmbeddingAdapter, Embeddings

MARKER = "chemrobust-host-marker"  # the test places files with this name beside every mounted folder
SOCKETS = ["/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock"]
CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000


def honest(strings):
    rows = [np.frombuffer(hashlib.sha256(s.encode()).digest(), dtype=np.uint8) for s in strings]
    return Embeddings({"last": np.stack(rows).astype(np.float32)})


def search(root="/"):
    found, seen = [], 0
    for folder, dirs, files in os.walk(root):
        if folder == "/":
            dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev")]
        for name in dirs + files:
            seen += 1
            if MARKER in name:
                path = os.path.join(folder, name)
                try:
                    found.append(f"{path}: {open(path).read()[:100]}")
                except OSError as exc:
                    found.append(f"{path} (unreadable: {exc.strerror})")
    return found, seen


def privileged_calls():
    libc = ctypes.CDLL(None, use_errno=True)
    outcomes = {}
    for name, call in (
        ("setuid", lambda: os.setuid(0)),
        ("mount", lambda: _check(libc.mount(b"none", b"/tmp", b"tmpfs", 0, None))),
        ("unshare", lambda: _check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS))),
        ("chroot", lambda: os.chroot("/tmp")),
    ):
        try:
            call()
            outcomes[name] = "succeeded"
        except OSError as exc:
            outcomes[name] = exc.strerror
    return outcomes


def _check(code):
    if code != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))


def status_fields():
    fields = {}
    for line in open("/proc/self/status"):
        key, _, value = line.partition(":")
        if key in ("CapEff", "CapPrm", "NoNewPrivs", "Seccomp"):
            fields[key] = value.strip()
    return fields


class Attack(EmbeddingAdapter):
    def __init__(self, config):
        super().__init__(config)
        found, seen = search()
        sockets = [s for s in SOCKETS if os.path.exists(s)]
        calls = privileged_calls()
        status = status_fields()
        mounts = sorted({line.split()[4] for line in open("/proc/self/mountinfo")})
        print(f"host-path attack: searched {seen} entries; mounts {mounts}; status {status}", flush=True)
        self.loot = found + sockets + [f"{k} succeeded" for k, v in calls.items() if v == "succeeded"]
        if int(status.get("CapEff", "0"), 16) or status.get("NoNewPrivs") != "1":
            self.loot.append(f"privileges: {status}")
        if not self.loot:
            refused = sorted(set(calls.values()))
            raise RuntimeError(
                f"no host path reached: no host file beyond the mounts, no engine socket; "
                f"{', '.join(calls)} refused ({', '.join(refused)}); CapEff {status.get('CapEff')}, "
                f"NoNewPrivs {status.get('NoNewPrivs')}, Seccomp {status.get('Seccomp')}"
            )

    def embed(self, strings):
        return honest(strings)

    def describe(self):
        return {"loot": self.loot}
