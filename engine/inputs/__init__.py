"""Everything read from outside, through one YAML loader (yaml): rule files and their includes (rules),
Karmada objects as typed facts (facts, objects), PropagationPolicies as AST (policies), events files
(events), and paths (files)."""
