"""Pieces the reference trainers share: learning-rate schedule, optimisation step, loss log, publishing a run.

Used by :mod:`leaderboard.tools.training` (SMILES encoders), :mod:`leaderboard.tools.seq2seq_training`
(generative references) and :mod:`leaderboard.tools.caption_training` (the captioner). Pure bookkeeping
around ``torch``; no randomness, so the trainers stay bit-for-bit reproducible. :func:`publish_run` says
what a finished run produced and logs it to MLflow.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

__all__ = ["LossLog", "optimiser_step", "publish_run", "warmup_cosine"]


def warmup_cosine(steps: int, warmup_fraction: float) -> Callable[[int], float]:
    """Return the learning-rate factor per step: linear warm-up, then cosine decay to 0 at ``steps``.

    Examples
    --------
    >>> f = warmup_cosine(10, 0.2)
    >>> [round(f(s), 3) for s in (0, 1, 2, 6, 10)]
    [0.5, 1.0, 1.0, 0.5, 0.0]
    """
    warmup = max(1, round(warmup_fraction * steps))

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup))))

    return factor


def optimiser_step(model, optimizer, scheduler, loss, max_grad_norm: float) -> None:
    """Back-propagate ``loss``, clip the gradient norm, step the optimiser and the schedule."""
    import torch

    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    scheduler.step()


class LossLog:
    """Values averaged over windows of ``log_every`` steps: ``history[name] = [(step, mean), ...]``.

    Parameters
    ----------
    names : iterable of str
        The logged values.
    steps, log_every, print_every : int
        Total steps; window length; a progress line every ``print_every`` steps (and at the end).
    log : callable
        Receives the progress lines.
    """

    def __init__(self, names: Iterable[str], *, steps: int, log_every: int, print_every: int, log) -> None:
        self.history: dict[str, list[tuple[int, float]]] = {k: [] for k in names}
        self._window: dict[str, list[float]] = {k: [] for k in self.history}
        self.steps, self.log_every, self.print_every, self.log = steps, log_every, print_every, log
        self.start = time.perf_counter()

    def add(self, step: int, values: dict[str, float], epoch: int) -> None:
        """Record the values of step ``step`` (0-based); close the window and print when due."""
        for key, value in values.items():
            self._window[key].append(value)
        done = step + 1
        if done % self.log_every and done != self.steps:
            return
        for key, window in self._window.items():
            if window:
                self.history[key].append((done, sum(window) / len(window)))
            window.clear()
        if done % self.print_every == 0 or done == self.steps:
            shown = ", ".join(f"{k} {v[-1][1]:.4g}" for k, v in self.history.items() if v)
            self.log(f"  step {done}/{self.steps} (epoch {epoch}): {shown}, {self.seconds():.0f} s")

    def seconds(self) -> float:
        """Wall-clock seconds since the log was created."""
        return time.perf_counter() - self.start


def publish_run(submission_id: str, config: Any, rec: dict, run: Any, weights: Path,
                files: list[Path], *, settings=None, log=print) -> dict:  # fmt: skip
    """Say what a reference's training produced and log it to MLflow (experiment ``chemrobust-training``).

    ``rec`` is the written training record (its corpus hash and size, weight hash); ``files`` the reports
    written beside the weights; ``settings`` ``None`` logs nothing. Returns ``rec``.
    """
    log(f"training: {submission_id}: {run.seconds:.0f} s, {weights.stat().st_size:,} bytes, sha256 "
        f"{rec['weights']['sha256'][:16]}…")  # fmt: skip
    if settings is not None:
        from leaderboard.store import ResultStore

        settings.state_dir.mkdir(parents=True, exist_ok=True)
        store = ResultStore(settings.mlflow_uri(), artifact_root=settings.state_dir / "mlartifacts")
        sizes = {"corpus_size": rec["corpus"]["size"], "vocab_size": len(run.tokenizer)}
        params = {**config.model_dump(), **sizes}
        tags = {
            "submission": submission_id,
            "corpus_sha256": rec["corpus"]["sha256"],
            "training_seconds": f"{run.seconds:.1f}",
            "weights_sha256": rec["weights"]["sha256"],
        }
        files = [*files, *sorted(p for p in weights.parent.iterdir() if p.is_file())]
        run_id = store.log_training(submission_id, params, tags, run.history, files)
        log(f"training: {submission_id}: MLflow run {run_id}")
    return rec
