"""Answer styles of the conformance corpus: how real models write each kind of answer, with the graded value.

Used by :mod:`leaderboard.tools.answer_corpus`, which crosses them with its molecules.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any


def canonical(smiles: str) -> str:
    """RDKit canonical SMILES (the corpus's expected value for structures)."""
    from rdkit import Chem

    mol = Chem.MolFromSmiles(smiles)
    assert mol is not None, smiles
    return Chem.MolToSmiles(mol)


def hill(smiles: str) -> str:
    """Hill formula of the molecule's element counts, charges dropped (as answers are normalised)."""
    from rdkit import Chem

    mol = Chem.AddHs(Chem.MolFromSmiles(smiles))
    counts = Counter(a.GetSymbol() for a in mol.GetAtoms())
    order = ["C", "H", *sorted(e for e in counts if e not in ("C", "H"))] if "C" in counts else sorted(counts)
    return "".join(f"{e}{counts[e] if counts[e] != 1 else ''}" for e in order if counts.get(e))


def latex_formula(formula: str) -> str:
    """``C2H6O`` → ``C_{2}H_{6}O``."""
    import re

    return re.sub(r"(\d+)", r"_{\1}", formula)


def unicode_formula(formula: str) -> str:
    """``C2H6O`` → ``C₂H₆O``."""
    return formula.translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


def mol_weight(smiles: str) -> float:
    """Average molecular weight, two decimals (what a model writes)."""
    from rdkit import Chem
    from rdkit.Chem import Descriptors

    return round(Descriptors.MolWt(Chem.MolFromSmiles(smiles)), 2)


def ring_count(smiles: str, aromatic: bool = False) -> int:
    """Return the number of rings (SSSR), or of aromatic rings, of ``smiles`` (RDKit)."""
    from rdkit import Chem
    from rdkit.Chem import rdMolDescriptors

    mol = Chem.MolFromSmiles(smiles)
    return int(rdMolDescriptors.CalcNumAromaticRings(mol) if aromatic else rdMolDescriptors.CalcNumRings(mol))


Style = Callable[[Any, int], tuple[str, Any, str] | None]


def _num(v: float) -> str:
    return f"{v:.2f}"


def _dash(s: str, dash: str) -> str:
    return s.replace("-", dash, 1) if s.startswith("-") else s


# --------------------------------------------------------------------------------------------------------
# Styles per kind: a function of (value to answer, index) → (completion, expected, why) or None (skip).
# ``value`` is the answer the entry's model means: a SMILES, a name row, a Hill formula, a bool, a float.


def smiles_styles(smiles: str, other: str, i: int) -> list[tuple[str, str, Any, str]]:
    """Return SMILES answers: (style, completion, expected, why)."""
    e = canonical(smiles)
    return [
        ("terse", smiles, e, ""),
        ("sentence", f"The SMILES is {smiles}.", e, ""),
        ("markdown-bold", f"**{smiles}**", e, ""),
        ("markdown-bullet", f"- SMILES: `{smiles}`", e, ""),
        ("latex-boxed", f"\\boxed{{{smiles}}}", e, "a LaTeX box holds the answer"),
        ("code-fence", f"```smiles\n{smiles}\n```", e, ""),
        (
            "cot-answer-line",
            f"The molecule contains {other} as a fragment; let me build it step by step.\n"
            f"Putting the pieces together gives the structure.\nAnswer: {smiles}",
            e,
            "reasoning names another molecule; the last Answer: line is the answer",
        ),
        ("hedged", f"I think it's probably {smiles}", e, "a hedge does not void a single answer"),
        ("refusal", "I cannot determine the structure from this information.", None, "refusal"),
        ("several", f"{smiles} or {other}", None, "two candidates, none marked: ambiguous"),
        ("leading-blank", f"\n\n{smiles}", e, ""),
        (
            "trailing-explanation",
            f"{smiles}\n\nThis follows from the name: each locant fixes a substituent.",
            e,
            "",
        ),
        (
            "answer-then-molecules",
            f"{smiles}\nIt can be made from {other} in two steps.",
            e,
            "the explanation names another molecule",
        ),
        ("tag", f"<answer>{smiles}</answer>", e, "ChemBench-style tag"),
        ("final-answer-bold", f"Reasoning...\n\n**Final answer:** {smiles}", e, ""),
        (
            "cot-corrected",
            f"Answer: {other}\nWait, that is wrong; recounting the carbons.\nAnswer: {smiles}",
            e,
            "the last marked answer wins",
        ),
    ]


def name_styles(row: tuple, other: tuple, i: int) -> list[tuple[str, str, Any, str]]:
    """Return name answers (expected: the molecule's canonical SMILES)."""
    name, smiles, _, _, _, synonym = row
    e = canonical(smiles)
    cap = name[:1].upper() + name[1:]
    return [
        ("terse", name, e, ""),
        ("sentence", f"The IUPAC name is {name}.", e, ""),
        ("markdown-bold", f"**{name}**", e, ""),
        ("markdown-bullet", f"* IUPAC name: {name}", e, ""),
        ("code-fence", f"```\n{name}\n```", e, ""),
        (
            "cot-answer-line",
            f"The SMILES has a chain; the longest chain gives the parent.\nAnswer: {name}",
            e,
            "",
        ),
        ("synonym-aside", f"{cap} ({synonym})", e, "a synonym in parentheses after a space is an aside"),
        ("refusal", "I'm not able to name this compound.", None, "refusal"),
        ("several", f"{name} or {other[0]}", None, "two candidates: ambiguous"),
        ("leading-blank", f"\n  \n{name}", e, ""),
        (
            "trailing-explanation",
            f"{name}\nThe parent chain is numbered from the end nearest the group.",
            e,
            "",
        ),
        (
            "clause",
            f"{name}, as the parent is numbered from the nearest substituent",
            e,
            "a clause after a comma and a space is not part of an IUPAC name",
        ),
        ("tag", f"<answer>{name}</answer>", e, ""),
        ("latex-boxed", f"\\boxed{{\\text{{{name}}}}}", e, "LaTeX text inside a box"),
        ("capitalised", cap, e, ""),
        ("hedged", f"I believe it is {name}", e, "a hedge does not void a single answer"),
    ]


def names_styles(row: tuple, second: tuple, other: tuple, i: int) -> list[tuple[str, str, Any, str]]:
    """Return answers that list two names (reactants and reagents; expected: both molecules as one set)."""
    a, b, c = row[0], second[0], other[0]
    e = canonical(f"{row[1]}.{second[1]}")
    return [
        ("dot-joined", f"{a}.{b}", e, "joined by '.', as asked"),
        ("semicolons", f"{a}; {b}", e, ""),
        ("and-sentence", f"The reactants are {a} and {b}.", e, "a lead-in naming the list is not a name"),
        ("bullet-list", f"- {a}\n- {b}", e, "a plain list is read whole"),
        ("numbered-list", f"Reactants:\n1. {a}\n2. {b}", e, "a plain list is read whole"),
        ("cot-answer-line", f"An ester comes from an acid and an alcohol.\nAnswer: {a}.{b}", e, ""),
        ("plus", f"{a} + {b}", e, ""),
        ("comma", f"{a}, {b}", e, "a comma and a space never sit inside an IUPAC name"),
        ("tag", f"<answer>{a}; {b}</answer>", e, ""),
        ("reversed", f"{b}.{a}", e, "a set: order does not matter"),
        ("several", f"{a}.{b} or {a}.{c}", None, "two candidate sets: ambiguous"),
        ("refusal", "I cannot determine the reactants.", None, "refusal"),
        ("unreadable-member", f"{a}; frobnicated {b}", None, "a name OPSIN cannot read voids the set"),
        ("smiles-instead", f"{row[1]}.{second[1]}", None, "SMILES where IUPAC names were asked"),
    ]


def formula_styles(formula: str, condensed: str, other: str, i: int) -> list[tuple[str, str, Any, str]]:
    """Return formula answers (expected: the Hill formula)."""
    rows = [
        ("terse", formula, formula, ""),
        ("sentence", f"The molecular formula is {formula}.", formula, ""),
        ("markdown-bold", f"**{formula}**", formula, ""),
        ("latex-dollar", f"${latex_formula(formula)}$", formula, "LaTeX subscripts"),
        ("latex-plain", latex_formula(formula), formula, "LaTeX subscripts without $"),
        ("unicode-subscripts", unicode_formula(formula), formula, ""),
        ("latex-boxed", f"\\boxed{{{formula}}}", formula, ""),
        ("code-fence", f"```\n{formula}\n```", formula, ""),
        (
            "cot-answer-line",
            f"Count the atoms: carbons first, then hydrogens (MW {i + 40}.1).\nAnswer: {formula}",
            formula,
            "reasoning contains a number",
        ),
        ("hedged", f"Probably {formula}", formula, ""),
        ("refusal", "Unknown", None, "refusal"),
        ("several", f"{formula} or {other}", None, "two candidates: ambiguous"),
        ("tag", f"<answer>{formula}</answer>", formula, ""),
        ("leading-blank", f"\n{formula}", formula, ""),
        (
            "answer-then-explanation",
            f"{formula}\nIt has a molar mass of about {i + 46}.07 g/mol.",
            formula,
            "",
        ),
        ("latex-ce", f"\\ce{{{formula}}}", formula, "mhchem"),
    ]
    import re

    underscored = re.sub(r"(\d+)", r"_\1", formula)
    rows.append(("latex-underscore", f"${underscored}$", formula, "C_2H_6O style"))
    if condensed:
        rows.append(("condensed", condensed, formula, "condensed formula: compared by element counts"))
    return rows


def label_styles(value: bool, task: str, i: int) -> list[tuple[str, str, Any, str]]:
    """Return label answers (expected: bool)."""
    yes, no = ("Yes", "No") if value else ("No", "Yes")
    word = yes.lower()
    rows = [
        ("terse", word, value, ""),
        ("capitalised-stop", f"{yes}.", value, ""),
        ("markdown-bold", f"**{yes}**", value, ""),
        ("true-false", "True" if value else "False", value, ""),
        ("latex-boxed", f"\\boxed{{\\text{{{yes}}}}}", value, ""),
        ("tag", f"<answer>{yes}</answer>", value, ""),
        (
            "cot-answer-line",
            f"First I check each criterion; {no.lower()} single criterion decides it alone.\nAnswer: {yes}",
            value,
            "reasoning contains the other word; the Answer: line decides",
        ),
        ("refusal", "I cannot determine this without more data.", None, "refusal"),
        ("not-applicable", "N/A", None, "N/A is no answer, not 'no'"),
        ("both", "yes or no", None, "both labels: ambiguous"),
        ("hedged", f"Probably {word}.", value, ""),
        ("leading-blank", f"\n\n{yes}", value, ""),
        (
            "trailing-explanation",
            f'{yes}.\nA first guess of "{no.lower()}" was wrong: each criterion was checked.',
            value,
            "only the answer line counts",
        ),
        ("full-width-colon", f"Answer：{yes}", value, "full-width colon"),
        ("nbsp", f"Answer:\u00a0{word}", value, "no-break space"),
        ("final-answer-bold", f"Reasoning about the structure...\n**Final answer: {yes}**", value, ""),
        ("yes-then-no", f"{yes}, or rather {no.lower()}.", None, "both labels in the final line: ambiguous"),
    ]
    if task == "lipinski":
        rows += [
            (
                "sentence",
                f"{yes}, it {'satisfies' if value else 'does not satisfy'} Lipinski's rule of five.",
                value,
                "",
            ),
            (
                "violations",
                "No violations." if value else "2 violations (MW > 500 and logP > 5).",
                value,
                "rule of five satisfied = at most one violation",
            ),
            ("violations-count", "0 violations" if value else "It has three violations.", value, ""),
            (
                "violations-one",
                "One violation (logP > 5), so it still passes." if value else "It violates two of the rules.",
                value,
                "one violation still satisfies the rule",
            ),
        ]
    else:
        rows.append(
            (
                "sentence",
                f"{yes}, the target molecule {'meets' if value else 'does not meet'} the criterion.",
                value,
                "",
            )
        )
    return rows


_COUNT_WORDS = ("no", "one", "two", "three", "four", "five", "six")


def count_styles(value: int, noun: str, i: int) -> list[tuple[str, str, Any, str]]:
    """Return count answers (expected: int; ``noun``: what is counted, e.g. ``aromatic rings``)."""
    word = _COUNT_WORDS[value] if value < len(_COUNT_WORDS) else str(value)
    return [
        ("terse", str(value), value, ""),
        ("sentence", f"It has {word} {noun}.", value, "a number word"),
        ("there-are", f"There are {value} {noun}.", value, ""),
        ("markdown-bold", f"**{value}**", value, ""),
        ("latex-boxed", f"\\boxed{{{value}}}", value, ""),
        ("tag", f"<answer>{value}</answer>", value, ""),
        ("cot-answer-line", f"Counting ring by ring: {value + 1} bonds close nothing new.\nAnswer: {value}",
         value, "the reasoning holds other numbers; the Answer: line decides"),
        ("word-capitalised", f"{word.capitalize()} {noun}.", value, "a number word"),
        ("range", f"{value} or {value + 1}", None, "alternatives: no answer"),
        ("fraction", f"{value}.5", None, "a count is a whole number"),
        ("negative", f"-{value + 1}", None, "a count is never negative"),
        ("refusal", "I cannot count the rings without a structure drawing.", None, "refusal"),
        ("leading-blank", f"\n\n{value}", value, ""),
        ("vague", "several", None, "not a number"),
    ]


def number_styles(value: float, unit: str, i: int) -> list[tuple[str, str, Any, str]]:
    """Return number answers (expected: the float as written)."""
    s = _num(value)
    neg = value < 0
    rows = [
        ("terse", s, float(s), ""),
        ("unit", f"{s} {unit}", float(s), "unit stripped"),
        ("sentence", f"The value is {s} {unit}.", float(s), ""),
        ("markdown-bold", f"**{s}**", float(s), ""),
        ("latex-dollar", f"${s}$ {unit}", float(s), ""),
        ("latex-boxed", f"\\boxed{{{s}}}", float(s), ""),
        ("code-fence", f"```\n{s}\n```", float(s), ""),
        (
            "cot-answer-line",
            f"At 298 K, similar compounds give about {_num(value + 1.5)}; adjusting for size...\nAnswer: {s}",
            float(s),
            "reasoning contains a temperature and another value",
        ),
        ("hedged", f"It might be about {s} {unit}", float(s), "a hedge with a value keeps the value"),
        ("refusal", "I cannot determine this.", None, "refusal"),
        ("several", f"{s} or {_num(value - 1.3)}", None, "two values: ambiguous"),
        ("range", f"between {s} and {_num(value - 1.0)}", None, "a range is not one value"),
        ("leading-blank", f"\n\n{s}", float(s), ""),
        (
            "answer-then-numbers",
            f"{s} {unit}\nFor comparison, a reference compound is {_num(value - 2.1)}.",
            float(s),
            "the explanation contains another number",
        ),
        ("tag", f"<answer>{s}</answer>", float(s), ""),
        ("nbsp", f"{s}\u00a0{unit}", float(s), "no-break space before the unit"),
        ("approx-sign", f"≈ {s}", float(s), ""),
        ("full-width-colon", f"Answer：{s}", float(s), "full-width colon"),
    ]
    if neg:
        rows += [
            ("unicode-minus", s.replace("-", "\u2212"), float(s), "U+2212 minus"),
            ("en-dash", _dash(s, "\u2013"), float(s), "en dash as minus"),
            ("spaced-minus", "- " + s[1:], float(s), "a space after the minus sign"),
            (
                ["figure-dash", "em-dash", "hyphen-u2010", "nb-hyphen"][i % 4],
                _dash(s, ["\u2012", "\u2014", "\u2010", "\u2011"][i % 4]),
                float(s),
                "a dash as minus",
            ),
        ]
    return rows


TRACK_TASKS: tuple[tuple[str, str, str], ...] = (
    # (track, task, kind)
    ("T3", "translation", "smiles"),
    ("T3", "translation", "name"),
    ("T3", "formula", "formula"),
    ("T3", "lipinski", "label"),
    ("T3", "hydration_free_energy", "number"),
    ("T3", "reaction", "smiles"),
    ("T4", "formula", "formula"),
    ("T4", "molecular_weight", "number"),
    ("T4", "lipinski", "label"),
    ("T4", "hydration_free_energy", "number"),
    ("T4", "aqueous_solubility", "number"),
    ("T4", "iupac_to_smiles", "smiles"),
    ("T4", "smiles_to_iupac", "name"),
    ("T4", "forward_reaction", "smiles"),
    ("T4", "forward_reaction", "formula"),
    ("T5", "hydration_free_energy", "number"),
    ("T5", "log_solubility", "number"),
    ("T5", "logp_gt_3", "label"),
    ("T5", "tpsa_gt_75", "label"),
    ("T5", "lipinski", "label"),
    ("T5", "hbd_gt_2", "label"),
    ("T5", "bace", "label"),
    ("T5", "reconstruction", "smiles"),
    # issue 33: appended, so that the rotation of styles over the earlier tasks is unchanged
    ("T4", "ring_count", "count"),
    ("T4", "aromatic_ring_count", "count"),
    ("T4", "clinical_toxicity", "label"),
    ("T4", "bbb_penetration", "label"),
    ("T4", "equivalence", "label"),
    ("T4", "similarity", "label"),
    ("T4", "functional_group", "label"),
    ("T3", "reaction_own_notation", "smiles"),
    ("T3", "reaction_own_notation", "name"),
    ("T3", "retrosynthesis", "smiles"),
    ("T3", "retrosynthesis_own_notation", "smiles"),
    ("T3", "retrosynthesis_own_notation", "names"),
    ("T4", "retrosynthesis", "smiles"),
)
UNITS = {"hydration_free_energy": "kcal/mol", "molecular_weight": "g/mol", "aqueous_solubility": "log units",
         "log_solubility": "(log S)"}  # fmt: skip


def reaction_styles(reactants: str, product: str, by: str, i: int) -> list[tuple[str, str, Any, str]]:
    """Return reaction answers as SMILES (expected: the product)."""
    e = canonical(product)
    a, b = reactants.split(".")
    plus = f" + {by}" if by else ""
    return [
        ("reaction-smiles", f"{reactants}>>{product}", e, "reaction SMILES: the product is after >>"),
        ("arrow", f"{a} + {b} → {product}{plus}", e, "the product is the first molecule after the arrow"),
        ("ascii-arrow", f"{a} + {b} -> {product}", e, ""),
        (
            "reaction-sentence",
            f"Reacting {a} with {b} gives {product}.",
            e,
            "a sentence names the reactants first; the product follows 'gives'",
        ),
        (
            "yields-sentence",
            f"The reaction of {a} and {b} yields {product}{' and ' + by if by else ''}.",
            e,
            "",
        ),
        ("last-molecule", f"From {a} and {b}: {product}", e, "the last molecule named is the product"),
    ]
