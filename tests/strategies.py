"""Hypothesis strategies for whole rule-file ASTs (syntactically valid, not necessarily checked)."""

from __future__ import annotations

from hypothesis import strategies as st

from engine.syntax import ast
from engine.syntax.parse import keywords

_KEYWORDS = keywords()
identifiers = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(lambda s: s not in _KEYWORDS)
# Any text can be a word: the formatter quotes what is not a bare identifier.
texts = st.one_of(
    identifiers,
    st.from_regex(r"[A-Za-z][A-Za-z0-9_.\/-]{0,12}", fullmatch=True),
    st.text(st.characters(codec="utf-8"), max_size=8),
)
words = texts.map(ast.Word)
var_words = identifiers.map(ast.Word)
numbers = st.integers(0, 1000).map(ast.Number)
durations = st.integers(0, 10**6).map(ast.Duration)


@st.composite
def requirements(draw: st.DrawFn) -> ast.Requirement:
    op = draw(st.sampled_from(list(ast.Op)))
    if op in (ast.Op.EQUALS, ast.Op.NOT_EQUALS):
        values: tuple[ast.Word, ...] = (draw(words),)
    elif op in (ast.Op.IN, ast.Op.NOT_IN):
        values = tuple(draw(st.lists(words, min_size=1, max_size=3)))
    else:
        values = ()
    return ast.Requirement(draw(words), op, values)


selectors = st.lists(requirements(), max_size=3).map(lambda rs: ast.Selector(tuple(rs)))
word_tuples = st.lists(words, min_size=1, max_size=3).map(tuple)

select_stmts = st.one_of(
    st.builds(ast.SelectList, st.sampled_from(list(ast.SelectField)), word_tuples),
    st.builds(ast.SelectLabels, selectors),
)
cluster_stmts = st.one_of(
    st.builds(ast.ClusterList, st.sampled_from([ast.ClusterField.NAMES, ast.ClusterField.EXCLUDE]), word_tuples),
    st.builds(ast.ClusterSelector, st.sampled_from([ast.ClusterField.LABELS, ast.ClusterField.FIELDS]), selectors),
)
failover_stmts = st.one_of(
    st.builds(ast.FailoverToleration, durations),
    st.builds(ast.Purge, words),
    st.builds(ast.Grace, durations),
    st.builds(ast.Preserve, words, words),
)
policy_stmts = st.one_of(
    st.builds(ast.Select, st.lists(select_stmts, max_size=4).map(tuple)),
    st.builds(
        ast.ClusterAffinity,
        st.none() | words,
        st.lists(cluster_stmts, max_size=4).map(tuple),
        st.lists(st.builds(ast.Overflow, words, st.lists(cluster_stmts, max_size=2).map(tuple)), max_size=2).map(tuple),
    ),
    st.builds(ast.Toleration, st.none() | words, st.none() | words, st.none() | words, st.none() | durations),
    st.builds(ast.WorkloadTerm, st.booleans(), st.booleans(), words, st.none() | numbers, st.none() | words),
    st.builds(ast.Spread, words, st.none() | numbers, st.none() | numbers),
    st.builds(ast.Failover, words, st.lists(failover_stmts, max_size=4).map(tuple)),
)
policies = st.builds(ast.Policy, words, st.lists(policy_stmts, max_size=5).map(tuple))

paths = st.builds(ast.Path, identifiers, st.lists(texts, max_size=3).map(tuple))
literals = st.builds(ast.Literal, st.one_of(st.booleans(), st.integers(0, 10**9), texts))


def _compound(children: st.SearchStrategy[ast.Expr]) -> st.SearchStrategy[ast.Expr]:
    two_or_more = st.lists(children, min_size=2, max_size=3).map(tuple)
    return st.one_of(
        st.builds(ast.Compare, st.sampled_from(list(ast.CompareOp)), children, children),
        st.builds(ast.Member, st.booleans(), children, children),
        st.builds(ast.Not, children),
        st.builds(ast.And, two_or_more),
        st.builds(ast.Or, two_or_more),
        st.builds(ast.ListExpr, st.lists(children, max_size=3).map(tuple)),
    )


exprs: st.SearchStrategy[ast.Expr] = st.recursive(st.one_of(paths, literals), _compound, max_leaves=8)

patterns = st.builds(ast.Pattern, st.booleans(), words, var_words, st.none() | exprs)
actions = st.one_of(
    st.builds(ast.Reject, var_words, var_words, words),
    st.builds(ast.Prefer, var_words, var_words, numbers),
    st.builds(ast.Derive, words, st.lists(st.builds(ast.Assignment, words, exprs), max_size=3).map(tuple)),
    st.builds(ast.Evict, var_words, var_words, words, words),
)
rules = st.builds(
    ast.Rule,
    words,
    st.lists(patterns, min_size=1, max_size=3).map(tuple),
    st.lists(actions, min_size=1, max_size=3).map(tuple),
)
includes = st.builds(ast.Include, words)
files = st.builds(
    ast.File,
    path=st.just("<generated>"),
    items=st.lists(st.one_of(policies, rules, includes), max_size=4).map(tuple),
)
