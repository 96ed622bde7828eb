"""Kubernetes primitives with no fleetrules dependencies: name and label validation, JSONPath."""
