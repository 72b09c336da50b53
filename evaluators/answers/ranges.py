"""Plausible ranges of numeric answers: a number outside its quantity's range is not an answer.

Issue 28: without a range, ``1e14`` g/mol or a hydration free energy of ``3·10¹³`` kcal/mol were accepted as
answers and dominated every mean (a T4 MAE of 6·10¹⁴, a T3 chance term of 10²⁸). Each range is the span of
the values in the board's data sets widened by that span on both sides (physical bounds where tighter), so
no measured value and no near miss is refused, and a model that answers in the wrong unit or with garbage
is invalid — counted, never averaged:

===========================  =======================  =====================================  ==============
quantity                     data (sets)              range = [min − span, max + span]       unit
===========================  =======================  =====================================  ==============
``hydration_free_energy``    −25.47 … 3.43 (FreeSolv)  [−55, 33]                             kcal/mol
``log_solubility``           −11.62 … 1.58 (solubility) [−25, 15]                            log10 mol/L
``molecular_weight``         16.0 … 2775.5 (T4 sets)   [1, 5600] (no molecule weighs < 1)    g/mol
===========================  =======================  =====================================  ==============

An invalid numeric answer is scored with :func:`invalid_error`, the largest error a plausible answer could
make on that item: bounded (never infinite, so means stay of the data's scale) and worse than every valid
answer (so abstaining never pays).
"""

from __future__ import annotations

import math

__all__ = ["PLAUSIBLE", "invalid_error", "plausible"]

#: Quantity → (low, high), inclusive. Keys are the quantities the generative tracks ask for.
PLAUSIBLE: dict[str, tuple[float, float]] = {
    "hydration_free_energy": (-55.0, 33.0),
    "log_solubility": (-25.0, 15.0),
    "molecular_weight": (1.0, 5600.0),
}
# T4 names the solubility task by what it asks; the quantity is the same.
PLAUSIBLE["aqueous_solubility"] = PLAUSIBLE["log_solubility"]


def plausible(quantity: str, value: float | None) -> float | None:
    """Return ``value`` if it is a finite number within ``quantity``'s plausible range, else ``None``.

    Raises
    ------
    KeyError
        If ``quantity`` has no declared range (a new numeric task must declare one).

    Examples
    --------
    >>> plausible("molecular_weight", 46.07), plausible("molecular_weight", 6e14)
    (46.07, None)
    """
    low, high = PLAUSIBLE[quantity]
    if value is None or not math.isfinite(value) or not low <= value <= high:
        return None
    return float(value)


def invalid_error(quantity: str, truth: float) -> float:
    """Return the absolute error charged to an invalid answer: the worst plausible answer's.

    That is ``max(y − low, high − y)`` for the truth ``y``.

    Examples
    --------
    >>> invalid_error("hydration_free_energy", -5.0)
    50.0
    """
    low, high = PLAUSIBLE[quantity]
    return float(max(truth - low, high - truth))
