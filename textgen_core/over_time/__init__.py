"""Runs of a dataset over time: history with a change detector, leaderboard (issue 29)."""
