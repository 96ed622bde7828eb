"""Checking rule sets: every semantic problem (semantic), and every limit of the compiler and the
backend, each at its span (rules: the checked rule sets the rest of fleetrules takes)."""
