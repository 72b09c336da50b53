"""Hostile: open network connections from the sandbox (must fail: no network)."""

from __future__ import annotations

import hashlib
import socket

import numpy as np

from evaluators.adapters import EmbeddingAdapter, Embeddings

# Public DNS, a web server, the Docker bridge gateway (the engine API port), the cloud metadata service.
TARGETS = [("1.1.1.1", 53), ("8.8.8.8", 443), ("172.17.0.1", 2375), ("169.254.169.254", 80)]


def honest(strings):
    rows = [np.frombuffer(hashlib.sha256(s.encode()).digest(), dtype=np.uint8) for s in strings]
    return Embeddings({"last": np.stack(rows).astype(np.float32)})


class Attack(EmbeddingAdapter):
    def __init__(self, config):
        super().__init__(config)
        self.loot, errors = [], set()
        for host, port in TARGETS:
            try:
                socket.create_connection((host, port), timeout=3).close()
                self.loot.append(f"connected to {host}:{port}")
            except OSError as exc:
                errors.add(exc.strerror or type(exc).__name__)
        try:
            socket.getaddrinfo("huggingface.co", 443)
            self.loot.append("resolved huggingface.co")
            dns = "resolves"
        except OSError as exc:
            dns = f"fails ({exc.strerror or type(exc).__name__})"
        try:
            from huggingface_hub import hf_hub_download

            hf_hub_download("bert-base-uncased", "config.json", cache_dir="/tmp/hub")
            self.loot.append("downloaded from the Hugging Face hub")
            hub = "answers"
        except Exception as exc:  # noqa: BLE001 - any failure is the expected outcome
            hub = type(exc).__name__
        interfaces = sorted(name for _, name in socket.if_nameindex())
        print(f"network attack: errors {sorted(errors)}, dns {dns}, hub {hub}, interfaces {interfaces}")
        if not self.loot:
            raise RuntimeError(
                f"network blocked: {len(TARGETS)} of {len(TARGETS)} connections failed "
                f"({', '.join(sorted(errors))}); DNS {dns}; hub download {hub}; interfaces {interfaces}"
            )

    def embed(self, strings):
        return honest(strings)

    def describe(self):
        return {"loot": self.loot}
