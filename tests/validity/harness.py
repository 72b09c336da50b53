"""Run every synthetic answerer through the real host scoring of T3–T5 and measure every headline criterion.

For each generative track: a small, fixed sample of a real data set (:data:`SAMPLES`), the track's own
``questions`` and truths, one ``completions.jsonl`` per answerer, the track's ``score`` on the host, then the
board's own code (:func:`leaderboard.ranking.headline.headline_rows`, :func:`~leaderboard.ranking.criteria.
criteria_table`) to turn the rows into oriented criteria — exactly what the board ranks.

``python -m tests.validity.harness`` re-measures and rewrites ``known_failures.json`` (run it after a
criterion changes, read the diff, commit it).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from evaluators.asking import COMPLETIONS, AskingTrack, Question
from evaluators.asking.reuse import questions_reused
from evaluators.schema import TrackOptions, TrackResult
from tests.validity.answerers import DEGENERATE, HONEST, SOURCE_COPIER, Case, task_of

KNOWN = Path(__file__).with_name("known_failures.json")
REFERENCE = "noisy_oracle"
#: Track → (data set, number of records scored): small but real samples (the whole module stays < 60 s).
SAMPLES: dict[str, tuple[str, int]] = {
    "consistency": ("freesolv", 40),
    "prompt_robustness": ("freesolv", 48),  # 48: enough for the similarity question to find pairs
    # Per (task, group), see _edit_pairs_sample; 0: the hand-made pairs of test_identity_blinded_track.py.
    "identity_blinded": ("edit-pairs", 30),
}
#: Further (data set, records) a track is measured on: T3 asks other tasks of each set (FreeSolv: formula,
#: Lipinski, ΔG_hyd; the name pairs: translation, formula, Lipinski; the reactions: reaction).
MORE_SAMPLES: dict[str, tuple[tuple[str, int], ...]] = {
    "consistency": (("smiles-iupac-pairs", 30), ("reactions-smiles-iupac", 24)),
    # T4: its classification tasks (issue 33: balanced samples of the measured labels) and its reactions.
    "prompt_robustness": (("clintox", 16), ("bbbp", 16), ("reactions-smiles-iupac", 24)),
}


def samples(track: str) -> list[tuple[str, int]]:
    """Every (data set, records) ``track`` is measured on: :data:`SAMPLES`, then :data:`MORE_SAMPLES`."""
    return [SAMPLES[track], *MORE_SAMPLES.get(track, ())]


# ------------------------------------------------------------------------------------------------ cases


def _names(records: Sequence[dict[str, str]]) -> dict[str, str]:
    from evaluators.notations.smiles import canonical_smiles

    out = {}
    for r in records:
        # A molecule's name; a reaction's product by its name (T3 asks it as a name from names).
        for name, structure in (("iupac", "smiles"), ("product_iupac", "product_smiles")):
            if r.get(name) and (smiles := canonical_smiles(r[structure])):
                out.setdefault(smiles, r[name])
        # Each reactant and reagent by its name (T3 asks them as names from the product's name).
        names, structures = str(r.get("reactants_iupac") or ""), str(r.get("reactants_smiles") or "")
        if names and len(names.split(".")) == len(structures.split(".")):
            for name, structure in zip(names.split("."), structures.split("."), strict=True):
                if smiles := canonical_smiles(structure):
                    out.setdefault(smiles, name)
    return out


def _pools(questions: Sequence[Question], truths: dict[str, Any]) -> dict[tuple[str, str], list[Any]]:
    pools: dict[tuple[str, str], list[Any]] = {}
    for q in questions:
        value = truths[q.request.id]
        kind = "smiles" if q.kind in ("name", "names") else q.kind  # a name answer is a structure truth
        for key in ((task_of(q), q.kind), (task_of(q), kind)):
            bucket = pools.setdefault(key, [])
            if value is not None and value not in bucket:
                bucket.append(value)
    return pools


def consistency_case(records) -> tuple[AskingTrack, list[Question], Case]:
    """T3 on ``records``: the track's questions and its own truths (:func:`evaluators.asking.tasks.truth`)."""
    from evaluators.asking.tasks import truth
    from evaluators.tracks.consistency import ConsistencyTrack

    track = ConsistencyTrack(TrackOptions())
    questions = track.questions(records)
    by_id = {str(r["id"]): r for r in records}
    truths = {q.request.id: truth(q.task, by_id[q.item]) for q in questions}
    return track, questions, Case(truths, _pools(questions, truths), _names(records))


def prompt_robustness_case(records) -> tuple[AskingTrack, list[Question], Case]:
    """T4 on ``records``: the track's questions and its own truths (``TRUTHS``)."""
    from evaluators.tracks.prompt_robustness import PromptRobustnessTrack

    # As a model that takes images is asked: every task, the drawings included (a text-only model's
    # questions are a subset of these, with the same criteria).
    track = PromptRobustnessTrack.for_model(TrackOptions(), images=True)
    questions = track.questions(records)
    truths = track.truths(questions, records)  # relational truths depend on the other records
    return track, questions, Case(truths, _pools(questions, truths), _names(records))


def identity_blinded_case(records) -> tuple[AskingTrack, list[Question], Case]:
    """T5 on ``records``: truths as the track scores them; the source label each question states."""
    from evaluators.notations.smiles import canonical_smiles
    from evaluators.tracks.identity_blinded import RECONSTRUCT, IdentityBlindedTrack, _label

    track = IdentityBlindedTrack(TrackOptions())
    questions = track.questions(records)
    by_id = {str(r["id"]): r for r in records}
    truths, sources, names = {}, {}, {}
    for q in questions:
        r = by_id[q.item]
        if q.template == RECONSTRUCT:
            truths[q.request.id] = canonical_smiles(r["target_smiles"])
            sources[q.request.id] = canonical_smiles(r["source_smiles"])
        else:
            truths[q.request.id] = _label(r, q.kind)
            column = "false_source_label" if q.template == "C3" else "source_label"
            sources[q.request.id] = _label(r, q.kind, column)
    return track, questions, Case(truths, _pools(questions, truths), names, sources)


def _edit_pairs_sample(records, n: int) -> list[dict[str, str]]:
    """The first ``n`` pairs per (task, group, named) in sha256(id) order, in file order.

    Both groups, every task, and the pairs with IUPAC names (asked in both representations) counted apart:
    otherwise the IUPAC cells hold a handful of pairs and a criterion is judged on noise.
    """

    def key(r):
        return hashlib.sha256(str(r["id"]).encode()).hexdigest()

    chosen: dict[tuple[str, str], list[str]] = {}
    for r in sorted(records, key=key):
        named = bool(r.get("source_iupac") and r.get("target_iupac"))
        bucket = chosen.setdefault((r["task"], r["group"], named), [])
        if len(bucket) < n:
            bucket.append(r["id"])
    keep = {i for ids in chosen.values() for i in ids}
    return [r for r in records if r["id"] in keep]


def captioning_case(records) -> tuple[Any, list[Question], Case]:
    """Captioning on ``records``: the gold description is the truth of every writing of a molecule."""
    from evaluators.tracks.captioning import CaptioningTrack

    track = CaptioningTrack(TrackOptions())
    questions = track.questions(records)
    gold = {str(r["id"]): str(r["description"]) for r in records}
    truths = {q.request.id: gold[q.item] for q in questions}
    return track, questions, Case(truths, _pools(questions, truths))


CASES: dict[str, Callable] = {
    "consistency": consistency_case,
    "prompt_robustness": prompt_robustness_case,
    "identity_blinded": identity_blinded_case,
}
#: Generative tracks the board does not rank (descriptive): measured with the same answerers, not in
#: :func:`measure` (no headline criterion to judge).
DESCRIPTIVE_CASES: dict[str, Callable] = {"captioning": captioning_case}


def sample_records(track: str, data_root: Path, dataset: str | None = None) -> list[dict[str, str]]:
    """The fixed sample of real records a track is measured on (:data:`SAMPLES`, or ``dataset`` of
    :data:`MORE_SAMPLES`)."""
    from evaluators.datasets import load_records

    dataset, n = SAMPLES[track] if dataset is None else (dataset, dict(samples(track))[dataset])
    if track == "identity_blinded":
        if not n:
            from tests.evaluators.test_identity_blinded_track import RECORDS

            return [dict(r) for r in RECORDS]
        return _edit_pairs_sample(load_records(dataset, data_root), n)
    if track == "prompt_robustness":
        from evaluators.tracks.prompt_robustness import balance_field, sample

        records = load_records(dataset, data_root)
        return sample(records, 0, n, by=balance_field(records))
    if track == "consistency" and dataset == "smiles-iupac-pairs":
        return _lipinski_balanced(load_records(dataset, data_root), n)
    return load_records(dataset, data_root, limit=n)


def _lipinski_balanced(records: list[dict[str, str]], n: int) -> list[dict[str, str]]:
    """The first ``n // 2`` records of each Lipinski label, in file order.

    The name pairs pass the rule of five 1874 times in 2000 (29 of the first 30): on so flat a sample the
    noisy oracle's κ is noise around 0 (it lost to random answers on one pair or another at 30, 60 and 100
    records), as on FreeSolv, where the criterion is declared flat. Balanced, every κ is measured.
    """
    from evaluators.asking.tasks import TASKS, truth

    lipinski = next(t for t in TASKS if t.name == "lipinski")
    chosen: dict[bool, list[str]] = {True: [], False: []}
    for r in records:
        label = bool(truth(lipinski, r))
        if len(chosen[label]) < n // 2:
            chosen[label].append(r["id"])
    keep = {*chosen[True], *chosen[False]}
    return [r for r in records if r["id"] in keep]


def answerers(track: str) -> dict[str, Callable]:
    """Every answerer measured on ``track`` (the source-label copier on T5 only)."""
    return {**HONEST, **DEGENERATE, **(SOURCE_COPIER if track == "identity_blinded" else {})}


# ------------------------------------------------------------------------------------------------ scoring


class _MemoOpsin:
    """The real OPSIN, each distinct name parsed once across answerers (answers repeat the set's names)."""

    def __init__(self, real):
        self.real, self.seen = real, {}

    def prime(self, names) -> None:
        """Parse every distinct name not seen yet in one batch (one Java process)."""
        self(list(names))

    def __call__(self, names, **kwargs):
        todo = list(dict.fromkeys(n for n in names if n not in self.seen))
        if todo:
            self.seen.update(zip(todo, self.real(todo, **kwargs), strict=True))
        return [self.seen[n] for n in names]


def score_track(
    track_name: str, records: list[dict[str, str]], work: Path, dataset: str | None = None
) -> pd.DataFrame:
    """Long result rows (``submission, track, dataset``, dims, ``metric, value``) of every answerer."""
    import evaluators.answers.opsin as opsin
    import evaluators.datasets as datasets
    from evaluators.answers import extract

    dataset = dataset or SAMPLES[track_name][0]
    work = work / dataset
    track, questions, case = {**CASES, **DESCRIPTIVE_CASES}[track_name](records)
    rows = []
    real_load, real_opsin = datasets.load_records, opsin.names_to_smiles
    datasets.load_records = lambda name, data_dir, limit=None: [dict(r) for r in records]
    # ``Track.score`` derives the questions from the records again for every answerer: the same records give
    # the same questions (a pure function of the records and the options), computed above once per sample.
    # Handed back here (a fresh list of the same frozen questions) for exactly those records; any other
    # records go to the track's own method. Same criteria tables (compared with DataFrame.equals), CPU time
    # of the three tracks' measurement 27.5 -> 19 s (prompt writing, RDKit augmentations, opaque ids).
    track.questions = lambda recs: (list(questions) if recs == records
                                    else type(track).questions(track, recs))  # fmt: skip
    memo = opsin.names_to_smiles = _MemoOpsin(real_opsin)
    texts = {name: [answer(q, case) for q in questions] for name, answer in answerers(track_name).items()}
    memo.prime({part for answers in texts.values() for q, t in zip(questions, answers, strict=True)
                if q.kind in ("name", "names") for part in (extract(t).split(".") if q.kind == "names"
                                                            else [extract(t)])})  # fmt: skip
    # Every answerer is scored as one evaluation scores its models (leaderboard.execution.evaluate): inside
    # ``questions_reused``, so the composed tasks' truths (pairs, groups, routes) are composed once per
    # sample, not once per answerer.
    try:
        with questions_reused():
            for name, answers in texts.items():
                out = work / track_name / name
                out.mkdir(parents=True)
                with (out / COMPLETIONS).open("w", encoding="utf-8") as handle:
                    for q, text in zip(questions, answers, strict=True):
                        line = {"id": q.request.id, "completion": text, "finish_reason": "stop"}
                        handle.write(json.dumps(line) + "\n")
                result = TrackResult(name, track_name, track.version, dataset, "0" * 8, "0" * 8, 0, rows=())
                scored = track.score(result, out_dir=out, data_dir=work)
                for r in scored.rows:
                    rows.append({"submission": name, "track": track_name, "dataset": dataset, **dict(r.dims),
                                 "metric": r.metric, "value": r.value})  # fmt: skip
    finally:
        datasets.load_records, opsin.names_to_smiles = real_load, real_opsin
    return pd.DataFrame(rows)


def criteria(results: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """The board's oriented criteria table (answerers × ``track/criterion/metric``) and weights."""
    from evaluators.metrics import higher_is_better
    from leaderboard.ranking.criteria import criteria_table
    from leaderboard.ranking.headline import headline_rows

    return criteria_table(headline_rows(results), higher_is_better=higher_is_better())


def measure_track(track: str, root: Callable[[str], Path | None], work: Path) -> pd.DataFrame:
    """Oriented criteria table of ``track`` over all its samples; ``root(dataset)`` is the data root."""
    frames = [score_track(track, sample_records(track, root(dataset), dataset), work, dataset)
              for dataset, _ in samples(track)]  # fmt: skip
    return criteria(pd.concat(frames, ignore_index=True))[0]


def measure(data_root: Path) -> dict[str, pd.DataFrame]:
    """Oriented criteria table per generative track (index: answerers)."""
    with tempfile.TemporaryDirectory() as tmp:
        return {t: measure_track(t, lambda _dataset: data_root, Path(tmp)) for t in CASES}


# ------------------------------------------------------------------------------------------------ verdicts


def _show(value: float) -> str:
    return "missing" if not math.isfinite(value) else f"{value:.4g}"


def criterion_verdicts(
    table: pd.DataFrame, measured_only: Sequence[str] = ("biased_oracle",)
) -> dict[str, str | None]:
    """``case id → None`` (passes) or the measured reason it fails; case id ``track-criterion-answerer``.

    Oriented values (higher is better): oracle ≥ noisy oracle, noisy oracle > every degenerate answerer; a
    missing value (the board then ignores the pair) is never strictly worse, so it fails. Answerers in
    ``measured_only`` are measured, not asserted. The embedding harness uses the same checks.
    """
    out: dict[str, str | None] = {}
    for column in table.columns:
        track, criterion = column.split("/", 1)
        ref = float(table.at[REFERENCE, column])
        for name in table.index:
            if name == REFERENCE or name in measured_only:
                continue
            value = float(table.at[name, column])
            if name == "oracle":
                ok = math.isfinite(value) and math.isfinite(ref) and value >= ref
            else:
                ok = math.isfinite(ref) and math.isfinite(value) and ref > value
            reason = None if ok else f"{name} {_show(value)} vs noisy_oracle {_show(ref)} (oriented)"
            out[f"{track}-{criterion}-{name}"] = reason
    return out


def ranking_verdicts(
    tables: dict[str, pd.DataFrame], honest: Sequence[str] = tuple(HONEST), combined: str = "generative"
) -> dict[str, str | None]:
    """Copeland over each track's criteria and over all of them (scope ``combined``): every answerer not in
    ``honest`` ranks below the noisy oracle."""
    from leaderboard.ranking.copeland import copeland_ranking

    scopes = dict(tables)
    scopes[combined] = pd.concat(list(tables.values()), axis=1)
    out: dict[str, str | None] = {}
    for scope, table in scopes.items():
        tracks = pd.Series([c.split("/", 1)[0] for c in table.columns], index=table.columns)
        weights = 1.0 / tracks.map(tracks.value_counts())
        ranks = copeland_ranking(table, weights)["rank"]
        for name in table.index:
            if name in honest:
                continue
            ok = ranks[name] > ranks[REFERENCE]
            out[f"ranking-{scope}-{name}"] = (
                None if ok else (f"Copeland rank {ranks[name]:g} vs noisy_oracle {ranks[REFERENCE]:g}")
            )
    return out


def write_known(tables: dict[str, pd.DataFrame], path: Path = KNOWN) -> dict[str, Any]:
    """Write every case id and the measured failures (the xfail list) as data."""
    verdicts = {**{k: v for t in tables.values() for k, v in criterion_verdicts(t).items()},
                **ranking_verdicts(tables)}  # fmt: skip
    doc = {
        "about": "Measured by `python -m tests.validity.harness` (issue 28): every case of "
        "tests/validity/test_degenerate_answerers.py, and the failing ones with their measured values.",
        "samples": {t: list(s) for t, s in SAMPLES.items()},
        "more_samples": {t: [list(s) for s in more] for t, more in MORE_SAMPLES.items()},
        "cases": sorted(verdicts),
        "failures": {k: v for k, v in sorted(verdicts.items()) if v is not None},
    }
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return doc


def summary(tables: dict[str, pd.DataFrame]) -> str:
    """Per track: criteria, and how many each degenerate answerer wins or ties against the noisy oracle."""
    lines = []
    for track, table in tables.items():
        ref = table.loc[REFERENCE]
        lines.append(f"{track}: {table.shape[1]} headline criteria")
        for name in table.index:
            if name in HONEST:
                continue
            row = table.loc[name]
            beaten = ((ref > row) & ref.notna() & row.notna()).sum()
            n = table.shape[1]
            lines.append(f"  {name:22s} wins/ties/missing on {n - beaten:3d} of {n}")
        failing = {c.rsplit("/", 1)[1] for c in table.columns
                   if any(v is not None for v in criterion_verdicts(table[[c]]).values())}  # fmt: skip
        lines.append(f"  failing criteria families: {', '.join(sorted(failing)) or 'none'}")
    rank = ranking_verdicts(tables)
    lines.append("Copeland below the noisy oracle fails for: " + ", ".join(k for k, v in rank.items() if v))
    return "\n".join(lines)


if __name__ == "__main__":
    root = Path(os.environ.get("VALIDITY_DATA_ROOT") or Path.home() / ".cache" / "chemrobust-tests" / "data")
    measured = measure(root)
    doc = write_known(measured)
    print(summary(measured))
    print(f"{len(doc['failures'])} of {len(doc['cases'])} cases fail; written to {KNOWN}")
