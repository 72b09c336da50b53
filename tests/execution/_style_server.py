r"""A local OpenAI-compatible API whose models know the chemistry and differ only in how they write it.

:class:`StyleServer` serves ``POST /v1/chat/completions`` and ``POST /v1/completions`` on
``127.0.0.1:<free port>`` (loopback only, never another address). Its models are named
``<answerer>-<style>``: ``correct-<style>`` answers every question of T3 (consistency), T4 (prompt
robustness) and T5 (identity-blinded) right, ``wrong-<style>`` answers the same question wrongly on purpose,
and ``<style>`` (:data:`STYLES`) is how the answer is written. The style-invariance test
(``tests/execution/test_style_invariance.py``) evaluates one endpoint submission per model.

The right answer (:class:`Oracle`) is computed from the prompt, as the reference tool user
``submissions/rdkit-opsin-tools/tools.py`` does (its prompt parsers and edit reader are reused, loaded from
its path): the molecule is read out of the question (RDKit for SMILES, OPSIN for IUPAC names, parsed in one
batch up front by :meth:`Oracle.learn`, any other name on demand), a T5 edit is applied with
:func:`evaluators.tracks.identity_blinded.edits.description_outcomes`, and RDKit gives the structure, formula,
molecular weight, Lipinski's rule, ring counts and T5's binary labels; T4's relational questions (same
molecule? more similar?) get the tool's own answer, and SELFIES and InChI are read back as the tool reads
them. Two things no tool computes come from tables the
test builds from the data sets — what a model that knows them would write: the IUPAC name of a structure
(the set's own name, which OPSIN parses back by construction) and a measured property of a structure
(T5's FreeSolv hydration free energy). A question whose answer cannot be reached is answered with a refusal
(:data:`IDK`, the same text in every style) and listed in :attr:`StyleServer.unreachable`.

Wrong answers (:func:`wrong`): the yes/no label negated, 5 added to a number, one carbon more in a formula,
another molecule for a structure (a methyl more on its first atom, else decane) and another molecule's name
(decane; undecane for decane itself). Every one still reads as an answer: it is scored wrong, not missing.

Styles (:func:`render`), each from the reader's conformance corpus (``evaluators/answers/conformance.jsonl``):
``terse``, ``sentence`` (``The SMILES is CCO.``), ``markdown-bold``, ``latex-boxed`` (``$\boxed{…}$``, names
and labels in ``\text{}``, formulas with ``_{n}`` subscripts), ``code-fence``, ``cot-answer-line``
(reasoning that names other molecules and numbers, then ``Answer: …``), ``leading-blank``, ``hedged``
(``I believe it is …``, ``Probably …``, ``It might be about …``), ``trailing-explanation`` (the answer first,
then a line with other molecules or numbers) and ``unicode`` (``Answer：…`` with a full-width colon, an
en-dash minus, subscript digits in formulas, no-break spaces in names).

:class:`OpsinMemo` remembers OPSIN's answers by exact name (the test installs it for the reader too).

Not a test module: tests import it as ``tests.execution._style_server``.
"""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.execution._state import REPO_ROOT

TOOLS = REPO_ROOT / "submissions" / "rdkit-opsin-tools" / "tools.py"
#: The ten answer styles (:func:`render`), each one submission per answerer.
STYLES = (
    "terse",
    "sentence",
    "markdown-bold",
    "latex-boxed",
    "code-fence",
    "cot-answer-line",
    "leading-blank",
    "hedged",
    "trailing-explanation",
    "unicode",
)
ANSWERERS = ("correct", "wrong")
#: What a model says to a question whose answer it cannot reach (a refusal: no answer, in every style).
IDK = "I don't know."
_SUBSCRIPT = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


class OpsinMemo:
    """OPSIN's answers remembered by exact name, in place of :func:`evaluators.answers.opsin.names_to_smiles`.

    A name not seen before goes to the real OPSIN (one Java process per call, as without the memo); a name
    seen before gets the same canonical SMILES (and the same refusal reason) without starting Java. The
    test installs it in place of the module's function before the evaluation, and the oracle parses the
    names the questions show through it: those are the names the correct answerer writes, so the host's
    scoring — in a child process forked from the test, which inherits the memo — reads them without
    starting Java forty times. Nothing else about the reading changes.

    Parameters
    ----------
    record : pathlib.Path, optional
        A file that gets one line (the number of names) per call that starts OPSIN, in this process or in a
        child forked from it: :meth:`java_calls` counts them.
    real : callable, optional
        The parser behind the memo (default :func:`evaluators.answers.opsin.names_to_smiles`).
    """

    def __init__(self, record: Path | None = None, real: Callable[..., list] | None = None) -> None:
        if real is None:
            from evaluators.answers.opsin import names_to_smiles as real
        self.real, self.record = real, record
        self._known: dict[Any, tuple[str | None, str | None]] = {}

    def java_calls(self) -> list[int]:
        """The calls that started OPSIN so far (each one's number of names), children's included."""
        if self.record is None or not self.record.is_file():
            return []
        return [int(line) for line in self.record.read_text().split()]

    def __call__(self, names: Sequence[str | None], *, problems: dict[int, str] | None = None,
                 **kwargs: Any) -> list[str | None]:  # fmt: skip
        misses = [n for n in dict.fromkeys(names) if n not in self._known]
        if misses:
            refused: dict[int, str] = {}
            if self.record is not None:
                with self.record.open("a") as handle:
                    handle.write(f"{len(misses)}\n")
            found = self.real(misses, problems=refused, **kwargs)
            for i, (name, smiles) in enumerate(zip(misses, found, strict=True)):
                self._known[name] = (smiles, refused.get(i))
        out = []
        for i, name in enumerate(names):
            smiles, why = self._known[name]
            if why is not None and problems is not None:
                problems[i] = why
            out.append(smiles)
        return out


def load_tools() -> ModuleType:
    """Load the reference tool user's module (``submissions/rdkit-opsin-tools/tools.py``) from its path."""
    spec = importlib.util.spec_from_file_location("_rdkit_opsin_tools", TOOLS)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Truth:
    """The right answer to one question, as a model writes it before styling.

    ``kind``: the answer kind (smiles, name, formula, label, number; ``""``: not a question of the tracks);
    ``text``: the answer (``None``: not reachable); ``unit``: a number's unit; ``smiles``: the canonical
    SMILES of the molecule the answer is about (for a wrong answer).
    """

    kind: str
    text: str | None
    unit: str = ""
    smiles: str = ""


def _canonical(mol: Any) -> str:
    from rdkit import Chem

    return Chem.MolToSmiles(mol)


class Oracle:
    """Computes the right answer of every T3, T4 and T5 question from its prompt (module docstring).

    Parameters
    ----------
    names_of : dict
        Canonical SMILES → an IUPAC name of that structure (a data set's names).
    measured : dict
        ``(task, canonical SMILES)`` → the measured value of that structure (T5's numeric tasks).
    parse_names : callable
        Names → canonical SMILES or ``None``, aligned (default: the host's OPSIN,
        :func:`evaluators.answers.opsin.names_to_smiles`).
    """

    def __init__(
        self,
        names_of: dict[str, str],
        measured: dict[tuple[str, str], float],
        parse_names: Callable[[list[str]], Sequence[str | None]] | None = None,
    ) -> None:
        if parse_names is None:
            from evaluators.answers.opsin import names_to_smiles as parse_names
        self.tools = load_tools()
        self.names_of, self.measured, self._parse_names = names_of, measured, parse_names
        self._structures: dict[str, str | None] = {}
        self._truths: dict[str, Truth] = {}
        self._lock = threading.Lock()

    def learn(self, names: Iterable[str]) -> None:
        """Parse the names the questions will show with OPSIN, in one batch."""
        with self._lock:
            todo = [n for n in dict.fromkeys(names) if n and n not in self._structures]
            if todo:
                self._structures.update(zip(todo, self._parse_names(todo), strict=True))

    def _mol(self, text: str, named: bool) -> Any:
        from rdkit import Chem

        if named:
            if text not in self._structures:
                self.learn([text])
            smiles = self._structures[text]
            return Chem.MolFromSmiles(smiles) if smiles else None
        return Chem.MolFromSmiles(text)

    def truth(self, prompt: str) -> Truth:
        """Return the right answer of ``prompt`` (cached per prompt: every model is asked the same)."""
        with self._lock:
            known = self._truths.get(prompt)
        if known is None:
            known = self._truth(prompt)
            with self._lock:
                self._truths[prompt] = known
        return known

    def _truth(self, prompt: str) -> Truth:
        from rdkit.Chem import Descriptors, rdMolDescriptors

        t = self.tools
        blinded = t._parse_t5(prompt)
        if blinded is not None:
            return self._blinded(*blinded)
        task, how, text, slots = t._parse_full(prompt)
        if task is None:
            return Truth("", None)
        named = how == "named"
        if task in ("equivalence", "similarity"):  # T4's relational questions: the tool's own answer
            # Names shown: three for "more similar?", the first of two for "this name and this SMILES?".
            first = (text.rpartition(" and ")[0],)
            names = () if not named else t._trio(text) if task == "similarity" else first
            shown = {n: self._mol(n, True) for n in names if n}
            return Truth("label", t._relational(task, how, text, shown) or None)
        kind = {"translation": "smiles" if named else "name", "formula": "formula", "lipinski": "label",
                "molecular_weight": "number", "ring_count": "count",
                "aromatic_ring_count": "count", "functional_group": "label"}[task]  # fmt: skip
        mol = self._mol(text, named) if how in ("named", "with the SMILES") else t._read(how, text)
        if mol is None:
            return Truth(kind, None)
        smiles = _canonical(mol)
        if task == "translation":
            return Truth(kind, smiles if named else self.names_of.get(smiles), smiles=smiles)
        if task == "formula":
            return Truth(kind, t._formula(mol), smiles=smiles)
        if task == "lipinski":
            return Truth(kind, t._lipinski(mol), smiles=smiles)
        if task == "functional_group":
            return Truth(kind, t._has_group(mol, slots.get("group")) or None, smiles=smiles)
        if kind == "count":
            rings = rdMolDescriptors.CalcNumAromaticRings if task == "aromatic_ring_count" else (
                rdMolDescriptors.CalcNumRings)
            return Truth(kind, str(rings(mol)), smiles=smiles)
        return Truth(kind, f"{Descriptors.MolWt(mol):.2f}", unit="g/mol", smiles=smiles)

    def _blinded(self, task: str, how: str, text: str, edit: str | None) -> Truth:
        from rdkit import Chem

        t = self.tools
        binary = task in t.BINARY_LABELS
        kind = "smiles" if task == "reconstruct" else "label" if binary else "number"
        mol = self._mol(text, how == "IUPAC name")
        if mol is None:
            return Truth(kind, None)
        if edit is not None:  # the source and the edit: the target is the one product of the edit
            reading = t.read_edit(edit)
            source = text if how == "SMILES" else _canonical(mol)  # a locant counts atoms as written
            products = t.description_outcomes(source, *reading) if reading is not None else frozenset()
            if len(products) != 1:
                return Truth(kind, None)
            mol = Chem.MolFromSmiles(next(iter(products)))
        smiles = _canonical(mol)
        if task == "reconstruct":
            return Truth(kind, smiles, smiles=smiles)
        if binary:
            return Truth(kind, "yes" if t.BINARY_LABELS[task](mol) else "no", smiles=smiles)
        value = self.measured.get((task, smiles))
        unit = "kcal/mol" if task == "hydration_free_energy" else ""
        return Truth(kind, None if value is None else f"{value:.2f}", unit=unit, smiles=smiles)


def _other_smiles(smiles: str) -> str:
    """Another molecule: a methyl more on the first atom, else decane (undecane for decane)."""
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")
    mol = Chem.MolFromSmiles("C" + smiles)
    if mol is not None and _canonical(mol) != smiles:
        return _canonical(mol)
    return "CCCCCCCCCCC" if smiles == "CCCCCCCCCC" else "CCCCCCCCCC"


def wrong(truth: Truth) -> str | None:
    """Return a wrong answer of the same kind as ``truth`` (module docstring); ``None`` when unreachable."""
    from evaluators.answers import formula_counts, formula_of

    text = truth.text
    if text is None:
        return None
    if truth.kind == "label":
        return "no" if text == "yes" else "yes"
    if truth.kind == "number":
        return f"{float(text) + 5:.2f}"
    if truth.kind == "count":
        return str(int(text) + 1)
    if truth.kind == "formula":
        counts = formula_counts(text)
        counts["C"] += 1
        return formula_of(counts)
    if truth.kind == "smiles":
        return _other_smiles(text)
    return "undecane" if truth.smiles == "CCCCCCCCCC" else "decane"  # a name: another molecule's


def render(style: str, kind: str, answer: str, unit: str = "") -> str:
    r"""Write ``answer`` (of answer kind ``kind``) in ``style`` (module docstring).

    Examples
    --------
    >>> render("sentence", "smiles", "CCO"), render("latex-boxed", "label", "yes")
    ('The SMILES is CCO.', '$\\boxed{\\text{Yes}}$')
    >>> render("unicode", "number", "-3.20", "kcal/mol")
    'Answer：–3.20 kcal/mol'
    """
    a, u = answer, f" {unit}" if unit else ""
    label = a.capitalize()
    lower = 1.5 if kind != "number" else float(a) - 1.5
    if style == "terse":
        return a
    if style == "sentence":
        return {"smiles": f"The SMILES is {a}.", "name": f"The IUPAC name is {a}.",
                "formula": f"The molecular formula is {a}.",
                "label": "Yes, it does." if a == "yes" else "No, it does not.",
                "number": f"The value is {a}{u}.", "count": f"The count is {a}."}[kind]  # fmt: skip
    if style == "markdown-bold":
        return f"**{label if kind == 'label' else a}**"
    if style == "latex-boxed":
        inner = {
            "name": f"\\text{{{a}}}",
            "label": f"\\text{{{label}}}",
            "formula": "".join(f"_{{{c}}}" if c.isdigit() else c for c in a).replace("}_{", ""),
        }
        return f"$\\boxed{{{inner.get(kind, a)}}}$"
    if style == "code-fence":
        return f"```{'smiles' if kind == 'smiles' else ''}\n{a}\n```"
    if style == "cot-answer-line":
        reasoning = {
            "smiles": "The molecule contains C1CCCCC1 as a fragment; let me build it step by step.\n"
                      "Putting the pieces together gives the structure.",
            "name": "The SMILES has a chain; the longest chain gives the parent, numbered from C1.",
            "formula": "Count the atoms: carbons first, then hydrogens (MW 46.1, like C2H6O).",
            "label": "First I check each criterion; no single criterion decides it alone, yes or no.",
            "number": f"Similar compounds give about {lower:.2f}; adjusting for size and polarity...",
            "count": "Walk the ring closures one by one, fused rings included (naphthalene has 2).",
        }[kind]  # fmt: skip
        return f"{reasoning}\nAnswer: {label if kind == 'label' else a}"
    if style == "leading-blank":
        return f"\n\n{a}"
    if style == "hedged":
        return {"smiles": f"I think it's probably {a}", "name": f"I believe it is {a}",
                "formula": f"Probably {a}", "label": f"Probably {a}.",
                "number": f"It might be about {a}{u}", "count": f"Probably {a}"}[kind]  # fmt: skip
    if style == "trailing-explanation":
        return {
            "smiles": f"{a}\n\nThis follows from the name: each locant fixes a substituent (compare CCO).",
            "name": f"{a}\nThe parent chain is numbered from the end nearest the group, 2 rings at most.",
            "formula": f"{a}\nCounted from the structure: 12 heavy atoms, about 180.2 g/mol.",
            "label": f"{label}.\nA first guess of \"{'no' if a == 'yes' else 'yes'}\" was wrong: each "
                     "criterion was checked.",
            "number": f"{a}{u}\nFor comparison, a reference compound is {lower:.2f}.",
            "count": f"{a}\nCounted ring by ring; benzene alone would be 1.",
        }[kind]  # fmt: skip
    if style == "unicode":
        shown = {"number": a.replace("-", "\u2013"), "formula": a.translate(_SUBSCRIPT),
                 "name": a.replace(" ", "\u00a0"), "label": label}.get(kind, a)  # fmt: skip
        return f"Answer：{shown}{u}"
    raise ValueError(f"unknown style {style!r}; known: {', '.join(STYLES)}")


class StyleServer:
    """The local API (module docstring); a context manager that starts and stops it.

    Attributes
    ----------
    requests : int
        Requests answered.
    unreachable : list of (model, prompt)
        Questions whose right answer the oracle could not reach (answered :data:`IDK`).
    unknown : list of str
        Prompts that are no question of T3, T4 or T5 (answered :data:`IDK`).
    """

    def __init__(self, oracle: Oracle) -> None:
        self.oracle = oracle
        self.requests = 0
        self.unreachable: list[tuple[str, str]] = []
        self.unknown: list[str] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The base URL a manifest gives (``http://127.0.0.1:<port>/v1``)."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> StyleServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def complete(self, model: str, prompt: str) -> str | None:
        """The completion of ``model`` for ``prompt``; ``None`` when no such model is served."""
        answerer, _, style = model.partition("-")
        if answerer not in ANSWERERS or style not in STYLES:
            return None
        truth = self.oracle.truth(prompt)
        with self._lock:
            self.requests += 1
            if not truth.kind:
                self.unknown.append(prompt)
            elif truth.text is None:
                self.unreachable.append((model, prompt))
        if truth.text is None:
            return IDK
        answer = truth.text if answerer == "correct" else wrong(truth)
        return render(style, truth.kind, answer, truth.unit)


def _handler(server: StyleServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's signature
            pass

        def _send(self, status: int, document: Any) -> None:
            raw = json.dumps(document).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_POST(self) -> None:  # noqa: N802 - the base's naming
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            chat = self.path.endswith("/chat/completions")
            if not chat and not self.path.endswith("/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            prompt = body["messages"][-1]["content"] if chat else body["prompt"]
            model = str(body.get("model", ""))
            text = server.complete(model, prompt)
            if text is None:
                self._send(404, {"error": {"message": f"model {model!r} not found"}})
                return
            choice: dict[str, Any] = {"index": 0, "finish_reason": "stop"}
            choice.update({"message": {"role": "assistant", "content": text}} if chat else {"text": text})
            usage = {"prompt_tokens": len(prompt) // 4, "completion_tokens": len(text) // 4 + 1}
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
            self._send(200, {"object": "chat.completion" if chat else "text_completion", "model": model,
                             "choices": [choice], "usage": usage})  # fmt: skip

    return Handler
