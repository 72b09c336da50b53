"""A second track defined entirely in test code: proof that a track is a plug-in across the whole stack.

``toy_echo`` asks a generative model to repeat a molecule, written once as in the data set and once in
RDKit's canonical form, and scores on the host: the container writes only the raw answers
(``answers.csv``); :meth:`ToyEchoTrack.score` normalises them with RDKit and compares them with the
molecules it reads from the host's copy of the data set. It declares its own dimension (``view``), its own
metrics (registered here, not in ``evaluators/``) and a headline criterion. The evaluation pipeline,
store, exports, ranking and site pick all of it up from these declarations; a job names this module in
``plugins`` so that the in-process runner's subprocess registers the track too.

Not collected by pytest (no ``test_`` prefix); imported by ``tests/test_plugin_track.py``.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from evaluators.adapters import Adapter, GenerationRequest, GenerativeAdapter, as_completions
from evaluators.datasets import LoadedDataset, load_dataset
from evaluators.metrics import METRICS, register_metric
from evaluators.notations.smiles import canonical_smiles
from evaluators.schema import Criterion, Dimension, MetricRow, MetricSpec, TrackResult
from evaluators.tracks import TRACKS, Track

VIEWS = ("as_written", "canonical")

for _spec in (
    MetricSpec(
        "echo_accuracy", True, "echo accuracy", "Share of answers that encode the asked molecule.", 0.0, 1.0
    ),
    MetricSpec(
        "echo_consistency",
        True,
        "echo consistency",
        "Share of molecules answered alike in both views.",
        0.0,
        1.0,
    ),  # fmt: skip
    MetricSpec("n_answers", True, "n answers", "Answers received.", 0.0, integral=True),
):
    if _spec.name not in METRICS:
        register_metric(_spec)


class ToyEchoTrack(Track):
    """Repeat-the-molecule consistency, scored on the host."""

    name = "toy_echo"
    version = 1
    capability = "generate"
    main_metric = "echo_consistency"
    description = "A test track: repeat a molecule given as written and in canonical form."
    citation = "ChemRobust test suite."
    dimensions = (Dimension("view", "How the molecule was written in the prompt.", values=VIEWS),)
    metrics = ("echo_accuracy", "echo_consistency", "n_answers")
    artifacts = ("answers.csv",)
    headline = (
        Criterion("echo_consistency", where=(("view", "-"),), per=(), label="Echo consistency across views"),
    )

    @classmethod
    def accepts(cls, dataset) -> bool:  # noqa: D102 - any set of molecules will do
        return True

    def definition(self) -> dict[str, Any]:  # noqa: D102
        return {"views": list(VIEWS), "prompt": "Repeat this molecule: {smiles}"}

    def run(  # noqa: D102
        self,
        adapter: Adapter,
        dataset: LoadedDataset,
        *,
        out_dir: Path,
        log: Callable[[str], None],
        progress: Callable[[str, int, int], None] = lambda *_: None,
    ) -> dict[str, Any]:
        if not isinstance(adapter, GenerativeAdapter):
            raise TypeError("track 'toy_echo' needs the 'generate' capability")
        requests = [
            GenerationRequest(id=f"{m.id}|{view}", prompt=f"Repeat this molecule: {smiles}")
            for m in dataset.molecules
            for view, smiles in zip(VIEWS, (m.smiles, canonical_smiles(m.smiles)), strict=True)
        ]
        progress("generate", 0, len(requests))
        answers = [c.text for c in as_completions(requests, adapter.generate(requests))]
        progress("generate", len(requests), len(requests))
        with open(out_dir / "answers.csv", "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["id", "view", "answer"])
            for request, answer in zip(requests, answers, strict=True):
                writer.writerow([*request.id.split("|"), answer])
        log(f"toy_echo: {len(answers)} answers")
        return {
            "rows": [{"view": v, "metric": "n_answers", "value": len(dataset.molecules)} for v in VIEWS],
            "counts": {"n_molecules": len(dataset.molecules)},
            "artifacts": ["answers.csv"],
        }

    def score(self, result: TrackResult, *, out_dir: Path, data_dir: Path) -> TrackResult:
        """Normalise the raw answers with RDKit and score them against the host's data."""
        molecules = load_dataset(result.dataset, data_dir, limit=self.options.limit).molecules
        truth = {m.id: canonical_smiles(m.smiles) for m in molecules}
        answers: dict[str, dict[str, str | None]] = {}
        with open(out_dir / "answers.csv", newline="") as handle:
            for row in csv.DictReader(handle):
                answers.setdefault(row["id"], {})[row["view"]] = canonical_smiles(row["answer"])
        rows = list(result.rows)
        for view in VIEWS:
            hits = [answers.get(i, {}).get(view) == t for i, t in truth.items()]
            rows.append(MetricRow((("view", view),), "echo_accuracy", sum(hits) / len(hits)))
        same = [a.get(VIEWS[0]) is not None and a.get(VIEWS[0]) == a.get(VIEWS[1]) for a in answers.values()]
        rows.append(MetricRow((("view", "-"),), "echo_consistency", sum(same) / max(len(same), 1)))
        return replace(result, rows=tuple(rows))


def register() -> None:
    """Register the track (idempotent: the subprocess and the test process both import this module)."""
    if "toy_echo" not in TRACKS:
        TRACKS.register("toy_echo")(ToyEchoTrack)


def unregister() -> None:
    """Remove the track again (test teardown), so other tests see only the real tracks."""
    TRACKS._items.pop("toy_echo", None)  # noqa: SLF001 - test-only teardown of a test registration


register()
