"""Which policy claims a workload (pkg/detector)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.syntax import ast


def _selector_matches(selector: ast.Selector, labels: Mapping[str, str]) -> bool:
    for req in selector.requirements:
        key, values = req.key.value, {v.value for v in req.values}
        present = key in labels
        ok = {
            ast.Op.EQUALS: present and labels.get(key) in values,
            ast.Op.IN: present and labels.get(key) in values,
            ast.Op.NOT_EQUALS: not present or labels.get(key) not in values,
            ast.Op.NOT_IN: not present or labels.get(key) not in values,
            ast.Op.EXISTS: present,
            ast.Op.DOES_NOT_EXIST: not present,
        }[req.op]
        if not ok:
            return False
    return True


def specificity(policy: ast.Policy, kind: str, namespace: str, name: str, labels: Mapping[str, str]) -> int:
    """0 if ``policy`` does not select the workload; else 1 (kind), 2 (labels) or 3 (name).

    The most specific match wins, as Karmada's detector prefers explicit names to label selectors.
    """
    selects = [s for s in policy.statements if isinstance(s, ast.Select)]
    if not selects:
        return 0
    select = selects[0]
    kinds = {w.value for w in select.values(ast.SelectField.KIND)}
    namespaces = {w.value for w in select.values(ast.SelectField.NAMESPACE)}
    names = {w.value for w in select.values(ast.SelectField.NAME)}
    if kind not in kinds or (namespaces and namespace not in namespaces) or (names and name not in names):
        return 0
    if not all(_selector_matches(s, labels) for s in select.label_selectors):
        return 0
    return 3 if names else 2 if select.label_selectors else 1


def select_policy(
    policies: Sequence[ast.Policy], kind: str, namespace: str, name: str, labels: Mapping[str, str]
) -> ast.Policy | None:
    ranked = [(specificity(p, kind, namespace, name, labels), p.name.value, p) for p in policies]
    matching = [r for r in ranked if r[0] > 0]
    if not matching:
        return None
    return min(matching, key=lambda r: (-r[0], r[1]))[2]
