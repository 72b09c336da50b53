r"""Shortcut checks: can the way a data set is written or kept predict a label without the chemistry.

A label can hide outside the molecule: in ClinTox as DeepChem distributes it, every toxic aromatic molecule
is written in Kekulé form and no non-toxic one is (the flag alone separates them); ``bace.csv`` and
``BBBP.csv`` are sorted by class, so a row number predicts the label. A model — or a custom adapter that
reads what it is given — then scores without reading the molecule. This module measures such shortcuts
on the rows a container sees (a track's view) so that a set is ranked only where none of them works.

Shortcut feature groups (:data:`SHORTCUTS`), each a function of one row and its position, never of the
molecule's structure:

- ``kekule``: an aromatic molecule written with Kekulé bonds (no lowercase aromatic atom);
- ``explicit_h``: hydrogens written in brackets beyond those RDKit's canonical SMILES writes;
- ``stereo``: stereo marks (``@``, ``/``, ``\``) in the string;
- ``id``: the row's id (its leading digits as a number, or its hash's leading bits);
- ``position``: the row's position in the view.

The string's length is **not** a shortcut: it carries the molecule's size, which is chemistry.

:func:`shortcut_aucs` fits, per group, a logistic regression and a shallow decision tree (a row number can
separate classes in blocks, not only monotonically) on the training rows and reports the better test ROC-AUC;
a regression label is split at the training median. :func:`check_no_shortcut` refuses a view whose best
shortcut reaches :data:`MAX_AUC` beyond the noise of a chance AUC on that many test rows.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "MAX_AUC",
    "SHORTCUTS",
    "ShortcutError",
    "ShortcutReport",
    "check_no_shortcut",
    "chance_band",
    "shortcut_aucs",
    "shortcut_features",
]

#: Highest test ROC-AUC a shortcut may reach (the issue's bound), unless chance alone reaches further on a
#: small test set (:func:`chance_band`).
MAX_AUC = 0.60
_BRACKET_H = re.compile(r"\[[^\]]*?H(\d*)[^\]]*\]")


class ShortcutError(ValueError):
    """A view's writing or bookkeeping predicts its label: the set cannot be ranked as it is."""


def _bracket_hydrogens(smiles: str) -> int:
    # ``[H]`` atoms and the H counts of bracket atoms (``[nH]``, ``[NH2+]``): what a writer chose to spell.
    total = 0
    for match in _BRACKET_H.finditer(smiles):
        atom = match.group(0)
        if atom == "[H]" or re.fullmatch(r"\[\d*H[+-]?\d*\]", atom):
            total += 1
        else:
            total += int(match.group(1) or 1)
    return total


def _writing(smiles: str) -> dict[str, float]:
    from rdkit import Chem

    from evaluators.notations.smiles import InvalidSmilesError, parse_smiles

    try:
        mol = parse_smiles(smiles)
    except InvalidSmilesError:
        return {"kekule": 0.0, "explicit_h": 0.0, "stereo": 0.0}
    aromatic = any(a.GetIsAromatic() for a in mol.GetAtoms())
    written_aromatic = bool(re.search(r"[bcnosp]", re.sub(r"\[[^\]]*\]", _bracket_lower, smiles)))
    canonical = Chem.MolToSmiles(mol)
    return {
        "kekule": float(aromatic and not written_aromatic),
        "explicit_h": float(_bracket_hydrogens(smiles) - _bracket_hydrogens(canonical)),
        "stereo": float(sum(smiles.count(c) for c in "@/\\")),
    }


def _bracket_lower(match: re.Match[str]) -> str:
    # Inside brackets only an aromatic element symbol is lowercase (``[nH]``, ``[se]``): keep one letter of
    # it so the aromatic test above sees it; drop everything else (``[Cl-]`` must not read as ``l``).
    atom = match.group(0)[1:-1].lstrip("0123456789")
    return "c" if atom[:1].islower() else "C"


def _id_value(identifier: str) -> float:
    digits = re.match(r"\d{1,15}", identifier)
    if digits and digits.group(0) == identifier:
        return float(digits.group(0))
    return int(hashlib.sha256(identifier.encode()).hexdigest()[:12], 16) / 16**12


#: Shortcut group → columns of :func:`shortcut_features` it uses.
SHORTCUTS: dict[str, tuple[str, ...]] = {
    "kekule": ("kekule",),
    "explicit_h": ("explicit_h",),
    "stereo": ("stereo",),
    "id": ("id",),
    "position": ("position",),
}


def shortcut_features(rows: Sequence[dict[str, str]]) -> dict[str, np.ndarray]:
    """Return every shortcut feature column for ``rows`` (each with ``id`` and ``smiles``), in row order.

    Examples
    --------
    >>> f = shortcut_features([{"id": "0", "smiles": "C1=CC=CC=C1"}, {"id": "1", "smiles": "c1ccccc1"}])
    >>> f["kekule"].tolist(), f["position"].tolist(), f["id"].tolist()
    ([1.0, 0.0], [0.0, 1.0], [0.0, 1.0])
    """
    written = [_writing(r["smiles"]) for r in rows]
    columns = {k: np.array([w[k] for w in written]) for k in written[0]} if written else {}
    columns["id"] = np.array([_id_value(r["id"]) for r in rows])
    columns["position"] = np.arange(len(rows), dtype=np.float64)
    return columns


def _best_auc(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, y_test: np.ndarray) -> float:
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.tree import DecisionTreeClassifier

    if len(np.unique(y_train)) < 2 or len(np.unique(y_test)) < 2:
        return 0.5
    if np.ptp(x_train, axis=0).max(initial=0.0) == 0.0:
        return 0.5  # a feature constant on the training rows cannot be learned from them
    models: list[Callable[[], object]] = [
        lambda: make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)),
        lambda: DecisionTreeClassifier(max_leaf_nodes=8, min_samples_leaf=max(5, len(y_train) // 50),
                                       random_state=0),
    ]  # fmt: skip
    best = 0.5
    for make in models:
        model = make().fit(x_train, y_train)
        best = max(best, float(roc_auc_score(y_test, model.predict_proba(x_test)[:, 1])))
    return best


@dataclass(frozen=True)
class ShortcutReport:
    """Test ROC-AUC of each shortcut group, the bound it is held to, and the test rows it was measured on."""

    aucs: dict[str, float]
    bound: float
    n_test: int

    @property
    def worst(self) -> tuple[str, float]:
        """The group whose shortcut works best, and its AUC."""
        name = max(self.aucs, key=lambda k: (self.aucs[k], k))
        return name, self.aucs[name]


def chance_band(n_positive: int, n_negative: int) -> float:
    """Return the AUC a label-free feature reaches by chance: 3 standard errors above 0.5, at least 0.60.

    The null standard error of an AUC is ``sqrt((n₁ + n₀ + 1) / (12 n₁ n₀))`` (Mann–Whitney).

    Examples
    --------
    >>> chance_band(500, 500), round(chance_band(10, 10), 3)
    (0.6, 0.897)
    """
    if n_positive < 1 or n_negative < 1:
        return 1.0
    se = math.sqrt((n_positive + n_negative + 1) / (12 * n_positive * n_negative))
    return max(MAX_AUC, 0.5 + 3 * se)


def shortcut_aucs(
    rows: Sequence[dict[str, str]], labels: Sequence[float], splits: Sequence[str], *, kind: str
) -> ShortcutReport:
    """Measure every shortcut group on ``rows`` (a view, in its order): trained on ``train``, AUC on ``test``.

    Parameters
    ----------
    rows : sequence of dict
        The rows as the container sees them (``id``, ``smiles``), in the view's order.
    labels : sequence of float
        The label of each row (host side).
    splits : sequence of str
        ``train`` / ``test`` (other values are ignored).
    kind : str
        ``classification`` (0/1 labels) or ``regression`` (split at the training median).
    """
    y = np.asarray(labels, dtype=np.float64)
    split = np.asarray(splits)
    train, test = split == "train", split == "test"
    if kind == "regression":
        y = (y > np.median(y[train])).astype(int) if train.any() else np.zeros(len(y), dtype=int)
    else:
        y = y.astype(int)
    features = shortcut_features(rows)
    aucs = {}
    for group, columns in SHORTCUTS.items():
        x = np.column_stack([features[c] for c in columns]) if len(rows) else np.zeros((0, len(columns)))
        aucs[group] = round(_best_auc(x[train], y[train], x[test], y[test]), 6)
    n1 = int(y[test].sum())
    return ShortcutReport(aucs, chance_band(n1, int(test.sum()) - n1), int(test.sum()))


def check_no_shortcut(dataset: str, report: ShortcutReport) -> None:
    """Raise :class:`ShortcutError` naming the set, the shortcut and its AUC if one beats the bound.

    Examples
    --------
    >>> check_no_shortcut("toy", ShortcutReport({"id": 0.55}, 0.6, 400))
    >>> check_no_shortcut("toy", ShortcutReport({"id": 0.84}, 0.6, 400))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    evaluators.datasets.leaks.ShortcutError: data set 'toy': the id alone predicts the label ...
    """
    name, auc = report.worst
    if auc > report.bound:
        raise ShortcutError(
            f"data set {dataset!r}: the {name.replace('_', ' ')} alone predicts the label (test ROC-AUC "
            f"{auc:.3f} > {report.bound:.3f} on {report.n_test} test rows); write every string in one "
            "notation, shuffle the view and give opaque ids"
        )
