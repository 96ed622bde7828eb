"""Reviewing policy changes: rule tests (testing), the diff of two rule versions (diff), resilience sweeps
(resilience) and what they report (impacts)."""
