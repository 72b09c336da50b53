"""Hostile: look the answers up in whatever files the box can read (issue 29's question views).

Reads every CSV, JSON and JSON-lines file under ``/data`` and the working folder, indexes every row by each
of its cells (and a SMILES cell by its canonical form too, for randomized SMILES), finds the molecule a
prompt shows and answers with the column the prompt asks for: the name for a SMILES, the SMILES for a
name, the formula; for T5, the target's label, value or SMILES of the pair whose source or target it
shows. Where it finds nothing it answers like the constant baseline ("yes", "0", the input).
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

from evaluators.adapters import Completion, GenerativeAdapter

ROOTS = [Path("/data"), Path.cwd()]
MAX_BYTES = 64 * 1024**2


def canonical(text: str) -> str | None:
    try:
        from rdkit import Chem, RDLogger

        RDLogger.DisableLog("rdApp.*")
        mol = Chem.MolFromSmiles(text)
        return Chem.MolToSmiles(mol) if mol is not None and mol.GetNumAtoms() else None
    except Exception:  # noqa: BLE001 - any tool failure: no lookup
        return None


def records(path: Path) -> list[dict]:
    try:
        if path.stat().st_size > MAX_BYTES:
            return []
        if path.suffix == ".csv":
            with path.open(encoding="utf-8", newline="") as handle:
                return list(csv.DictReader(handle))
        if path.suffix == ".jsonl":
            rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
        elif path.suffix == ".json":
            rows = json.loads(path.read_text(encoding="utf-8"))
            rows = rows if isinstance(rows, list) else [rows]
        else:
            return []
        return [r for r in rows if isinstance(r, dict)]
    except Exception:  # noqa: BLE001 - unreadable or not a table: skip it
        return []


class Attack(GenerativeAdapter):
    def __init__(self, config):
        super().__init__(config)
        self.rows: list[dict] = []
        self.files: list[str] = []
        for root in ROOTS:
            for folder, _dirs, names in os.walk(root):
                for name in names:
                    found = records(Path(folder) / name)
                    if found:
                        self.files.append(f"{folder}/{name}")
                        self.rows += found
        self.by_cell: dict[str, dict] = {}
        self.by_canonical: dict[str, dict] = {}
        for row in self.rows:
            for key, value in row.items():
                if isinstance(value, str) and len(value) >= 2:
                    self.by_cell.setdefault(value, row)
                if key.lower() == "smiles" and isinstance(value, str) and (c := canonical(value)):
                    self.by_canonical.setdefault(c, row)

    def lookup(self, prompt: str) -> tuple[dict, str] | None:
        """The row of the molecule the prompt shows and the cell it was found by."""
        for token in prompt.replace("?", " ").split():
            token = token.rstrip(".,")
            if (c := canonical(token)) and c in self.by_canonical:
                return self.by_canonical[c], token
        hits = [cell for cell in self.by_cell if cell in prompt]
        if not hits:
            return None
        cell = max(hits, key=len)
        return self.by_cell[cell], cell

    def answer(self, prompt: str) -> str:
        found = self.lookup(prompt)
        low = {k.lower(): v for k, v in found[0].items() if isinstance(v, str)} if found else {}
        if low.get("target_label") or low.get("target_smiles"):  # T5's pairs, were they in the box
            if "SMILES of the target" in prompt:
                return low.get("target_smiles", "")
            try:
                value = float(low.get("target_label", ""))
            except ValueError:
                value = None
            if value is not None and "yes or no" in prompt:
                return "yes" if value >= 0.5 else "no"
            if value is not None and "number" in prompt:
                return repr(value)
        if "yes or no" in prompt:
            return "yes"
        if "number" in prompt:
            return "0"
        if found is None:
            return ""
        row, cell = found
        if "formula" in prompt:
            return low.get("formula", "")
        if "IUPAC name of" in prompt:
            return low.get("iupac", "")
        if "SMILES of" in prompt:
            return low.get("smiles", "")
        # Translation: the other notation than the one shown.
        return low.get("smiles", "") if cell == low.get("iupac") else low.get("iupac", "")

    def generate(self, requests):
        out = [Completion(r.id, self.answer(r.prompt), "stop") for r in requests]
        self.report("generate", len(requests), len(requests))
        return out

    def describe(self):
        return {"read": self.files[:20], "rows": len(self.rows)}
