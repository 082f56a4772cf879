"""Engines that score beyond this process: Ray (an optional extra)."""
