"""Intake: what a model author hands in — manifest schema, scaffold, changed submissions, validation report.

Runs no submission code. Side effects: only :mod:`leaderboard.intake.scaffold` writes (a new manifest).
"""
