"""Checking rule sets: every semantic problem (semantic: policy_checks and rule_checks on checking), and every
limit of the compiler and the backend (limits), each at its span and with its code; rule_set gives the checked
rule sets the rest of fleetrules takes, and the library's rules."""
