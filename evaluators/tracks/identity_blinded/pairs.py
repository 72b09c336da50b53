"""Edit pairs of the identity-blinded diagnostic (T5): the pair search, the labels and the sampled groups.

Su et al., *Beyond Benchmark Accuracy: A Diagnostic Test for LLM Chemical Prediction*
(``../shared/papers/identity-blinded-reasoning-diagnostic.txt``). The pair is label-consistent when source
and target share the label (binary: same class; numeric: ``|y_t − y_s| ≤`` a threshold) and
label-inconsistent otherwise. The groups are sampled in equal numbers per task. One edit (cutting,
applying, describing, verifying) is :mod:`evaluators.tracks.identity_blinded.edits`.

Pipeline (pure functions; RDKit):

1. :func:`prepare_molecules` — canonical SMILES (stereo kept), single component, duplicates dropped.
2. :func:`find_pairs` — molecules sharing a core (its SMILES without stereo,
   :func:`evaluators.tracks.identity_blinded.edits.single_cuts`) and with different chains form ordered pairs
   (source → target) when ``max(|chain_s|, |chain_t|) ≤ max_changed`` (10) and the core has at least
   ``min_core_ratio`` (2) times as many heavy atoms as the larger chain, so the edit changes a small part of
   the molecule (``min_core_ratio = 1`` is the plain "core ≥ the larger part" rule). Of several cuts that
   relate the same two molecules the smallest change wins (fewest heavy atoms in the larger chain, then in
   both, then SMILES order). Each pair is described
   (:func:`evaluators.tracks.identity_blinded.edits.describe_edit`) and must pass
   :func:`evaluators.tracks.identity_blinded.edits.verify_pair`; a pair that fails is rejected, with its
   reason counted.
3. :func:`label_pairs` — numeric labels: FreeSolv hydration free energy (kcal/mol) and aqueous log
   solubility (log10 mol/L); binary: exact RDKit properties (:data:`BINARY_LABELS`). Consistency thresholds
   (:data:`NUMERIC_THRESHOLDS`) and the false source label of condition C3 (:func:`false_label`) are
   documented where they are defined.
4. :func:`balanced_groups` — equal, seeded consistent and inconsistent groups with at most one pair per
   target molecule, no molecule both a source and a target, and the same composition over target strata
   (class; quartile of a numeric label) in both groups, so a constant predictor scores the same in both
   (its collapse ratio is 1). :func:`named_first` applies it twice, so that a subset (the pairs asked as
   IUPAC names) is balanced on its own as well as the whole.

Real data (the ``edit-pairs`` set, ``leaderboard/data/edit_pairs.py``): FreeSolv 4128 verified pairs
(41 % consistent at 1 kcal/mol), solubility 5956 (29 % at 0.5 log units), the binary pool (FreeSolv,
solubility, ChEMBL drugs and samples; salts stripped) 9811 (logP > 3: 11 % inconsistent; TPSA > 75: 2.3 %),
MoleculeNet BACE 11 797 (measured labels; 2 647 label-inconsistent).
"""

from __future__ import annotations

import bisect
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rdkit import Chem

from evaluators.datasets.edit_pairs import BINARY_LABELS, NUMERIC_THRESHOLDS, is_consistent
from evaluators.notations.smiles import canonical_smiles
from evaluators.tracks.identity_blinded.edits import (
    Cut,
    Edit,
    EditPair,
    describe_edit,
    flat_smiles,
    single_cuts,
    verify_pair,
)

__all__ = [
    "BINARY_LABELS",
    "FALSE_LABEL_SHIFT_SD",
    "NUMERIC_THRESHOLDS",
    "LabelledPair",
    "PairSearch",
    "balanced_groups",
    "false_label",
    "find_pairs",
    "is_consistent",
    "label_pairs",
    "named_first",
    "prepare_molecules",
    "target_stratum",
]


def _parent(smiles: str) -> str | None:
    """Largest organic fragment, neutralised (RDKit ``rdMolStandardize``), as canonical SMILES."""
    from rdkit.Chem.MolStandardize import rdMolStandardize

    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        return None
    mol = rdMolStandardize.LargestFragmentChooser(preferOrganic=True).choose(mol)
    mol = rdMolStandardize.Uncharger().uncharge(mol)
    return canonical_smiles(Chem.MolToSmiles(mol))


def _canonical_record(smiles: Any) -> str | None:
    """Canonical SMILES of a data record, ``None`` for an unusable one.

    Stricter than :func:`evaluators.notations.smiles.canonical_smiles`: RDKit reads text after whitespace as
    the molecule's name, so ``"CCO junk"`` would pass as ethanol, and a blank string parses to no atoms.
    """
    if not isinstance(smiles, str) or not smiles or any(c.isspace() for c in smiles):
        return None
    return canonical_smiles(smiles) or None


def prepare_molecules(
    molecules: Iterable[tuple[str, str]], *, max_heavy: int = 60, parent: bool = False
) -> tuple[list[tuple[str, str]], Counter[str]]:
    """Canonicalise ``(id, smiles)`` records for the pair search; first record of a structure kept.

    Parameters
    ----------
    molecules : iterable of (str, str)
        Ids and SMILES.
    max_heavy : int
        Larger molecules are dropped.
    parent : bool
        Replace a multi-component record by its largest organic fragment, neutralised (salts stripped).
        Only for labels computed from the structure: a measured label belongs to the whole record.

    Returns
    -------
    list of (str, str), Counter
        The kept ``(id, canonical SMILES)`` and the dropped records by reason: ``unparseable``,
        ``several components``, ``more than {max_heavy} heavy atoms``, ``duplicate structure``; with
        ``parent``, ``salt stripped`` counts the records replaced by their parent (kept, not dropped).
    """
    kept: list[tuple[str, str]] = []
    seen: set[str] = set()
    dropped: Counter[str] = Counter()
    for ident, smiles in molecules:
        canon = _canonical_record(smiles)
        if canon is not None and parent and "." in canon:
            canon = _parent(canon)
            dropped["salt stripped"] += 1
        if canon is None:
            dropped["unparseable"] += 1
        elif "." in canon:
            dropped["several components"] += 1
        elif Chem.MolFromSmiles(canon).GetNumHeavyAtoms() > max_heavy:
            dropped[f"more than {max_heavy} heavy atoms"] += 1
        elif canon in seen:
            dropped["duplicate structure"] += 1
        else:
            seen.add(canon)
            kept.append((str(ident), canon))
    return kept, dropped


@dataclass(slots=True)
class PairSearch:
    """Result of :func:`find_pairs`: verified pairs and the counts of what was set aside."""

    pairs: list[EditPair]
    candidates: int
    rejected: Counter[str] = field(default_factory=Counter)
    cuts: int = 0


def find_pairs(
    molecules: Sequence[tuple[str, str]], *, max_changed: int = 10, min_core_ratio: float = 2.0
) -> PairSearch:
    """Find verified single-cut matched pairs (both directions) among canonical ``(id, smiles)`` molecules.

    Parameters
    ----------
    molecules : sequence of (str, str)
        Output of :func:`prepare_molecules` (canonical, distinct structures).
    max_changed : int
        The largest chain, in heavy atoms, on either side of an edit.
    min_core_ratio : float
        The core must have at least this many times the heavy atoms of the larger chain.

    Returns
    -------
    PairSearch
        ``candidates`` counts the ordered molecule pairs sharing a core; a candidate is rejected when no
        shared cut gives an edit that passes :func:`verify_pair` (the reason of its smallest edit is
        counted) or when the two chains differ only in stereo (``stereo-only change``).
    """
    index: dict[str, list[tuple[int, Cut]]] = defaultdict(list)
    n_cuts = 0
    for number, (_, smiles) in enumerate(molecules):
        for cut in single_cuts(smiles, max_changed=max_changed, min_core_ratio=min_core_ratio):
            index[cut.key].append((number, cut))
            n_cuts += 1
    options: dict[tuple[int, int], list[tuple[tuple[Any, ...], Cut, Cut]]] = defaultdict(list)
    for members in index.values():
        for i, cut_s in members:
            for j, cut_t in members:
                if i == j or cut_s.chain == cut_t.chain:
                    continue
                larger = max(cut_s.chain_heavy, cut_t.chain_heavy)
                if min(cut_s.core_heavy, cut_t.core_heavy) < min_core_ratio * larger:
                    continue
                rank = (larger, cut_s.chain_heavy + cut_t.chain_heavy, cut_s.chain, cut_t.chain, cut_s.attach)
                options[(i, j)].append((rank, cut_s, cut_t))
    result = PairSearch(pairs=[], candidates=len(options), cuts=n_cuts)
    for (i, j), found in sorted(options.items()):
        (source_id, source), (target_id, target) = molecules[i], molecules[j]
        found.sort(key=lambda item: item[0])
        if all(flat_smiles(s.chain) == flat_smiles(t.chain)
               for _, s, t in found):  # fmt: skip
            result.rejected["stereo-only change"] += 1
            continue
        first_reason = None
        for _, cut_s, cut_t in found:
            edit = describe_edit(source, Edit(cut_s.chain, cut_t.chain, cut_s.attach, cut_s.root))
            pair = EditPair(source_id, target_id, source, target, edit)
            reason = verify_pair(pair)
            if reason is None:
                result.pairs.append(pair)
                break
            first_reason = first_reason or reason
        else:
            result.rejected[first_reason or "no edit"] += 1
    return result


# --------------------------------------------------------------------------------------------------------
# Labels


# BINARY_LABELS, NUMERIC_THRESHOLDS and is_consistent define the data set's labels: they live with its
# declaration (evaluators.datasets.edit_pairs), which reads them too.

#: The C3 false source label of a numeric task lies this many task label SDs from the true source label.
FALSE_LABEL_SHIFT_SD = 1.0


def false_label(
    source_label: Any,
    target_label: Any,
    *,
    sd: float | None = None,
    bounds: tuple[float, float] | None = None,
    min_shift: float = 0.0,
) -> tuple[Any, bool]:
    """Return the false source label shown under C3, and whether the rule turned to the target's side.

    Binary: the other class. Numeric: ``y_s + d·s`` with ``d = −sign(y_t − y_s)`` (``+1`` when equal) and
    ``s = min(k·SD, room_d)``, ``k`` = :data:`FALSE_LABEL_SHIFT_SD` and ``room_d`` the distance from ``y_s``
    to the end of the task's observed label range ``bounds`` in direction ``d``:

    - *away from the target's truth*: a prediction that follows the false label moves away from the answer,
      so "toward the false label" cannot be mistaken for a correct update, and the C3 error can only grow;
    - *one SD* (3.8 kcal/mol for FreeSolv, 2.0 log units for solubility): a change of the size that
      separates typical molecules of the set, several times the consistency threshold;
    - *inside the observed range*: the false label stays a value the set's molecules actually have.

    When ``room_d < min_shift`` (the source sits at that end of the range) the direction is reversed (flag
    ``True``). Callers pass ``min_shift`` = 2 × the consistency threshold, so the false label is always
    label-inconsistent with the true one.

    Examples
    --------
    >>> false_label(True, False)
    (False, False)
    >>> false_label(-3.0, -2.0, sd=2.0)
    (-5.0, False)
    >>> false_label(1.0, 0.0, sd=2.0, bounds=(-12.0, 1.6))  # 0.6 of room above: clamped
    (1.6, False)
    >>> false_label(1.0, 0.0, sd=2.0, bounds=(-12.0, 1.6), min_shift=1.0)  # too little room: turned
    (-1.0, True)
    """
    if sd is None:
        return (not bool(source_label)), False
    y_s, y_t = float(source_label), float(target_label)
    low, high = bounds if bounds is not None else (-float("inf"), float("inf"))
    direction = -1.0 if y_t > y_s else 1.0
    full = FALSE_LABEL_SHIFT_SD * sd

    def shifted(d: float) -> float:
        room = high - y_s if d > 0 else y_s - low
        return y_s + d * min(full, max(room, 0.0))

    value = shifted(direction)
    if abs(value - y_s) < min_shift:
        return shifted(-direction), True
    return value, False


@dataclass(frozen=True, slots=True)
class LabelledPair:
    """A verified pair of one task with its labels (``false_source_label``: shown in C3)."""

    task: str
    pair: EditPair
    source_label: Any
    target_label: Any
    consistent: bool
    false_source_label: Any
    false_flipped: bool = False


def label_pairs(
    task: str,
    pairs: Iterable[EditPair],
    labels: Mapping[str, Any],
    *,
    threshold: float | None = None,
    sd: float | None = None,
    bounds: tuple[float, float] | None = None,
) -> list[LabelledPair]:
    """Attach labels (by molecule id), the consistency group and the C3 false label to pairs.

    ``threshold``/``sd`` ``None``: a binary task. Numeric false labels (:func:`false_label`) use
    ``min_shift = 2 × threshold``. Pairs with a molecule that has no label are left out.
    """
    out = []
    for pair in pairs:
        if pair.source_id not in labels or pair.target_id not in labels:
            continue
        y_s, y_t = labels[pair.source_id], labels[pair.target_id]
        wrong, flipped = false_label(y_s, y_t, sd=sd, bounds=bounds, min_shift=2 * (threshold or 0.0))
        out.append(LabelledPair(task, pair, y_s, y_t, is_consistent(y_s, y_t, threshold), wrong, flipped))
    return out


def target_stratum(pair: LabelledPair, edges: Sequence[float] | None = None) -> Hashable:
    """Stratum of a pair for :func:`balanced_groups`: the target's class, or its bin among ``edges``.

    Examples
    --------
    >>> p = LabelledPair("t", EditPair("a", "b", "C", "CC", Edit("[*:1][H]", "C[*:1]", 0, None)), -2.0, -4.2,
    ...                  False, 0.0)
    >>> target_stratum(p, [-5.0, -3.0, -1.0])
    1
    """
    if edges is None:
        return bool(pair.target_label)
    return bisect.bisect_right(list(edges), float(pair.target_label))


def balanced_groups(
    pairs: Sequence[LabelledPair],
    *,
    cap: int = 100,
    seed: int = 0,
    disjoint_roles: bool = True,
    stratum: Callable[[LabelledPair], Hashable] | None = None,
    taken: Sequence[LabelledPair] = (),
) -> list[LabelledPair]:
    """Sample equal-sized label-consistent and label-inconsistent groups of one task (seeded).

    Pairs are shuffled per (group, stratum) cell (``random.Random`` seeded with ``seed``, task, group and
    stratum, over the pairs sorted by ids). The strata are then visited in turn; each visit adds one
    consistent and one inconsistent pair of that stratum, each the cell's next pair that does not clash:
    its target is not yet a target and, with ``disjoint_roles``, neither its target was a source nor its
    source a target (no hidden answer is shown as another item's source label). A stratum closes when either
    of its cells runs out; sampling stops when the groups hold ``cap`` pairs each or all strata are closed.

    Both groups therefore have the same size *and the same composition over strata*. With the default
    stratum (the target's class for binary labels; pass :func:`target_stratum` with bin edges for numeric
    ones) a constant predictor scores the same in both groups, so a collapse ratio above 1 cannot come from
    a class (or label-range) imbalance between the groups.

    ``taken``: pairs sampled before (not returned again) whose targets and sources count as already used,
    so that a second sample drawn after a first (:func:`named_first`) obeys the same rules across both.

    Returns
    -------
    list of LabelledPair
        The consistent group, then the inconsistent group (``2n`` pairs, ``n ≤ cap``).
    """
    key = stratum or target_stratum
    task = pairs[0].task if pairs else ""
    cells: dict[tuple[bool, Hashable], list[LabelledPair]] = defaultdict(list)
    for item in sorted(pairs, key=lambda p: (p.pair.source_id, p.pair.target_id)):
        cells[(item.consistent, key(item))].append(item)
    for (flag, level), cell in cells.items():
        random.Random(f"{seed}:{task}:{flag}:{level!r}").shuffle(cell)
    levels = sorted({level for _, level in cells}, key=repr)
    open_levels = [lv for lv in levels if cells.get((True, lv)) and cells.get((False, lv))]
    positions: Counter[tuple[bool, Hashable]] = Counter()
    targets: set[str] = {p.pair.target_id for p in taken}
    sources: set[str] = {p.pair.source_id for p in taken}
    chosen: dict[bool, list[LabelledPair]] = {True: [], False: []}

    def take(cell_key: tuple[bool, Hashable], extra: EditPair | None) -> LabelledPair | None:
        cell = cells[cell_key]
        while positions[cell_key] < len(cell):
            item = cell[positions[cell_key]]
            positions[cell_key] += 1
            s_id, t_id = item.pair.source_id, item.pair.target_id
            t_all = targets | ({extra.target_id} if extra else set())
            s_all = sources | ({extra.source_id} if extra else set())
            if t_id in t_all or (disjoint_roles and (t_id in s_all or s_id in t_all)):
                continue
            return item
        return None

    while open_levels and len(chosen[True]) < cap:
        for level in list(open_levels):
            if len(chosen[True]) >= cap:
                break
            first = take((True, level), None)
            second = take((False, level), first.pair) if first is not None else None
            if first is None or second is None:
                open_levels.remove(level)
                continue
            for item in (first, second):
                chosen[item.consistent].append(item)
                targets.add(item.pair.target_id)
                sources.add(item.pair.source_id)
    return chosen[True] + chosen[False]


def named_first(
    pairs: Sequence[LabelledPair],
    named: Callable[[LabelledPair], bool],
    *,
    cap: int = 100,
    seed: int = 0,
    stratum: Callable[[LabelledPair], Hashable] | None = None,
) -> tuple[list[LabelledPair], int]:
    """Sample balanced groups whose subset of ``named`` pairs is balanced on its own too.

    The IUPAC prompts are asked only for pairs with names of both molecules: sampled among all pairs, that
    subset was whatever share of each group happened to be named (edit-pairs v1: logP > 3 had 16
    consistent against 21 inconsistent named pairs, TPSA > 75 no inconsistent one). So the named pairs are
    sampled first, by :func:`balanced_groups` among themselves (``cap`` per group), and the remaining places
    are filled from the other pairs by a second :func:`balanced_groups` that respects the first's targets
    and sources (``taken``). Each part has equal groups with the same composition over strata, hence so
    does their union.

    Returns
    -------
    list of LabelledPair, int
        The consistent group, then the inconsistent group, each with its named pairs first; and the number
        of named pairs per group.
    """
    first = balanced_groups([p for p in pairs if named(p)], cap=cap, seed=seed, stratum=stratum)
    n_named = len(first) // 2
    rest = balanced_groups([p for p in pairs if not named(p)], cap=cap - n_named, seed=seed,
                           stratum=stratum, taken=first) if cap > n_named else []  # fmt: skip
    n_rest = len(rest) // 2
    return first[:n_named] + rest[:n_rest] + first[n_named:] + rest[n_rest:], n_named
