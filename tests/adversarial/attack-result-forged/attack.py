"""Hostile: forge a well-formed result with an impossible score (the host must reject it)."""

from __future__ import annotations

import json
import os

from evaluators.adapters import EmbeddingAdapter


def row(augmentation, metric, value):
    return {
        "augmentation": augmentation,
        "layer": "last",
        "distance": "l2",
        "direction": "original_to_augmented",
        "subset": "non_trivial",
        "metric": metric,
        "value": value,
    }


class Attack(EmbeddingAdapter):
    def embed(self, strings):
        job = json.load(open("/job/job.json"))
        # Every field of the schema, copied from the job where it can be: only the numbers are forged.
        result = {
            "schema_version": 2,
            "submission_id": job["submission_id"],
            "track": job["track"],
            "track_version": 2,
            "dataset": job["dataset"],
            "data_hash": "0" * 64,
            "benchmark_version": job["benchmark_version"],  # copied from the job: right version
            "seed": 0,
            "rows": [
                row("canonical", "acc_at_1", 7.5),
                row("<img src=x onerror=alert(1)>", "acc_at_1", 1.0),
            ],
        }
        with open("/out/result.json", "w") as handle:
            json.dump(result, handle)
        os._exit(0)
