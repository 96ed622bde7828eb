"""Named conditions (issue 47): a condition written once and used in rules as NAME(VAR, …). The library's
`tolerates` (Kubernetes' ToleratesTaint) serves the TaintToleration filter, the taint manager and users' rules;
what is wrong is told where it is written; the formatter, the converter, the strict mode and the language server
know it."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import RuleError, format_source, load_rules, parse
from engine.checker.semantic import check
from engine.lsp import definition, hover
from engine.render.karmada import policies_yaml
from engine.syntax import ast
from engine.syntax.conditions import calls, expand_rule
from tests.helpers import binding, cluster, key, run, workload

GPU = [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]
POLICY = """policy batch {
  select { kind Deployment }
  tolerate gpu
}
"""


def objects() -> list[dict[str, object]]:
    return [
        cluster("plain"),
        cluster("gpu-a", taints=GPU),
        workload("job", {"tier": "batch"}),
        binding("job"),
    ]


def test_a_users_rule_uses_the_librarys_condition(tmp_path: Path) -> None:
    rule = """rule tolerated-gpu {
  when binding b (b.labels.tier == "batch")
   and taint t (t.key == "gpu")
   and cluster c (c.name == t.cluster)
   and cluster_toleration x (x.policy == b.policy and tolerates(x, t))
  then prefer c for b weight 10
}
"""
    result = run(tmp_path, POLICY + rule, objects())
    (placement,) = [p for p in result.placements if p.binding == key("job")]
    assert placement.scores["gpu-a"] > placement.scores["plain"]


def test_a_users_own_condition_is_the_rule_written_out(tmp_path: Path) -> None:
    """A rule with a call places exactly as the same rule with the body written in its place."""
    called = """condition plain_cluster(c) {
  c.name == "plain"
}
rule only-gpu {
  when binding b (b.labels.tier == "batch") and cluster c (plain_cluster(c))
  then reject c for b "batch runs on gpu clusters"
}
"""
    written = """rule only-gpu {
  when binding b (b.labels.tier == "batch") and cluster c (c.name == "plain")
  then reject c for b "batch runs on gpu clusters"
}
"""
    first, second = run(tmp_path, POLICY + called, objects()), run(tmp_path, POLICY + written, objects())
    (a,), (b,) = ([p for p in r.placements if p.binding == key("job")] for r in (first, second))
    assert a.clusters == b.clusters == ("gpu-a",) and sorted(a.rejected) == sorted(b.rejected) == ["plain"]


def test_the_filter_and_the_taint_manager_use_the_librarys_condition() -> None:
    from engine.inputs.rule_files import library_files, visible_conditions

    (definition_file,) = [f for f in library_files() if f.conditions]
    assert definition_file.path == "<builtin>/tolerations.fr"
    assert list(visible_conditions()) == ["tolerates"]


BAD = [
    ('condition c(x) { y.name == "a" }\n', "unknown variable 'y' in condition 'c'; its parameters are x"),
    ('condition c(x, x) { x.name == "a" }\n', "parameter 'x' is named twice"),
    ('condition c(x) { x == "a" }\n', "'x' is a whole fact; name a field such as x.name"),
    ("condition c(x) { c(x) }\n", "condition 'c' uses itself (c -> c), which never ends"),
    ("condition c(x) { d(x) }\ncondition d(x) { c(x) }\n", "condition 'c' uses itself (c -> d -> c), which never ends"),
    ("condition tolerates(x, t) { x.key == t.key }\n", "condition 'tolerates' is the library's"),
    ('condition c(x) { x.name == "a" }\ncondition c(y) { y.name == "b" }\n', "duplicate name 'c'"),
    (
        'rule r { when cluster c (tolerats(c, c)) then reject c for c "x" }\n',
        "unknown condition 'tolerats'; did you mean 'tolerates'?",
    ),
    ('rule r { when cluster c (tolerates(c)) then reject c for c "x" }\n', "takes 2 variable(s) (x, t), not 1"),
    ('rule r { when cluster c (tolerates(c, q)) then reject c for c "x" }\n', "unknown variable 'q'"),
    (
        'rule r { when cluster c and taint t (tolerates(c, t)) then reject c for c "x" }\n',
        "cluster has no field 'effect' (in condition 'tolerates')",
    ),
]


@pytest.mark.parametrize(("text", "message"), BAD, ids=[m for _, m in BAD])
def test_what_is_wrong_is_told_where_it_is_written(text: str, message: str) -> None:
    problems = [d for d in check([parse(text, "bad.fr")]) if d.is_error]
    assert any(message in d.message for d in problems), [d.message for d in problems]
    assert all(d.span is not None and d.span.file == "bad.fr" for d in problems)


def test_a_field_error_inside_a_call_points_at_the_call() -> None:
    text = 'rule r { when cluster c and taint t (tolerates(c, t)) then reject c for c "x" }\n'
    (problem, *_) = [d for d in check([parse(text, "bad.fr")]) if "in condition" in d.message]
    assert problem.span is not None and (problem.span.line, problem.span.column) == (1, 38)


def test_the_formatter_keeps_a_condition_and_its_comments() -> None:
    text = """# why
condition   on_gpu( c ) {   # the label
  c.labels.gpu=="yes"
}
rule r {
  when binding b and cluster c (not on_gpu(c))
  then reject c for b "x"
}
"""
    formatted = format_source(text)
    assert formatted == (
        '# why\ncondition on_gpu(c) {  # the label\n  c.labels.gpu == "yes"\n}\n\n'
        'rule r {\n  when binding b\n   and cluster c (not on_gpu(c))\n  then reject c for b "x"\n}\n'
    )
    assert format_source(formatted) == formatted


def test_expansion_renames_the_parameters_and_keeps_the_calls_place() -> None:
    tree = parse(
        "condition c(x, y) { x.name == y.cluster }\n"
        'rule r { when taint t and cluster k (c(k, t)) then reject k for k "x" }\n'
    )
    (rule,) = tree.rules
    written = expand_rule(rule, {c.name.value: c for c in tree.conditions})
    condition = written.patterns[1].condition
    assert isinstance(condition, ast.Compare)
    assert (condition.left, condition.right) == (ast.Path("k", ("name",)), ast.Path("t", ("cluster",)))
    call_span = rule.patterns[1].condition.span  # type: ignore[union-attr]
    assert condition.span == call_span and condition.left.span == call_span


def test_strict_karmada_and_the_converter_refuse_it(tmp_path: Path) -> None:
    text = POLICY + 'condition on(c) { c.name == "a" }\n'
    strict = [d.message for d in check([parse(text, "p.fr")], strict=True) if d.is_error]
    assert any("a named condition" in m for m in strict)
    with pytest.raises(RuleError, match="condition 'on'"):
        policies_yaml([parse(text, "p.fr")])


def test_the_language_server_hovers_and_goes_to_a_condition() -> None:
    text = (
        'condition on(c) { c.name == "a" }\nrule r { when binding b and cluster c (on(c)) then reject c for b "x" }\n'
    )
    shown = hover("file:///w/r.fr", text, 1, 40)
    assert shown is not None and "**condition on(c)**" in shown.contents.value  # type: ignore[union-attr]
    assert 'c.name == "a"' in shown.contents.value  # type: ignore[union-attr]
    place = definition("file:///w/r.fr", text, 1, 40)
    assert place is not None and place.range.start.line == 0 and place.range.start.character == 10
    rule_hover = hover("file:///w/r.fr", text, 1, 2)
    assert rule_hover is not None and "Does not compile" not in rule_hover.contents.value  # type: ignore[union-attr]


def test_load_rules_compiles_calls_across_files(tmp_path: Path) -> None:
    (tmp_path / "c.fr").write_text('condition on(c) { c.name == "gpu-a" }\n')
    (tmp_path / "r.fr").write_text(
        POLICY + 'rule r { when binding b and cluster c (not on(c)) then reject c for b "x" }\n'
    )
    rule_set = load_rules([tmp_path])
    (rule,) = rule_set.rules
    assert list(calls(rule.patterns[1].condition)) == []
