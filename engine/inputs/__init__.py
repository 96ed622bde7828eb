"""Everything read from outside, through one YAML loader (yaml): rule files and their includes (rule_files),
Karmada objects as typed facts (facts, objects), PropagationPolicies as AST (policies), the control plane's own
objects (controlplane), events files (events), label and cluster matching (matching), and paths (files)."""
