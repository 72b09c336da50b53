"""The captioning track (issue 34 part 1): what it asks, what the container sees, how the host scores.

Real ChEBI-20 molecules and gold descriptions (the registered ``chebi20`` set), real WordNet: an oracle that
answers with the gold description scores 1 on BLEU and ROUGE in every writing and drops by exactly 0; a
constant caption scores the same on every writing of a molecule, so its drop is exactly 0 too — the reason
nothing of the track is ranked.
"""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import pytest

from evaluators.adapters import GenerativeAdapter
from evaluators.datasets import DATASETS, load_records
from evaluators.notations.augmentations import AUGMENTATIONS
from evaluators.schema import TrackOptions, TrackResult
from evaluators.tracks import TRACKS
from evaluators.tracks.captioning import (
    ANSWERS,
    COMPLETIONS,
    ORIGINAL,
    REWRITES,
    SCORES,
    CaptioningTrack,
    read_caption,
)
from evaluators.tracks.captioning import metrics as caption_metrics
from evaluators.tracks.captioning.drops import paired_drops

LIMIT = 8
CONSTANT = "The molecule is a member of the class of organic compounds."


@pytest.fixture(scope="module")
def chebi(benchmark_data) -> tuple[Path, list[dict[str, str]]]:
    root = benchmark_data("chebi20")
    return root, load_records("chebi20", root)


def _track(limit: int | None = LIMIT) -> CaptioningTrack:
    return CaptioningTrack(TrackOptions(limit=limit))


def _result() -> TrackResult:
    return TrackResult("model", "captioning", 1, "chebi20", "0" * 8, "0" * 8, 0, rows=(), counts={})


def _score(track: CaptioningTrack, root: Path, out: Path, answer) -> tuple[dict, TrackResult]:
    records = load_records("chebi20", root, limit=track.options.limit)
    out.mkdir(exist_ok=True)
    lines = [json.dumps({"id": q.request.id, "completion": answer(q), "finish_reason": "stop"})
             for q in track.questions(records)]  # fmt: skip
    (out / COMPLETIONS).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    scored = track.score(_result(), out_dir=out, data_dir=root)
    CaptioningTrack.parse_result(scored.to_json())  # every row within its declared bounds
    return {(dict(r.dims)["augmentation"], r.metric): r.value for r in scored.rows}, scored


def _table(out: Path) -> list[dict[str, str]]:
    with gzip.open(out / ANSWERS, "rt", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_the_track_is_registered_unranked_and_on_the_generative_board() -> None:
    from leaderboard.ranking.boards import BOARDS, board_tracks

    assert TRACKS.get("captioning") is CaptioningTrack
    assert CaptioningTrack.capability == "generate" and CaptioningTrack.headline == ()
    generative = next(b for b in BOARDS if b.capability == "generate")
    assert "captioning" in board_tracks(generative)
    assert set(REWRITES) == set(AUGMENTATIONS.names())  # the same checked rewrites T1 uses
    assert "captioning" in DATASETS.get("chebi20").tracks and CaptioningTrack.accepts(DATASETS.get("chebi20"))
    assert "not ranked" in CaptioningTrack.description.lower()


def test_the_sample_is_fixed_and_rewrites_equal_to_the_original_are_not_asked(chebi) -> None:
    _, records = chebi
    questions = _track(None).questions(records)
    by_writing: dict[str, set[str]] = {}
    for q in questions:
        by_writing.setdefault(q.representation, set()).add(q.item)
    assert len(by_writing[ORIGINAL]) == 200
    assert all(items <= by_writing[ORIGINAL] for items in by_writing.values())
    original = {q.item: q.shown for q in questions if q.representation == ORIGINAL}
    assert all(q.shown != original[q.item] for q in questions if q.representation != ORIGINAL)
    # Two rewrites may write a molecule alike (canonical and Kekulé forms of a molecule without aromatic
    # atoms): both are asked, and ask() generates the prompt once.
    assert len({(q.representation, q.item) for q in questions}) == len(questions)
    assert questions == _track(None).questions(records)  # deterministic
    assert all(q.request.prompt.splitlines()[-1].startswith("End your reply with") for q in questions)


def test_the_container_view_holds_no_gold_description(chebi) -> None:
    root, records = chebi
    view = CaptioningTrack.container_view("chebi20", records, TrackOptions())
    assert view and set(view[0]) == set(CaptioningTrack.view_columns)
    text = json.dumps(view, ensure_ascii=False)
    leaked = [r["id"] for r in records if r["description"] in text]
    assert leaked == []
    # Nor any long stretch of one (the descriptions all open with "The molecule is", as the prompt asks).
    assert not any(r["description"][16:80] in text for r in records)
    assert all(r["id"] not in {row["id"] for row in view} for r in records)  # opaque ids only


def test_an_oracle_scores_one_on_every_writing_and_drops_by_zero(chebi, tmp_path) -> None:
    root, _ = chebi
    gold = {r["id"]: r["description"] for r in load_records("chebi20", root)}
    rows, scored = _score(_track(), root, tmp_path / "out", lambda q: f"Thinking …\nAnswer: {gold[q.item]}")
    writings = {w for w, _ in rows}
    assert writings == {ORIGINAL, *REWRITES}
    for writing in writings:
        for name in ("bleu2", "bleu4", "rouge1", "rouge2", "rouge_l"):
            assert rows[(writing, name)] == pytest.approx(1.0)
        assert rows[(writing, "meteor")] > 0.99
        if writing != ORIGINAL:
            for name in SCORES.values():
                assert rows[(writing, f"{name}_drop")] == 0.0
                assert rows[(writing, f"{name}_drop_low")] == rows[(writing, f"{name}_drop_high")] == 0.0
    assert scored.details["tokenization"] and scored.details["wordnet"] == "WordNet 3.0"
    table = _table(tmp_path / "out")
    asked = _track().questions(load_records("chebi20", root, limit=LIMIT))
    assert len(table) == len(asked) and scored.counts["n_items"] == LIMIT
    assert {row["rule"] for row in table} == {"answer-line"}


def test_a_constant_caption_scores_alike_in_every_writing_so_it_never_drops(chebi, tmp_path) -> None:
    root, _ = chebi
    rows, _ = _score(_track(), root, tmp_path / "out", lambda q: f"Answer: {CONSTANT}")
    assert rows[(ORIGINAL, "rouge1")] > 0.1 and rows[(ORIGINAL, "rouge_l")] > 0.1  # well above zero
    per_item: dict[str, set[tuple[str, ...]]] = {}
    for row in _table(tmp_path / "out"):
        per_item.setdefault(row["id"], set()).add(tuple(row[m] for m in SCORES.values()))
    assert all(len(scores) == 1 for scores in per_item.values())  # the same caption, the same scores
    for rewrite in REWRITES:
        if rows.get((rewrite, "n_items"), 0) == 0:
            continue
        for name in SCORES.values():
            assert rows[(rewrite, f"{name}_drop")] == 0.0  # the best possible drop: why nothing is ranked
            assert rows[(rewrite, f"{name}_drop_low")] == rows[(rewrite, f"{name}_drop_high")] == 0.0


def test_counts_say_which_rewrites_were_identical_or_excluded(chebi, tmp_path) -> None:
    root, _ = chebi
    rows, _ = _score(_track(), root, tmp_path / "out", lambda q: "")
    for rewrite in REWRITES:
        asked, same, failed = (rows[(rewrite, m)] for m in ("n_items", "n_identical", "n_excluded"))
        assert asked + same + failed == rows[(ORIGINAL, "n_items")] == LIMIT
        if asked:
            assert rows[(rewrite, "no_caption_share")] == 1.0
    assert rows[(ORIGINAL, "rouge1")] == 0.0


class _Describer(GenerativeAdapter):
    """Captions every prompt with the molecule's first characters, hostile Markdown included."""

    def __init__(self) -> None:
        super().__init__(None)
        self.prompts: list[str] = []

    def generate(self, requests):  # noqa: D102
        self.prompts += [r.prompt for r in requests]
        out = []
        for r in requests:
            smiles = next(line for line in r.prompt.splitlines() if line.startswith("SMILES: "))[8:]
            out.append(f"Sure.\nAnswer: The molecule is <b>|{smiles[:12]}|</b> an acid.")
        return out


def test_an_in_process_run_asks_the_view_and_the_host_scores_it(chebi, tmp_path) -> None:
    root, _ = chebi
    track = _track(4)
    records = load_records("chebi20", root, limit=4)
    out = tmp_path / "out"
    out.mkdir()
    adapter = _Describer()
    ran = track.run(adapter, track.container_dataset(records), out_dir=out, log=lambda _: None)
    assert ran["artifacts"] == [COMPLETIONS] and ran["rows"] == []
    gold = [r["description"] for r in records]
    assert not any(g in p for g in gold for p in adapter.prompts)
    result = TrackResult("model", "captioning", 1, "chebi20", "0" * 8, "0" * 8, 0, rows=(),
                         counts=ran["counts"])
    scored = track.score(result, out_dir=out, data_dir=root)
    CaptioningTrack.parse_result(scored.to_json())
    assert set(scored.artifacts) == {COMPLETIONS, ANSWERS}
    table = _table(out)
    assert len(table) == ran["counts"]["n_requests"] == scored.counts["n_requests"]
    assert all(row["completion"].startswith("Sure. Answer: The molecule is <b>|") for row in table)
    assert list(table[0]) == list(CaptioningTrack.tables[0].columns)


def test_scoring_fails_clearly_without_wordnet(chebi, tmp_path, monkeypatch) -> None:
    root, _ = chebi
    monkeypatch.setattr(caption_metrics, "_wordnet_candidates", lambda: [tmp_path / "no-wordnet"])
    caption_metrics.load_wordnet.cache_clear()
    try:
        with pytest.raises(caption_metrics.WordNetUnavailable, match="wordnet-base"):
            _score(_track(2), root, tmp_path / "out", lambda q: CONSTANT)
        assert not (tmp_path / "out" / ANSWERS).exists()
    finally:
        caption_metrics.load_wordnet.cache_clear()


def test_the_paired_bootstrap_of_identical_writings_is_zero_and_of_a_loss_brackets_it() -> None:
    predictions = ["The molecule is a ketone.", "The molecule is an alcohol derived from ethane.",
                   "The molecule is a carboxylic acid.", "It is an aromatic ring."]  # fmt: skip
    gold = ["The molecule is a ketone.", "The molecule is an alcohol.", "The molecule is an acid.",
            "The molecule is an aromatic compound."]  # fmt: skip
    wordnet = caption_metrics.load_wordnet()
    tokens = caption_metrics.basic_tokenization()
    items = caption_metrics.score_captions(predictions, gold, tokenization=tokens, wordnet=wordnet).items
    same = paired_drops(items, items, seed=0, stream=1, replicates=200)
    assert all((d.value, d.low, d.high) == (0.0, 0.0, 0.0) for d in same.values())
    empty = caption_metrics.score_captions([""] * 4, gold, tokenization=tokens, wordnet=wordnet).items
    lost = paired_drops(items, empty, seed=0, stream=1, replicates=200)
    full = caption_metrics.aggregate(items)
    for name, drop in lost.items():
        assert drop.value == pytest.approx(full[name]) and drop.low <= drop.value <= drop.high
    assert lost == paired_drops(items, empty, seed=0, stream=1, replicates=200)  # seeded
    with pytest.raises(ValueError, match="not paired"):
        paired_drops(items, empty[:2], seed=0, stream=1)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Answer: The molecule is a ketone.", ("The molecule is a ketone.", "answer-line")),
        ("The molecule is an\nacid.\n\nMore.", ("The molecule is an acid.", "first-paragraph")),
        ("", ("", "none")),
        ("\x00\ud800", ("", "none")),
    ],
)
def test_captions_are_read_as_written(text, expected) -> None:
    assert read_caption(text) == expected


def test_the_site_table_escapes_what_a_submission_controls() -> None:
    import pandas as pd

    from leaderboard.site.extensions import extension

    evil = "<script>x</script>|**bold**"
    rows = [{"submission": "evil", "dataset": "chebi20", "augmentation": w, "metric": m, "value": v}
            for w in (ORIGINAL, "kekule") for m, v in (("rouge1", 0.5), ("n_items", 3.0))]  # fmt: skip
    rows += [{"submission": "evil", "dataset": "chebi20", "augmentation": "kekule",
              "metric": f"rouge1_drop{e}", "value": v}
             for e, v in (("", 0.1), ("_low", 0.05), ("_high", 0.2))]  # fmt: skip

    class Data:
        def track_results(self, name):
            assert name == "captioning"
            return pd.DataFrame(rows)

        def order(self, ids):
            return sorted(ids)

        def name(self, sub):
            return evil

    lines = "\n".join(extension("captioning").track_sections(Data(), "chebi20", None))
    assert "<script>" not in lines and "0.500 (Δ 0.100 [0.050, 0.200])" in lines
    assert "Not ranked" in lines
    assert any("Not ranked" in line for line in extension("captioning").methodology())


def test_each_writing_reports_its_length_and_each_rewrite_its_levenshtein_ratio(chebi, tmp_path) -> None:
    """AMORE Table 7 from the strings asked: recomputed here by brute force on the whole strings."""
    from evaluators.tracks.captioning import writings

    root, records = chebi
    track = _track()
    rows, _ = _score(track, root, tmp_path / "out", lambda q: CONSTANT)
    asked = {q.request.id: q for q in track.questions(load_records("chebi20", root, limit=LIMIT))}
    by_writing: dict[str, dict[str, str]] = {}
    for q in asked.values():
        by_writing.setdefault(q.representation, {})[q.item] = q.shown
    for writing, texts in by_writing.items():
        assert rows[(writing, "mean_length")] == pytest.approx(sum(map(len, texts.values())) / len(texts))
        if writing == ORIGINAL:
            assert (writing, "levenshtein_ratio") not in rows
            continue
        original = by_writing[ORIGINAL]
        ratios = [_edit_distance(original[i], t) / len(original[i]) for i, t in texts.items()]
        assert rows[(writing, "levenshtein_ratio")] == pytest.approx(sum(ratios) / len(ratios))
    # Per molecule in the table, the original's cell empty.
    for row in _table(tmp_path / "out"):
        if row["augmentation"] == ORIGINAL:
            assert row["levenshtein_ratio"] == ""
        else:
            smiles = writings(next(r for r in records if r["id"] == row["id"]), 0)
            first, mine = smiles[ORIGINAL][1], smiles[row["augmentation"]][1]
            assert float(row["levenshtein_ratio"]) == pytest.approx(_edit_distance(first, mine) / len(first))


def _edit_distance(a: str, b: str) -> int:
    """The textbook dynamic programme (unit costs), the reference for the bit-parallel one."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def test_the_bit_parallel_edit_distance_is_the_textbook_one() -> None:
    import random

    from evaluators.tracks.captioning.strings import levenshtein_distance, levenshtein_ratio

    rng = random.Random(7)
    for _ in range(2000):
        a = "".join(rng.choice("CNO()=c1[]H") for _ in range(rng.randint(0, 70)))
        b = "".join(rng.choice("CNO()=c1[]H+") for _ in range(rng.randint(0, 120)))
        assert levenshtein_distance(a, b) == _edit_distance(a, b) == levenshtein_distance(b, a)
    assert levenshtein_distance("kitten", "sitting") == 3  # the textbook example
    # AMORE's ratio is a distance over the original's length (its Table 7: 0 without augmentation).
    assert levenshtein_ratio("CCO", "CCO") == 0.0 and levenshtein_ratio("CCO", "OCC") == pytest.approx(2 / 3)
    assert levenshtein_ratio("C", "[CH4]") == 4.0  # explicit hydrogens can move a string by more than 1
