"""Reviewing policy changes: rule tests (testing) and the diff of two rule versions (diff)."""
