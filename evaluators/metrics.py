"""The metric registry, and the metrics that more than one track reports.

:data:`METRICS` holds the declaration of every metric any track reports
(:class:`~evaluators.schema.MetricSpec`:
direction, bounds, label): the host validates results, orients the ranking and labels pages from it, never
from a metric's name. A track that adds metrics registers them in its own package.

The registry finds the metrics of every track on first lookup (it imports the track packages under
:mod:`evaluators.tracks`, whose modules register them), so a lookup never depends on import order.
"""

from __future__ import annotations

from evaluators.registry import Registry
from evaluators.schema import MetricSpec

METRICS: Registry[MetricSpec] = Registry("metric", "evaluators.tracks")


def register_metric(spec: MetricSpec) -> MetricSpec:
    """Add ``spec`` to :data:`METRICS` (a repeated name raises)."""
    return METRICS.register(spec.name)(spec)


#: The strict and lenient grading of structure answers (T3/T4/T5, :mod:`evaluators.asking.grading`).
GRADING_SPECS = (
    MetricSpec("accuracy_lenient", True, "accuracy (lenient)",
               "Share of items answered with the true compound up to stereo, tautomer and protonation "
               "(the standard InChIKey's first block); missing = wrong. Beside the strict accuracy.",
               0.0, 1.0),
    MetricSpec("n_truth_excluded", False, "n without a truth",
               "Items left out because the name shown cannot be verified as the compound scored against "
               "(OPSIN cannot read it, or it names another compound).", 0.0, integral=True),
    *(MetricSpec(f"wrong_{kind}", False, f"wrong: {label}",
                 f"Share of the structure answers that are wrong this way: {label}.", 0.0, 1.0)
      for kind, label in (("stereo", "stereo only"), ("tautomer", "tautomer / protonation"),
                          ("isomer", "constitutional isomer (same formula)"),
                          ("formula", "different formula"), ("none", "not a molecule / no answer"))),
)  # fmt: skip

#: Metrics more than one track reports (T1/T2/captioning: n_excluded; T1/captioning: n_identical; T3/T4/T5 and
#: captioning: n_items; T3/T4/T5: accuracy, the strict and lenient
#: grading of structures (evaluators.asking.grading); T4/T5: validity,
#: mae, balanced_accuracy, mae_charged; T2/T4: rmse). A metric only one track reports is registered in that
#: track's package.
for _spec in (
    MetricSpec("balanced_accuracy", True, "balanced accuracy",
               "Mean over the true classes present of the share answered correctly (invalid = wrong): a "
               "constant or random label scores 1/K (0.5 for yes/no), abstaining 0.", 0.0, 1.0),
    MetricSpec("mae_charged", False, "MAE (invalid charged)",
               "Mean absolute error over every item asked; an invalid answer (missing, unparseable or "
               "outside the quantity's plausible range) is charged the worst plausible answer's error.", 0.0),
    MetricSpec("accuracy", True, "accuracy", "Share of items answered correctly (missing = wrong).", 0.0,
               1.0),
    MetricSpec("n_items", True, "n items", "Items asked.", 0.0, integral=True),
    MetricSpec("validity", True, "validity", "Share of answers that normalise (empty or unparseable = "
               "invalid, never scored as a zero error).", 0.0, 1.0),
    MetricSpec("mae", False, "MAE", "Mean absolute error over the valid numeric answers.", 0.0),
    MetricSpec("rmse", False, "RMSE", "Root mean squared error of numeric predictions (T4: over the valid "
               "answers; T2: the probe's, over the test molecules).", 0.0),
    *GRADING_SPECS,
    MetricSpec("n_identical", True, "n identical", "Pairs whose rewrite equals the original string (T1: "
               "kept in the `all` subset; captioning: not asked, the original's caption stands).", 0.0,
               integral=True),
    MetricSpec(
        "n_excluded", False, "n excluded", "Rewrites that failed the identity check (T1: pairs left out; T2: "
        "test molecules that keep their original string).", 0.0, integral=True
    ),
):  # fmt: skip
    register_metric(_spec)


def higher_is_better() -> dict[str, bool]:
    """Direction of every registered metric, as read by the aggregation."""
    return {name: METRICS.get(name).higher_is_better for name in METRICS.names()}
