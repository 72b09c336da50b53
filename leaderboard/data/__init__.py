"""Host-side fetching and building of the benchmark data sets (nothing here runs a submission).

:mod:`~leaderboard.data.prepare` makes a set ready under the state folder — from the local mirror
(``CHEMROBUST_DATA_DIR``), a pinned download, or a build from packaged data — and checks its pinned
hashes. The embedded sets are built by :mod:`~leaderboard.data.pubchem_names` (T3/T4's named PubChem
compounds, OPSIN-checked) and :mod:`~leaderboard.data.edit_pairs` (T5's pairs, with the track's pure
builder, :mod:`evaluators.tracks.identity_blinded.pairs`). The declarations of every set (files, hashes,
readers) are the container side's :mod:`evaluators.datasets`.
"""
