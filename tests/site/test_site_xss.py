"""Stored XSS on the public site: whatever a submission controls shows as text, never as markup.

Untrusted text is every manifest string (name, authors, contact, license, url, description, training data,
the model source's keys and values, options, tokenizer prompt prefix …), the failure reason a container
writes, every field of a run record (``runs.json``), the free-text columns of a track's per-item table
(``item_ranks``: ``id``, ``original``, ``augmented``) and the security suite's table. It reaches a page only
through :mod:`leaderboard.markdown`, one escaping function per context. These tests audit the *built* HTML
(``mkdocs build --strict``), parsed with the standard library's ``html.parser``:

- no element or attribute came from the input: no ``on*`` attribute, no ``script`` element but the site's
  own (``src`` under ``javascripts/`` or ``assets/``, JSON data, the theme's inline scripts without the
  canary), no ``iframe``/``object``/``embed``/``base``…, no ``javascript:``/``data:`` URL, no class, id,
  attribute name or style from an attribute list; plotly strings and the search index are audited too;
- the input still shows as text (the model's name on its page, the quoted manifest, an item id).

``test_escapes_render_as_text`` checks the escaping functions alone under Python-Markdown with the
extensions of ``mkdocs.yml`` (fast, many examples); ``test_hostile_site`` builds whole sites with a
different hostile string in every field at once (a few examples: each one generates and builds a site);
``test_vector_*`` are the four reported vectors, deterministic.
"""

from __future__ import annotations

import itertools
import json
import re
import tempfile
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import markdown
import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from leaderboard.markdown import cell, code, esc, fenced, link, table, url
from leaderboard.site.build import build_site, generate_pages, write_exports
from leaderboard.site.pages.security import CASE_KEYS, write_security_table
from leaderboard.text import visible
from tests.site import _builders as b

#: Marks what an attacker would run or name: no tag, attribute name, class, style or script may hold it.
CANARY = "xss1337"
CALL = f"{CANARY}()"
#: The id an attribute list would set (upper case: a heading's own id, its slug, is lower case).
ID_CANARY = CANARY.upper()

#: Known-nasty fragments: HTML, attribute lists at line ends, code and link breakouts, entities, comments,
#: CDATA ends, bidi overrides, line breaks, block syntax, Markdown's and Python-Markdown's own placeholders.
NASTY = (
    f"<script>{CALL}</script>",
    f"<img src=x onerror={CALL}>",
    f"<svg/onload={CALL}>",
    f"<iframe src=javascript:{CALL}></iframe>",
    f'"><img src=x onerror={CALL}>',
    f"<a href=javascript:{CALL}>a</a>",
    f"<b class={CANARY} style=color:red data-{CANARY}=1>b</b>",
    f"<{CANARY}>",
    f"<details open ontoggle={CALL}>",
    f'<div markdown="1">*{CANARY}*</div>',
    f"<style>body{{background:url({CANARY})}}</style>",
    f"x {{: onclick={CALL} }}",
    f"x {{#{ID_CANARY} .{CANARY} onmouseover={CALL} }}",
    f'x {{: style="color:red" data-{CANARY}=1 }}',
    f"{{: .{CANARY} }}",
    f"](javascript:{CALL})",
    f"[a](javascript:{CALL})",
    f"![a](javascript:{CALL})",
    f"<javascript:{CALL}>",
    f"<https://example.org/{CANARY}>",
    "https://example.org/a_b*c*",
    "`",
    "``",
    f"` <img src=x onerror={CALL}> `",
    f"\n````\n<img src=x onerror={CALL}>\n",
    "~~~",
    "|",
    "a | b",
    f"&lt;script&gt;{CALL}&lt;/script&gt;",
    f"&#60;img src=x onerror={CALL}&#62;",
    "&amp;",
    "&lt;",
    "&copy;",
    "<!--",
    "-->",
    "]]>",
    "<![CDATA[",
    "\u202e",
    "\u2028",
    "\n",
    "\r\n",
    "\t",
    "$$",
    "*_[]",
    "**b**",
    "\\",
    "# h",
    "- item",
    "1. item",
    "---",
    f'??? {CANARY} "t"',
    f'!!! {CANARY} "t"',
    "    indented",
    "> quote",
    "{{ x }}",
    "%{x}",
    "@maintainers",
    "\x02wzxhzdk:0\x03",
    "\x02klzzwxh:0\x03",
    "\x00",
)

_ALPHABET = st.characters(blacklist_categories=("Cs",))
#: One hostile string: a few nasty fragments and arbitrary text, often ending in an attribute list.
HOSTILE = st.builds(
    lambda parts, tail: "".join(parts) + tail,
    st.lists(st.one_of(st.sampled_from(NASTY), st.text(_ALPHABET, max_size=12)), min_size=1, max_size=4),
    st.sampled_from(["", "", f" {{: onclick={CALL} }}", f"{{#{ID_CANARY} .{CANARY} onmouseover={CALL}}}"]),
)

# ------------------------------------------------------------------------------------------------------
# The audit
# ------------------------------------------------------------------------------------------------------

_FORBIDDEN = {"iframe", "object", "embed", "frame", "frameset", "applet", "base", "portal"}
_URL_ATTRS = {"href", "src", "action", "formaction", "xlink:href", "data", "poster", "background", "srcset"}
_BAD_SCHEME = re.compile(r"(?:javascript|vbscript|data):", re.I)
_OWN_SCRIPT = re.compile(r"(?:\.\./|\./|/)*(?:javascripts|assets/javascripts)/[\w./-]+\.js")
_OWN_IMAGE = re.compile(r"(?:\.\./)*(?:data/molecules/[0-9a-f]+\.svg|assets/[\w./-]+)")
_STYLE = re.compile(r"text-align: (?:left|right|center);")
# Attributes whose values may carry input as text: image alt text, heading ids (toc slugs) and the links
# to them, and http(s) links (the model's URL).
_TEXT_ATTRS = {"alt", "id", "href"}


def norm(text: str) -> str:
    """``text`` as a page shows it: whitespace runs as one space, Python-Markdown's STX/ETX dropped."""
    return " ".join(text.replace("\x02", "").replace("\x03", "").split())


class Audit(HTMLParser):
    """Parse one HTML document (or fragment) and collect what came from the input.

    Parameters
    ----------
    where : str
        Name of the document in the problems.
    scripts : bool
        Whether the document may hold the site's own scripts (a page) or none (a search-index fragment).
    """

    def __init__(self, where: str, *, scripts: bool = True) -> None:
        super().__init__(convert_charrefs=True)
        self.where = where
        self.scripts = scripts
        self.problems: list[str] = []
        self.texts: list[str] = []
        self.headings: dict[str, list[str]] = {}
        self._raw: tuple[str, dict[str, str]] | None = None  # inside <script> or <style>
        self._raw_text: list[str] = []
        self._heading: str | None = None

    def _bad(self, what: str) -> None:
        self.problems.append(f"{self.where}: {what}")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = {k: v or "" for k, v in attrs}
        if tag in _FORBIDDEN or CANARY in tag:
            self._bad(f"<{tag}> element {attrs}")
        if tag in ("script", "style"):
            self._raw, self._raw_text = (tag, attr), []
            if tag == "script" and (
                not self.scripts or (attr.get("src") and not _OWN_SCRIPT.fullmatch(attr["src"]))
            ):
                self._bad(f"<script> {attrs}")
        if tag == "img" and not _OWN_IMAGE.fullmatch(attr.get("src", "")):
            self._bad(f"<img> not the site's own: {attrs}")
        if tag == "meta" and attr.get("http-equiv", "").lower() == "refresh":
            self._bad(f"<meta http-equiv=refresh> {attrs}")
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._heading = tag
            self.headings.setdefault(tag, []).append("")
        for name, value in attr.items():
            if name.startswith("on") or CANARY in name:
                self._bad(f"attribute {name}={value!r} on <{tag}>")
            if name in _URL_ATTRS and _BAD_SCHEME.match(re.sub(r"[\x00-\x20]+", "", value)):
                self._bad(f"URL {name}={value!r} on <{tag}>")
            if name == "style" and not _STYLE.fullmatch(value):
                self._bad(f"style={value!r} on <{tag}>")
            if name == "id" and value == ID_CANARY:
                self._bad(f"id={value!r} on <{tag}>")
            if name not in _TEXT_ATTRS and CANARY in value:
                self._bad(f"attribute {name}={value!r} on <{tag}> carries input")

    def handle_endtag(self, tag: str) -> None:
        if self._raw is not None and tag == self._raw[0]:
            kind, attr = self._raw
            body = "".join(self._raw_text)
            self._raw = None
            if kind == "script" and attr.get("type") == "application/json":
                try:
                    json.loads(body)
                except ValueError:
                    self._bad(f"JSON script that does not parse: {body[:200]!r}")
            elif CANARY in body:
                self._bad(f"<{kind}> holds input: {body[:200]!r}")
        if tag == self._heading:
            self._heading = None

    def handle_data(self, data: str) -> None:
        if self._raw is not None:
            self._raw_text.append(data)
            return
        self.texts.append(data)
        if self._heading is not None:
            self.headings[self._heading][-1] += data

    def handle_comment(self, data: str) -> None:
        if CANARY in data:
            self._bad(f"comment holds input: {data[:200]!r}")

    def unknown_decl(self, data: str) -> None:
        self._bad(f"declaration <![{data[:200]}]>")

    @property
    def text(self) -> str:
        """The document's text (scripts and styles left out), normalised."""
        return norm("".join(self.texts))


def audit(html_text: str, where: str, *, scripts: bool = True) -> Audit:
    """Parse and audit one HTML document."""
    parser = Audit(where, scripts=scripts)
    parser.feed(html_text)
    parser.close()
    return parser


_PLOTLY_TAGS = {"br", "extra", "b", "i", "sup", "sub"}


class _PlotlyAudit(HTMLParser):
    """Tags in a plotly string (plotly renders a small HTML subset in names, titles and hover text)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _PLOTLY_TAGS or attrs:
            self.problems.append(f"<{tag} {attrs}>")


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [*_strings(k), *_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def audit_site(public: Path) -> tuple[list[str], dict[str, Audit]]:
    """Audit every page, the search index and every figure of a built site; return problems and pages."""
    problems: list[str] = []
    pages = {}
    for page in sorted(public.rglob("*.html")):
        rel = page.relative_to(public).as_posix()
        pages[rel] = audit(page.read_text(encoding="utf-8"), rel)
        problems += pages[rel].problems
    index = public / "search" / "search_index.json"
    for i, doc in enumerate(json.loads(index.read_text(encoding="utf-8"))["docs"]):
        for key in ("title", "text"):
            problems += audit(
                str(doc.get(key, "")), f"search_index.json docs[{i}].{key}", scripts=False
            ).problems
    for fig in sorted((public / "data" / "plots").glob("*.json")):
        for s in _strings(json.loads(fig.read_text(encoding="utf-8"))):
            parser = _PlotlyAudit()
            parser.feed(s)
            problems += [f"data/plots/{fig.name}: {p} in {s[:120]!r}" for p in parser.problems]
    return problems, pages


# ------------------------------------------------------------------------------------------------------
# The escaping functions alone, under mkdocs.yml's Markdown extensions
# ------------------------------------------------------------------------------------------------------


def _mkdocs_markdown() -> markdown.Markdown:
    config = yaml.safe_load((b.REPO_ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    names, configs = [], {}
    for ext in config["markdown_extensions"]:
        name, options = next(iter(ext.items())) if isinstance(ext, dict) else (ext, {})
        names.append(name)
        configs[name] = options or {}
    return markdown.Markdown(extensions=names, extension_configs=configs)


_MD = _mkdocs_markdown()


def render(source: str) -> Audit:
    """Render Markdown as the site does and audit it."""
    _MD.reset()
    return audit(_MD.convert(source), repr(source[:200]), scripts=False)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(s=HOSTILE)
def test_escapes_render_as_text(s: str) -> None:
    """Every context function renders any string as exactly its text, with nothing interpreted."""
    assume(norm(s))
    shown = norm(s)
    cases: list[tuple[str, str]] = [
        (esc(s), norm(s)),
        (f"# {esc(s)}", norm(s)),
        (f"### run · {esc(s)}", norm(f"run · {s}")),
        (f'!!! failure "Failed"\n    {esc(s)}', norm(f"Failed {s}")),
        (f"- {esc(s)}", norm(s)),
        (f"**{esc(s)}** · {code(s)}", norm(f"{s} · {shown}")),
        (table(["h"], [[cell(s)]]), norm(f"h {shown}")),
        (table(["h", "i"], [[code(s), link(s, "x.md")]]), norm(f"h i {shown} {s}")),
        (f"-   ![{esc(s)}](data/molecules/0a1b.svg){{ loading=lazy }}\n\n    {code(s)}", shown),
        (fenced(s, "yaml"), s.replace("\x02", "").replace("\x03", "")),
    ]
    for source, expected in cases:
        page = render(source)
        assert page.problems == []
        assert page.text.removesuffix("¶").strip() == norm(expected), source
    autolink = render(url(s))
    assert autolink.problems == []


@pytest.mark.parametrize("text", ["- a", "+ a", "1. a", "2) a", f'??? {CANARY} "t"', "~~~", "---", ": a"])
def test_block_syntax_at_a_line_start_is_text(text: str) -> None:
    """Escaped text that starts a line (a description, a failure reason) opens no list, details or fence."""
    for source in (esc(text), f'!!! failure "Failed"\n    {esc(text)}'):
        _MD.reset()
        html_text = _MD.convert(source)
        assert not re.search(r"<(ul|ol|li|details|pre|hr|dl)\b", html_text), html_text
        assert render(source).text.endswith(text)


def test_url_is_an_http_link_or_text() -> None:
    """A model's URL links only with http(s); anything else is text."""
    assert url("https://example.org/a_b") == "<https://example.org/a_b>"
    for bad in (f"javascript:{CALL}", f"https://x.org/<img src=x onerror={CALL}>", "https://x.org/a b"):
        assert not url(bad).startswith("<")
        assert render(url(bad)).problems == []


# ------------------------------------------------------------------------------------------------------
# A whole site with a hostile string in every field
# ------------------------------------------------------------------------------------------------------

IDS = ("zeta", "alpha", "mu")
N_ITEMS = 8
Draw = Callable[[str], str]


def _submissions(draw: Draw) -> list[dict]:
    """Manifest records with a hostile string in every text field."""
    records = b.submissions(list(IDS))
    for rec in records:
        field = f"submissions[{rec['id']}]"
        for key in ("name", "contact", "license", "url", "description", "architecture", "pooling", "adapter"):
            rec[key] = draw(f"{field}.{key}")
        rec["authors"] = [draw(f"{field}.authors[0]"), draw(f"{field}.authors[1]")]
        rec["training_data"] = [draw(f"{field}.training_data[0]")]
        rec["source"] = {
            "source": "huggingface",
            "id": draw(f"{field}.source.id"),
            "revision": draw(f"{field}.source.revision"),
            draw(f"{field}.source key"): draw(f"{field}.source value"),
        }
        rec["capabilities"] = ["embed", draw(f"{field}.capabilities[1]")]
        rec["tracks"] = ["amore", draw(f"{field}.tracks[1]")]
    return records


def _runs(draw: Draw) -> pd.DataFrame:
    """Run records with hostile provenance, two failed runs with hostile reasons, one with a hostile key."""
    runs = b.runs()
    for col in ("run_id", "image_tag", "image_id", "benchmark_version", "data_hash", "model_revision",
                "runner", "git_commit", "started_at"):  # fmt: skip
        runs[col] = draw(f"runs.{col}")
    runs["hardware"] = [{draw("runs.hardware key"): draw("runs.hardware value")}] * len(runs)
    failed = runs["status"] == "FAILED"
    runs.loc[failed, "reason"] = draw("runs[mu].reason") + "\n" + draw("runs[mu].reason, line 2")
    extra = b.run("alpha", draw("runs[extra].dataset"), "FAILED", draw("runs[extra].reason"),
                  track=draw("runs[extra].track"))  # fmt: skip
    return pd.concat([runs, pd.DataFrame([extra])], ignore_index=True)


def _item_ranks(draw: Draw) -> tuple[pd.DataFrame, list[str]]:
    """The per-item table with hostile ids and strings, and the ids (every model misses the last one)."""
    ids: list[str] = []
    for i in range(N_ITEMS):
        value = draw(f"item_ranks.id[{i}]")
        ids.append(value if value not in ids else f"{value} {i}")
    items = b.item_ranks(
        {d: [f"m{i}" for i in range(N_ITEMS)] for d in b.DATASETS}, N_ITEMS, worst=N_ITEMS - 1
    )
    items["id"] = items["id"].map({f"m{i}": v for i, v in enumerate(ids)})
    variant = draw("item_ranks.augmentation")  # a key column the container writes, shown as a column name
    variant = variant if variant not in b.AUGMENTATIONS else f"{variant} x"
    items["augmentation"] = items["augmentation"].replace("random_order", variant)
    # mu misses items 2..7 and alpha items 5..7; the explorer lists and draws them.
    items.loc[items["id"] == ids[6], "original"] = draw("item_ranks.original")
    items.loc[items["id"] == ids[7], "augmented"] = draw("item_ranks.augmented")
    items.loc[(items["id"] == ids[5]) & (items["augmentation"] == "kekule"), "augmented"] = draw(
        "item_ranks.augmented (kekule)"
    )
    return items, ids


def _raw_scalar(text: str) -> str:
    """``text`` as a YAML double-quoted scalar whose lines start at column 0, as a hand-written file may.

    Each line of ``text`` is one physical line (a blank line between them: YAML folds it to a line
    break), so a line of backticks in the value is a line of backticks in the file the page quotes.
    """
    lines = []
    for line in text.split("\n")[:50]:
        quoted = yaml.safe_dump(line, default_style='"', width=float("inf"), allow_unicode=True)
        quoted = quoted.strip().removesuffix("...").strip()[1:-1]
        lines.append(f" {quoted}" if quoted.startswith(("---", "...")) else quoted)  # not a document marker
    return '"' + "\n\n".join(lines) + '"'


def _manifest(draw: Draw, folder: Path) -> str:
    """A valid manifest whose free-text fields are hostile, quoted by the "How to submit" page."""
    name = draw("manifest.name")[:200] or "x"
    data = {
        "id": "evil",
        "name": name,
        "authors": [draw("manifest.authors[0]")[:200] or "x"],
        "contact": draw("manifest.contact")[:200].ljust(3, "."),
        "license": draw("manifest.license")[:100] or "x",
        "url": ("https://example.org/" + "".join(draw("manifest.url").split()))[:500],
        "model": {
            "source": "huggingface",
            "id": "org/evil",
            "revision": "a" * 40,
            "architecture": "encoder",
            "capabilities": ["embed"],
        },
        "tokenizer": {"max_length": 512, "prompt_prefix": draw("manifest.tokenizer.prompt_prefix")[:1000]},
        "options": {draw("manifest.options key"): draw("manifest.options value")},
        "training_data": [draw("manifest.training_data[0]")[:500]],
    }
    text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    # A line of 4 to 6 backticks between two hostile paragraphs: the page's code block must hold.
    before, after = draw("manifest.description")[:1500], draw("manifest.description, after")[:1500]
    description = f"{before}\n{'`' * (4 + len(before) % 3)}\n{after}"
    text += f"description: {_raw_scalar(description)}\n"
    (folder / "evil").mkdir(parents=True)
    (folder / "evil" / "submission.yaml").write_text(text, encoding="utf-8")
    return name


def build_hostile_site(tmp: Path, draw: Draw, manifest: str | None = None) -> tuple[Path, dict[str, str]]:
    """Export, generate and build a small site with ``draw(field)`` in every untrusted field.

    ``manifest`` is the text of the manifest that "How to submit" quotes (default: one with hostile fields,
    written by :func:`_manifest`); it must be valid, with id ``evil`` and name ``manifest.name``.

    Returns the built site and the texts that must show: ``name:<id>`` (on the model's page), ``manifest``
    (the quoted manifest's name, on "How to submit") and ``item`` (the item every model misses, on mu's page).
    """
    root, site = b.repo(tmp)
    subs = _submissions(draw)
    items, ids = _item_ranks(draw)
    write_exports(
        b.results(b.BASE_SCORE),
        _runs(draw),
        subs,
        site,
        tables={"item_ranks": items, "recall_at_k": b.curves(list(IDS), "chebi20")},
    )
    case = {k: draw(f"security.{k}") for k in CASE_KEYS if k != "contained"}
    write_security_table([{**case, "contained": False}], site / "data")
    if manifest is None:
        manifest_name = _manifest(draw, root / "submissions")
    else:
        manifest_name = draw("manifest.name")
        (root / "submissions" / "evil").mkdir(parents=True)
        (root / "submissions" / "evil" / "submission.yaml").write_text(manifest, encoding="utf-8")
    generate_pages(site, repo_root=root)
    public = build_site(root, strict=True)
    shown = {f"name:{rec['id']}": rec["name"] for rec in subs}
    return public, {**shown, "manifest": manifest_name, "item": ids[-1]}


def check_site(public: Path, shown: dict[str, str]) -> None:
    """Assert that nothing in the site came from the input and that the input shows as text."""
    problems, pages = audit_site(public)
    assert problems == [], "\n".join(problems[:40])
    for sub in IDS:
        name = shown[f"name:{sub}"]
        heading = pages[f"submissions/{sub}/index.html"].headings["h1"][0]
        # The exports show control characters as visible escapes (leaderboard.text.visible), so does the page.
        assert norm(heading).removesuffix("¶").strip() == (norm(visible(name)) if name else sub)
    assert norm(shown["manifest"]) in pages["how-to-submit/index.html"].text
    assert norm(visible(shown["item"])) in pages["submissions/mu/index.html"].text


@settings(
    max_examples=10,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_hostile_site(data: st.DataObject) -> None:
    """A different hostile string in every field of one site: the built pages hold only its text."""
    with tempfile.TemporaryDirectory(prefix="chemrobust-xss-") as tmp:
        public, shown = build_hostile_site(Path(tmp), lambda field: data.draw(HOSTILE, label=field))
        check_site(public, shown)


# ------------------------------------------------------------------------------------------------------
# The reported vectors, deterministic
# ------------------------------------------------------------------------------------------------------

ATTR_LIST = f" {{: onclick={CALL} .{CANARY} }}"
NAME = f"Evil model{ATTR_LIST}"
REASON = f"boom <img src=x onerror={CALL}>{ATTR_LIST}"
ITEM = f"C` <img src=x onerror={CALL}> `C{ATTR_LIST}"
# A double-quoted scalar may continue at column 0: the line of backticks closed the page's "````" fence.
MANIFEST = f"""id: evil
name: Evil manifest
description: "text
````

<img src=x onerror={CALL}>

more"
authors: [A]
contact: a@example.org
license: MIT
model:
  source: huggingface
  id: org/evil
  revision: {"a" * 40}
  architecture: encoder
  capabilities: [embed]
"""


@pytest.fixture(scope="module")
def vectors(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One site with the four vectors, every other field cycling through :data:`NASTY`."""
    nasty = itertools.cycle(NASTY)
    fixed = {
        "submissions[zeta].name": NAME,
        "submissions[zeta].license": f"MIT{ATTR_LIST}",
        "runs[mu].reason": REASON,
        "runs[mu].reason, line 2": "Traceback …",
        "item_ranks.id[7]": ITEM,
        "item_ranks.augmented": ITEM,
        "manifest.name": "Evil manifest",
    }
    public, shown = build_hostile_site(
        tmp_path_factory.mktemp("xss"), lambda field: fixed.get(field) or next(nasty), MANIFEST
    )
    problems, pages = audit_site(public)
    return {"public": public, "shown": shown, "problems": problems, "pages": pages}


def test_vectors_site_is_clean(vectors: dict) -> None:
    """Every nasty fragment, in every field: nothing from the input on any page, figure or search entry."""
    assert vectors["problems"] == [], "\n".join(vectors["problems"][:40])
    check_site(vectors["public"], vectors["shown"])


def test_vector_manifest_quoted_on_how_to_submit(vectors: dict) -> None:
    """A line of backticks in the quoted manifest no longer closes its code block (raw HTML followed)."""
    page = vectors["pages"]["how-to-submit/index.html"]
    assert page.problems == []
    assert norm(f"text ```` <img src=x onerror={CALL}> more") in page.text  # inside the code block


def test_vector_attribute_list_in_manifest_field(vectors: dict) -> None:
    """``{: onclick=… }`` ending the name and license: literal text in the heading and the table cells."""
    for rel in ("submissions/zeta/index.html", "submissions/index.html", "index.html"):
        page = vectors["pages"][rel]
        assert page.problems == []
        assert norm(NAME) in page.text, rel
    model = vectors["pages"]["submissions/zeta/index.html"]
    assert norm(model.headings["h1"][0]).removesuffix("¶").strip() == norm(NAME)
    assert norm(f"MIT{ATTR_LIST}") in model.text


def test_vector_attribute_list_in_failure_reason(vectors: dict) -> None:
    """A failure reason ending in an attribute list (and holding HTML) adds no attribute, no element."""
    for rel in ("index.html", "submissions/mu/index.html", "submissions/alpha/index.html"):
        assert vectors["pages"][rel].problems == [], rel
    overview = vectors["pages"]["index.html"].text
    assert "boom" in overview[overview.index("Failed runs") :]  # the reason is on the page
    assert "boom" in vectors["pages"]["submissions/mu/index.html"].text


def test_vector_item_output_in_inline_code(vectors: dict) -> None:
    """An item id or string with backticks and HTML stays inside its code element, as text."""
    page = vectors["pages"]["submissions/mu/index.html"]
    assert page.problems == []
    assert norm(ITEM) in page.text
    html_text = (vectors["public"] / "submissions" / "mu" / "index.html").read_text(encoding="utf-8")
    codes = re.findall(r"<code>(.*?)</code>", html_text, flags=re.S)
    assert any(CALL in c and "&lt;img" in c for c in codes)


# ------------------------------------------------------------------------------------------------------
# References (issue 35): the reference note and name on both boards, and the reference badge
# ------------------------------------------------------------------------------------------------------

REF_NAME = f"Ref <script>{CALL}</script> | **b** [a](javascript:{CALL}){ATTR_LIST}"
REF_NOTE = f'ceiling "<img src=x onerror={CALL}>" | `x` *y* [a](javascript:{CALL}) &lt;b&gt;{ATTR_LIST}'


@pytest.fixture(scope="module")
def references_site(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A site with a hostile reference on each board: ``ceiling`` (embedding) and ``floor`` (generative)."""
    root, site = b.repo(tmp_path_factory.mktemp("xss-references"))
    results = pd.concat(
        [
            b.results({**b.BASE_SCORE, "ceiling": 0.99}),
            b.consistency_results({"gen1": 0.8, "gen2": 0.4, "floor": 0.0}),
        ]
    )
    caps = {s: ["generate"] for s in ("gen1", "gen2", "floor")}
    cards = b.submissions([*IDS, "ceiling", "gen1", "gen2", "floor"], caps)
    for card in cards:
        if card["id"] in ("ceiling", "floor"):
            ref = card["id"]
            card.update(name=f"{REF_NAME} {ref}", reference=True, reference_note=f"{REF_NOTE} {ref}")
    write_exports(results, b.runs(), cards, site)
    generate_pages(site, repo_root=root)
    public = build_site(root, strict=True)
    problems, pages = audit_site(public)
    return {"public": public, "problems": problems, "pages": pages}


def test_reference_note_and_name_are_text_on_both_boards(references_site: dict) -> None:
    """A hostile reference name and note: no element or attribute from them, shown as text on each board."""
    assert references_site["problems"] == [], "\n".join(references_site["problems"][:40])
    overview = references_site["pages"]["index.html"].text
    start, end = overview.index("Embedding models¶"), overview.index("How to read the boards¶")
    boards = {
        "ceiling": overview[start : overview.index("Generative models¶")],
        "floor": overview[overview.index("Generative models¶") : end],
    }
    for ref, section in boards.items():
        assert norm(f"{REF_NAME} {ref}") in section, ref  # the reference row and the note's line
        assert norm(f"{REF_NOTE} {ref}") in section, ref
        other = "floor" if ref == "ceiling" else "ceiling"
        assert norm(f"{REF_NOTE} {other}") not in section  # each reference on its own board only
        page = references_site["pages"][f"submissions/{ref}/index.html"]
        assert page.problems == []
        assert "Reference (not ranked)" in page.text and norm(f"{REF_NOTE} {ref}") in page.text
        assert norm(page.headings["h1"][0]).removesuffix("¶").strip() == norm(f"{REF_NAME} {ref}")


def test_reference_badge_is_the_sites_own_markup(references_site: dict) -> None:
    """The badge carries no manifest text: one per board, a fixed class, title and label."""
    raw = (references_site["public"] / "index.html").read_text(encoding="utf-8")
    badges = re.findall(r'<span class="chemrobust-reference"[^>]*>[^<]*</span>', raw)
    assert badges == ['<span class="chemrobust-reference" title="reference: not ranked">reference</span>'] * 2
    assert CANARY not in "".join(re.findall(r'<span class="chemrobust-reference"[^>]*>', raw))
