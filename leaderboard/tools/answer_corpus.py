"""Build the answer-reader conformance corpus (``evaluators/answers/conformance.jsonl``), deterministically.

Each entry is one completion as a model might write it for one task of tracks T3, T4 or T5, with the value
a careful chemist grading by hand would record (``expected``; ``null`` = no answer). Expected values come
from the molecule behind the entry (RDKit canonical SMILES, the Hill formula of RDKit's element counts, the
number and label as written), never from the reader under test. The corpus is a readable table of
molecules × answer styles, plus hand-written tricky cases (:data:`HAND`): every measured defect of the old
reader is one of them.

Run ``PYTHONPATH=. python -m leaderboard.tools.answer_corpus`` (needs RDKit and, to check that every name
entry is a name OPSIN reads, Java); it rewrites the jsonl and fails if a name does not read as its molecule.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from leaderboard.tools.answer_styles import (  # noqa: F401 - the styles, crossed with the molecules here
    TRACK_TASKS,
    UNITS,
    _dash,
    _num,
    canonical,
    count_styles,
    formula_styles,
    hill,
    label_styles,
    latex_formula,
    mol_weight,
    name_styles,
    names_styles,
    number_styles,
    reaction_styles,
    ring_count,
    smiles_styles,
    unicode_formula,
)

OUT = Path(__file__).resolve().parents[2] / "evaluators" / "answers" / "conformance.jsonl"

#: name (OPSIN reads it), SMILES, condensed formula (or ""), hydration free energy, log S, synonym.
MOLECULES: tuple[tuple[str, str, str, float, float, str], ...] = (
    ("ethanol", "CCO", "CH3CH2OH", -5.0, 1.1, "ethyl alcohol"),
    ("propan-2-ol", "CC(C)O", "(CH3)2CHOH", -4.74, 0.43, "isopropanol"),
    ("benzene", "c1ccccc1", "", -0.9, -1.64, "benzol"),
    ("acetic acid", "CC(=O)O", "CH3COOH", -6.69, 1.22, "ethanoic acid"),
    ("phenol", "Oc1ccccc1", "C6H5OH", -6.6, 0.0, "carbolic acid"),
    ("ethyl acetate", "CCOC(C)=O", "CH3COOCH2CH3", -2.94, -0.04, "ethyl ethanoate"),
    ("2-(2-hydroxyethoxy)ethanol", "OCCOCCO", "HOCH2CH2OCH2CH2OH", -9.3, 1.0, "diethylene glycol"),
    ("aniline", "Nc1ccccc1", "C6H5NH2", -5.49, -0.41, "aminobenzene"),
    ("toluene", "Cc1ccccc1", "C6H5CH3", -0.9, -2.21, "methylbenzene"),
    ("pyridine", "c1ccncc1", "", -4.69, 1.1, "azine"),
    ("propan-2-one", "CC(C)=O", "CH3COCH3", -3.8, 0.54, "acetone"),
    ("cyclohexane", "C1CCCCC1", "", 1.23, -3.1, "hexahydrobenzene"),
    ("benzoic acid", "OC(=O)c1ccccc1", "C6H5COOH", -7.0, -1.55, "benzenecarboxylic acid"),
    ("methanol", "CO", "CH3OH", -5.1, 1.57, "methyl alcohol"),
    ("acetonitrile", "CC#N", "CH3CN", -3.88, 1.38, "methyl cyanide"),
    ("2-methylpropan-1-ol", "CC(C)CO", "(CH3)2CHCH2OH", -4.5, 0.1, "isobutanol"),
    ("naphthalene", "c1ccc2ccccc2c1", "", -2.4, -3.6, "naphthene"),
    ("chlorobenzene", "Clc1ccccc1", "C6H5Cl", -1.12, -2.38, "phenyl chloride"),
    ("butan-1-ol", "CCCCO", "CH3(CH2)3OH", -4.72, 0.0, "n-butanol"),
    ("nitrobenzene", "[O-][N+](=O)c1ccccc1", "C6H5NO2", -4.12, -1.8, "nitrobenzol"),
    ("2-chloropropane", "CC(C)Cl", "(CH3)2CHCl", -0.25, -1.41, "isopropyl chloride"),
    ("1,2-dichloroethane", "ClCCCl", "ClCH2CH2Cl", -1.79, -1.06, "ethylene dichloride"),
)
#: reactants (SMILES, a dot between), product SMILES, a by-product SMILES or "".
REACTIONS: tuple[tuple[str, str, str], ...] = (
    ("CC(=O)O.OCC", "CCOC(C)=O", "O"),
    ("c1ccccc1.BrBr", "Brc1ccccc1", "Br"),
    ("CC(=O)Cl.N", "CC(N)=O", "Cl"),
    ("C=C.BrBr", "BrCCBr", ""),
    ("CC(=O)Cl.OCC", "CCOC(C)=O", "Cl"),
    ("Oc1ccccc1.CC(=O)OC(C)=O", "CC(=O)Oc1ccccc1", "CC(=O)O"),
    ("C=CC=C.C=C", "C1=CCCCC1", ""),
    ("CCBr.[OH-]", "CCO", "[Br-]"),
    ("CC=O.[BH4-]", "CCO", ""),
    ("OC(=O)c1ccccc1.CO", "COC(=O)c1ccccc1", "O"),
)



def build() -> list[dict[str, Any]]:
    """Every corpus entry, in a fixed order."""
    out: list[dict[str, Any]] = []

    def add(track: str, task: str, kind: str, style: str, completion: str, expected: Any, why: str) -> None:
        out.append({"track": track, "task": task, "kind": kind, "style": style, "completion": completion,
                    "expected": expected, "why": why})  # fmt: skip

    n = len(MOLECULES)
    for t, (track, task, kind) in enumerate(TRACK_TASKS):
        if kind == "smiles" and task in ("reaction", "reaction_own_notation", "forward_reaction"):
            for j, (reactants, product, by) in enumerate(REACTIONS):
                other = REACTIONS[(j + 3) % len(REACTIONS)][1]
                style, text, exp, why = smiles_styles(product, other, j)[(j * 3 + t) % 16]
                add(track, task, kind, style, text, exp, why)
                for style, text, exp, why in reaction_styles(reactants, product, by, j)[j % 3 :: 3]:
                    add(track, task, kind, style, text, exp, why)
            continue
        if kind == "formula" and task == "forward_reaction":
            for j, (reactants, product, by) in enumerate(REACTIONS[:6]):
                f = hill(product)
                fa, fb = (hill(r) for r in reactants.split("."))
                add(
                    track,
                    task,
                    kind,
                    "arrow",
                    f"{fa} + {fb} → {f}{' + ' + hill(by) if by else ''}",
                    f,
                    "the product is the first formula after the arrow",
                )
                style, text, exp, why = formula_styles(f, "", hill(REACTIONS[j + 1][1]), j)[(j * 5) % 17]
                add(track, task, kind, style, text, exp, why)
            continue
        for j in range(n):
            row, other = MOLECULES[j], MOLECULES[(j + 5) % n]
            if kind == "smiles":
                styles = smiles_styles(row[1], other[1], j)
            elif kind == "name":
                styles = name_styles(row, other, j)
            elif kind == "names":
                styles = names_styles(row, MOLECULES[(j + 1) % n], other, j)
            elif kind == "formula":
                styles = formula_styles(hill(row[1]), row[2], hill(other[1]), j)
            elif kind == "label":
                styles = label_styles(j % 2 == 0, task, j)
            elif kind == "count":
                aromatic = task == "aromatic_ring_count"
                noun = "aromatic rings" if aromatic else "rings"
                styles = count_styles(ring_count(row[1], aromatic), noun, j)
            else:
                value = {"hydration_free_energy": row[3], "molecular_weight": mol_weight(row[1]),
                         "aqueous_solubility": row[4], "log_solubility": row[4]}[task]  # fmt: skip
                styles = number_styles(value, UNITS[task], j)
            # Each (task, molecule) gets a few styles, rotating, so that every style appears for every kind.
            picks = 2 if kind in ("number", "label", "count") else 1
            for k in range(picks):
                style, text, exp, why = styles[(j * picks + k + t) % len(styles)]
                add(track, task, kind, style, text, exp, why)
    for entry in HAND:
        add(*entry)
    return out


# (track, task, kind, style, completion, expected, why): the measured defects and other tricky cases.
HAND: tuple[tuple[str, str, str, str, str, Any, str], ...] = (
    (
        "T3",
        "lipinski",
        "label",
        "violations",
        "No violations found; the molecule is drug-like.",
        True,
        "'No violations' means the rule is satisfied (old reader: no)",
    ),
    ("T4", "lipinski", "label", "violations-count", "0 violations", True, "old reader: no"),
    ("T5", "lipinski", "label", "violations-count", "2 violations", False, "two violations: not satisfied"),
    (
        "T4",
        "lipinski",
        "label",
        "violations",
        "It has only one violation (MW = 512), so yes.",
        True,
        "one violation is allowed",
    ),
    ("T3", "lipinski", "label", "sentence", "It does not satisfy the rule of five.", False, ""),
    ("T4", "lipinski", "label", "sentence", "The molecule satisfies Lipinski's rule of five.", True, ""),
    ("T5", "bace", "label", "not-applicable", "N/A", None, "old reader: no"),
    ("T5", "hbd_gt_2", "label", "not-applicable", "n/a", None, ""),
    ("T5", "tpsa_gt_75", "label", "refusal", "unknown", None, ""),
    ("T5", "logp_gt_3", "label", "both", "Yes. Actually no.", None, "yes then no in the final line"),
    (
        "T5",
        "logp_gt_3",
        "label",
        "cot-answer-line",
        "logP of benzene is about 2.1, so no for benzene itself.\n"
        "But the target has two more chlorines.\nAnswer: yes",
        True,
        "the last Answer: line wins over an earlier no",
    ),
    ("T3", "hydration_free_energy", "number", "en-dash", "–1.2", -1.2, "en dash minus (old: +1.2)"),
    ("T4", "hydration_free_energy", "number", "spaced-minus", "- 1.2", -1.2, "old: +1.2"),
    ("T5", "hydration_free_energy", "number", "unicode-minus", "−1.2 kcal/mol", -1.2, "U+2212"),
    ("T4", "aqueous_solubility", "number", "scientific", "1.2 × 10^-3", 0.0012, "old: 1.2"),
    ("T4", "aqueous_solubility", "number", "scientific", "1.2x10^-3", 0.0012, ""),
    ("T4", "aqueous_solubility", "number", "scientific", "1.2·10⁻³", 0.0012, "superscript exponent"),
    ("T5", "log_solubility", "number", "scientific", "1.2e-3", 0.0012, ""),
    ("T5", "log_solubility", "number", "scientific", "1.2 × 10<sup>-3</sup>", 0.0012, "HTML superscript"),
    ("T4", "aqueous_solubility", "number", "latex-scientific", "$1.2 \\times 10^{-3}$", 0.0012, ""),
    (
        "T3",
        "hydration_free_energy",
        "number",
        "name-then-value",
        "2-(2-hydroxyethoxy)ethanol: -8.2",
        -8.2,
        "locants are not the value (old: 2.0)",
    ),
    (
        "T4",
        "hydration_free_energy",
        "number",
        "condition",
        "ΔG(298 K) = -3.2",
        -3.2,
        "the temperature is not the value (old: 298)",
    ),
    ("T5", "hydration_free_energy", "number", "unit", "-3.2 kcal/mol", -3.2, ""),
    (
        "T4",
        "hydration_free_energy",
        "number",
        "unit-superscript",
        "-3.2 kcal mol⁻¹",
        -3.2,
        "the unit's exponent is not the value",
    ),
    ("T4", "molecular_weight", "number", "unit", "180.16 g/mol", 180.16, ""),
    ("T4", "molecular_weight", "number", "label-equals", "MW = 46.07 g/mol", 46.07, ""),
    (
        "T4",
        "molecular_weight",
        "number",
        "formula-then-value",
        "C6H12O6: 180.16 g/mol",
        180.16,
        "the formula's digits are not the value",
    ),
    ("T4", "aqueous_solubility", "number", "label-equals", "logS = -2.1", -2.1, ""),
    ("T5", "log_solubility", "number", "condition", "At 25 °C, log S = -2.1", -2.1, "temperature skipped"),
    ("T3", "hydration_free_energy", "number", "hedged", "It might be about -3.2 kcal/mol", -3.2, ""),
    ("T3", "hydration_free_energy", "number", "refusal", "I cannot determine this", None, ""),
    ("T4", "hydration_free_energy", "number", "refusal", "I'm not sure", None, ""),
    ("T5", "hydration_free_energy", "number", "refusal", "N/A", None, ""),
    (
        "T4",
        "molecular_weight",
        "number",
        "locant-name",
        "propan-2-ol has a molecular weight of 60.10 g/mol",
        60.1,
        "the locant 2 is not the value",
    ),
    ("T4", "hydration_free_energy", "number", "full-width-digits", "－３.２", -3.2, "full-width digits"),
    ("T3", "translation", "smiles", "latex-boxed", "\\boxed{CCO}", "CCO", "old: rejected"),
    ("T4", "iupac_to_smiles", "smiles", "several", "CCO or CCN", None, "ambiguous"),
    ("T4", "iupac_to_smiles", "smiles", "hedged", "I think it's probably CCO", "CCO", ""),
    (
        "T3",
        "reaction",
        "smiles",
        "reaction-sentence",
        "The aldehyde CC=O is reduced by sodium borohydride to give CCO.",
        "CCO",
        "reactant named first (old: longest token, CC=O)",
    ),
    (
        "T4",
        "forward_reaction",
        "smiles",
        "reaction-sentence",
        "Starting from CC(=O)Cl, reaction with ammonia yields CC(N)=O",
        "CC(N)=O",
        "old: the reactant",
    ),
    (
        "T4",
        "forward_reaction",
        "smiles",
        "cot-answer-line",
        "The acid chloride CC(=O)Cl reacts with the amine.\nThe leaving group is Cl.\n\nAnswer: CC(N)=O",
        "CC(N)=O",
        "",
    ),
    ("T5", "reconstruction", "smiles", "markdown-bold-label", "**SMILES:** `Oc1ccccc1`", "Oc1ccccc1", ""),
    ("T3", "formula", "formula", "latex-dollar", "$C_2H_6O$", "C2H6O", "old: rejected"),
    ("T4", "formula", "formula", "latex-plain", "C_{2}H_{6}O", "C2H6O", "old: rejected"),
    ("T3", "formula", "formula", "condensed", "C2H5OH", "C2H6O", "old: rejected"),
    ("T4", "formula", "formula", "condensed", "CH3CH2OH", "C2H6O", ""),
    ("T3", "formula", "formula", "condensed", "CH3COOH", "C2H4O2", ""),
    ("T4", "formula", "formula", "condensed", "(CH3)2CHOH", "C3H8O", "a group with a multiplier"),
    ("T3", "formula", "formula", "smiles-not-formula", "CCO", None, "a SMILES is not a molecular formula"),
    ("T4", "formula", "formula", "sentence", "Ethanol has the molecular formula C2H6O.", "C2H6O", ""),
    ("T4", "formula", "formula", "charged", "C2H3O2-", "C2H3O2", "charge dropped"),
    ("T3", "translation", "name", "synonym-aside", "Ethanol (ethyl alcohol)", "CCO", "old: rejected"),
    (
        "T4",
        "smiles_to_iupac",
        "name",
        "locant-parentheses",
        "2-(2-hydroxyethoxy)ethanol",
        "OCCOCCO",
        "IUPAC parentheses are kept",
    ),
    ("T4", "smiles_to_iupac", "name", "refusal", "I cannot name this molecule.", None, ""),
    (
        "T4",
        "image_to_smiles",
        "smiles",
        "image-description",
        "The image shows a benzene ring bearing a hydroxyl group (phenol).\nAnswer: Oc1ccccc1",
        "Oc1ccccc1",
        "a vision model describes the drawing first",
    ),
    ("T4", "image_to_smiles", "smiles", "refusal", "I cannot see an image in your message.", None, ""),
    (
        "T4",
        "name_equivalence",
        "label",
        "reasoned-no",
        "The name describes propan-1-ol, but the SMILES CC(C)O is propan-2-ol.\nAnswer: no",
        False,
        "",
    ),
    (
        "T4",
        "image_to_iupac",
        "name",
        "image-description",
        "The drawing depicts a three-carbon chain with OH on the middle carbon.\nAnswer: propan-2-ol",
        "CC(C)O",
        "",
    ),
    ("T4", "image_to_iupac", "name", "markdown-bold", "**2-methylpropan-1-ol**", "CC(C)CO", ""),
    ("T3", "translation", "name", "several", "ethanol or methanol", None, "ambiguous"),
    (
        "T4",
        "smiles_to_iupac",
        "name",
        "cot-answer-line",
        "The chain has three carbons with OH on C2.\nFinal answer: propan-2-ol",
        "CC(C)O",
        "",
    ),
    (
        "T3",
        "lipinski",
        "label",
        "odd-text",
        "\x00\ud800yes\x00",
        True,
        "NUL bytes and a lone surrogate dropped",
    ),
    (
        "T4",
        "hydration_free_energy",
        "number",
        "long-cot",
        "Let me think. "
        + "The molecule has polar groups and a ring of 6 atoms at 298 K. " * 60
        + "\nAnswer: -4.1",
        -4.1,
        "a 4000-character completion",
    ),
)


def check_names(entries: list[dict[str, Any]]) -> None:
    """Fail unless every name entry with an expected value is a name OPSIN reads as that molecule."""
    from evaluators.answers.opsin import names_to_smiles

    rows = [e for e in entries if e["kind"] == "name" and e["expected"] is not None]
    names = sorted({r[0] for r in MOLECULES} | {"propan-2-ol", "2-(2-hydroxyethoxy)ethanol"})
    got = dict(zip(names, names_to_smiles(names), strict=True))
    bad = [n for n in names if got[n] is None]
    assert not bad, f"OPSIN does not read {bad}"
    assert rows


def main() -> int:
    """Write the corpus (one JSON object a line) and check its names."""
    entries = build()
    check_names(entries)
    with OUT.open("w", encoding="utf-8") as handle:
        for e in entries:
            # Readable Unicode, except where a lone surrogate cannot be written as UTF-8 (then escaped).
            odd = any(0xD800 <= ord(c) <= 0xDFFF for c in e["completion"])
            handle.write(json.dumps(e, ensure_ascii=odd) + "\n")
    print(f"{len(entries)} entries → {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
