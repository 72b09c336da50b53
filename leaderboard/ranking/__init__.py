"""Ranking: Vote'n'Rank rules over criteria tables, the headline criteria and bootstrap rank intervals.

Pure functions of pandas tables; no I/O except the bootstrap cache of :mod:`leaderboard.ranking.uncertainty`.
"""
