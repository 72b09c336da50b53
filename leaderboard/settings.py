"""Maintainer settings, read once from the environment at an entry point and passed down.

Nothing below an entry point (``python -m leaderboard``, the nox sessions, the tools) reads environment
variables: they take a :class:`Settings` (or the one value they need) as an argument, so a test or a
second caller can state every setting explicitly. Side effects: none.

=================================  =====================================================================
variable                           meaning
=================================  =====================================================================
``CHEMROBUST_DATA_DIR``            local mirror of the data sets (``<dir>/<set>/<file>``), checked first
``MLFLOW_TRACKING_URI``            the MLflow store (default ``sqlite:///<state>/mlflow.db``)
``MLFLOW_EXPERIMENT_NAME``         the experiment results go to (default ``chemrobust``)
``CHEMROBUST_SLURM_CONFIG``        TOML file of a site's Slurm defaults (``--executor slurm``)
``CHEMROBUST_ALLOW_REMOTE_CODE``   comma-separated submission ids allowed ``trust_remote_code``
``CHEMROBUST_ALLOW_PICKLE``        comma-separated submission ids whose pickled weights may be fetched
``HF_ENDPOINT``                    Hugging Face hub address (a mirror, or a local test server)
=================================  =====================================================================

The two allowances add to the committed grants in ``leaderboard/allowances.toml`` (:func:`allowances`), so
the board's own published models evaluate from a clean clone with nothing set.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

#: The maintainers' committed grants, relative to the repository root.
ALLOWANCES = Path("leaderboard") / "allowances.toml"
#: The kinds of grant (tables of :data:`ALLOWANCES`).
ALLOWANCE_KINDS = ("pickle", "remote_code")
#: The maintainers' list of reference submissions (shown on the boards, never ranked), relative to the root.
REFERENCES = Path("leaderboard") / "references.toml"


def _ids(value: str | None) -> frozenset[str]:
    return frozenset(s.strip() for s in (value or "").split(",") if s.strip())


def references(repo_root: Path) -> dict[str, str]:
    """Return the maintainers' references: submission id → why it is a reference (``[references]`` table).

    These add to the manifests that declare ``reference: true``; the file says why the maintainers'
    own references are listed here and not in their manifests. A missing file lists none.

    Raises
    ------
    ValueError
        If the file is not TOML, has another table, or an entry is not a non-empty string.
    """
    path = Path(repo_root) / REFERENCES
    if not path.is_file():
        return {}
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not valid TOML ({exc}); fix the file") from None
    table = raw.get("references", {})
    if not isinstance(table, dict):
        table = {"[references]": None}
    bad = [k for k, v in table.items() if not isinstance(v, str) or not v.strip()]
    if set(raw) - {"references"} or not isinstance(table, dict) or bad:
        raise ValueError(f"{path}: one table [references] of id = \"why it is a reference\" (bad: {bad})")
    return dict(table)


def allowances(repo_root: Path) -> dict[str, dict[str, str]]:
    """Return the committed grants: kind (``pickle``, ``remote_code``) → submission id → what was reviewed.

    A missing file grants nothing.

    Raises
    ------
    ValueError
        If the file is not TOML, names an unknown kind, or an entry is not a non-empty string.
    """
    path = Path(repo_root) / ALLOWANCES
    if not path.is_file():
        return {kind: {} for kind in ALLOWANCE_KINDS}
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not valid TOML ({exc}); fix the file") from None
    unknown = sorted(set(raw) - set(ALLOWANCE_KINDS))
    if unknown:
        raise ValueError(f"{path}: unknown table(s) {unknown}; the kinds are {list(ALLOWANCE_KINDS)}")
    out: dict[str, dict[str, str]] = {}
    for kind in ALLOWANCE_KINDS:
        table = raw.get(kind, {})
        bad = [k for k, v in table.items() if not isinstance(v, str) or not v.strip()]
        if not isinstance(table, dict) or bad:
            raise ValueError(f"{path}: [{kind}] entries must be id = \"what was reviewed\" (bad: {bad})")
        out[kind] = dict(table)
    return out


@dataclass(frozen=True)
class Settings:
    """Where things are and what maintainers allowed.

    Attributes
    ----------
    repo_root, state_dir : pathlib.Path
        The repository and the local state folder (MLflow, caches, job folders).
    data_mirror : pathlib.Path or None
        Local mirror of the data sets (``CHEMROBUST_DATA_DIR``).
    tracking_uri : str or None
        MLflow tracking URI (``MLFLOW_TRACKING_URI``); ``None`` for the sqlite file in ``state_dir``.
    allow_remote_code, allow_pickle : frozenset of str
        Submission ids a maintainer allowed ``trust_remote_code`` / pickled weights (the environment's and
        ``leaderboard/allowances.toml``'s).
    hf_endpoint : str or None
        Hugging Face hub address (``HF_ENDPOINT``); ``None`` for the public hub.
    experiment : str
        MLflow experiment of the results (``MLFLOW_EXPERIMENT_NAME``).
    slurm_config : pathlib.Path or None
        A site's Slurm defaults (``CHEMROBUST_SLURM_CONFIG``), read by ``--executor slurm``.
    """

    repo_root: Path
    state_dir: Path
    data_mirror: Path | None = None
    tracking_uri: str | None = None
    allow_remote_code: frozenset[str] = field(default_factory=frozenset)
    allow_pickle: frozenset[str] = field(default_factory=frozenset)
    hf_endpoint: str | None = None
    experiment: str = "chemrobust"
    slurm_config: Path | None = None

    @classmethod
    def from_environment(
        cls, *, repo_root: Path, state_dir: Path, environ: Mapping[str, str] | None = None
    ) -> Settings:
        """Read the settings from ``environ`` (default: the process environment), once.

        Examples
        --------
        >>> s = Settings.from_environment(repo_root=Path("/no/repository"), state_dir=Path(".state"),
        ...                               environ={"CHEMROBUST_ALLOW_PICKLE": "a, b,"})
        >>> sorted(s.allow_pickle), s.data_mirror, s.tracking_uri
        (['a', 'b'], None, None)
        """
        env = os.environ if environ is None else environ
        mirror = env.get("CHEMROBUST_DATA_DIR")
        granted = allowances(repo_root)
        return cls(
            repo_root=Path(repo_root),
            state_dir=Path(state_dir),
            data_mirror=Path(mirror).expanduser().resolve() if mirror else None,
            tracking_uri=env.get("MLFLOW_TRACKING_URI") or None,
            allow_remote_code=_ids(env.get("CHEMROBUST_ALLOW_REMOTE_CODE")) | set(granted["remote_code"]),
            allow_pickle=_ids(env.get("CHEMROBUST_ALLOW_PICKLE")) | set(granted["pickle"]),
            hf_endpoint=env.get("HF_ENDPOINT") or None,
            experiment=env.get("MLFLOW_EXPERIMENT_NAME") or "chemrobust",
            slurm_config=Path(env["CHEMROBUST_SLURM_CONFIG"]) if env.get("CHEMROBUST_SLURM_CONFIG") else None,
        )

    def mlflow_uri(self) -> str:
        """Return the tracking URI: :attr:`tracking_uri`, else ``sqlite:///<state_dir>/mlflow.db``."""
        return self.tracking_uri or f"sqlite:///{(self.state_dir / 'mlflow.db').resolve()}"

    def artifact_root(self) -> Path | None:
        """Where new experiments keep artifacts: ``<state>/mlartifacts``; ``None`` (the server's) on HTTP."""
        remote = self.mlflow_uri().startswith(("http://", "https://"))
        return None if remote else self.state_dir / "mlartifacts"
