"""Rendering: results, timelines, diffs and test reports for people (text, Markdown) and machines
(JSON, YAML, JUnit). Output is deterministic: bindings by NS/NAME, clusters by name."""

from engine.render.results import explain_text, result_data, to_json, to_text, to_yaml

__all__ = ["explain_text", "result_data", "to_json", "to_text", "to_yaml"]
