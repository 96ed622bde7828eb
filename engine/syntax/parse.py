"""Rule text → Lark tree → typed AST, collecting every syntax error of a file.

The grammar (grammar/fleetrules.lark) is LALR(1) with the basic lexer, so the parser can be driven
token by token: on an unexpected token we record a diagnostic and recover in panic mode (drop
tokens until one fits the current state; a closing bracket may first pop the unfinished
construct it closes). The file then still yields a tree for the checker whenever recovery
resynchronised, so one run reports syntax and semantic errors together.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator
from functools import cache
from importlib.resources import files
from typing import Any

from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedToken, VisitError
from lark.lexer import PatternStr
from lark.parsers.lalr_parser_state import ParserState

from engine.codes import Code
from engine.errors import Diagnostic, RuleError, Span, error, expect
from engine.syntax import ast

MAX_ERRORS = 50
# how deep the syntax tree may nest (`not not not …`, parentheses): every later stage walks it recursively
MAX_NESTING = 100
_CLOSERS = {"RBRACE", "RPAR", "RSQB"}
_OPENERS = {"LBRACE", "LPAR", "LSQB"}
# the longest number or duration a rule file may write: past any field's range (Karmada's are int32 and int64),
# and short of Python's 4,300-digit limit of reading an int
MAX_DIGITS = 30
# After a syntax error, this many tokens must fit again before another error is reported.
_QUIET_AFTER_ERROR = 3
_TERMINAL_DESCRIPTIONS = {
    "IDENT": "a name",
    "STRING": "a string",
    "INT": "a number",
    "DURATION": "a duration (90s, 5m, 1h)",
    "ORDER": "a comparison",
    "$END": "end of file",
}
_DURATION_PART = re.compile(r"([0-9]+)([smhd])")
_DURATION = re.compile(r"([0-9]+[smhd])+")
UNIT_SECONDS = {"d": 86400, "h": 3600, "m": 60, "s": 1}  # largest first: the formatter prints so


def grammar_text() -> str:
    return files("engine.grammar").joinpath("fleetrules.lark").read_text(encoding="utf-8")


@cache
def _parser() -> Lark:
    return Lark(grammar_text(), parser="lalr", lexer="basic", propagate_positions=True, maybe_placeholders=True)


@cache
def keywords() -> frozenset[str]:
    """Every reserved word of the language (the formatter quotes names that collide)."""
    return frozenset(
        t.pattern.value
        for t in _parser().terminals
        if isinstance(t.pattern, PatternStr) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.\/-]*", t.pattern.value)
    )


def _describe(terminal: str) -> str:
    if terminal in _TERMINAL_DESCRIPTIONS:
        return _TERMINAL_DESCRIPTIONS[terminal]
    for t in _parser().terminals:
        if t.name == terminal and isinstance(t.pattern, PatternStr):
            return f"'{t.pattern.value}'"
    return terminal.lower()


def _token_span(path: str, token: Token) -> Span:
    line = token.line or 1
    column = token.column or 1
    return Span(path, line, column, token.end_line or line, token.end_column or column + 1)


def _unexpected_token(path: str, token: Token, expected: set[str]) -> Diagnostic:
    wanted = sorted({_describe(t) for t in expected})
    listed = ", ".join(wanted[:10]) + (", …" if len(wanted) > 10 else "")
    if token.type == "$END":
        return error(f"unexpected end of file; expected {listed}", _token_span(path, token), code=Code.SYNTAX)
    text = str(token)
    if token.type == "IDENT":
        words = sorted(w.strip("'") for w in wanted if w.startswith("'") and w[1:2].isalpha())
        guess = difflib.get_close_matches(text, words, n=1, cutoff=0.6)
        if guess:
            return error(
                f"unknown keyword '{text}'; did you mean '{guess[0]}'?", _token_span(path, token), code=Code.SYNTAX
            )
    return error(f"unexpected '{text}'; expected {listed}", _token_span(path, token), code=Code.SYNTAX)


def _lex(path: str, text: str, diagnostics: list[Diagnostic]) -> tuple[list[Token], list[ast.Comment], bool]:
    """All tokens of ``text``; a character no token starts with is reported and treated as a blank, a number
    longer than ``MAX_DIGITS`` is reported and read as 0, so that parsing goes on to find the other errors (the
    flag returned: then the tree is no use to the checker, which would judge the 0)."""
    parser = _parser()
    chars = list(text)
    while True:
        tokens: list[Token] = []
        comments: list[ast.Comment] = []
        too_long = False
        try:
            for token in parser.lex("".join(chars), dont_ignore=True):
                if token.type == "COMMENT":
                    comments.append(ast.Comment(str(token), span=_token_span(path, token)))
                elif token.type in ("INT", "DURATION") and len(token) > MAX_DIGITS:
                    what = "number" if token.type == "INT" else "duration"
                    message = f"a {what} of {len(token):,} characters; numbers here have at most {MAX_DIGITS} digits"
                    diagnostics.append(error(message, _token_span(path, token), code=Code.TOO_LARGE))
                    tokens.append(token.update(value="0" if token.type == "INT" else "0s"))
                    too_long = True
                elif token.type != "WS":
                    tokens.append(token)
            return tokens, comments, too_long
        except UnexpectedCharacters as exc:
            position = exc.pos_in_stream or 0
            bad = chars[position]
            span = Span(path, exc.line, exc.column, exc.line, exc.column + 1)
            negative = bad == "-" and text[position + 1 : position + 2].isdigit()
            hint = "; numbers and durations cannot be negative" if negative else ""
            diagnostics.append(error(f"unexpected character {bad!r}{hint}", span, code=Code.SYNTAX))
            if len(diagnostics) >= MAX_ERRORS:
                return [], [], False
            chars[position] = " "


def _fed(state: ParserState[Any], token: Token) -> ParserState[Any] | None:
    """The state after ``token``, or None where the grammar does not take it (``state`` is kept)."""
    trial = state.copy(deepcopy_values=False)
    try:
        trial.feed_token(token, is_end=token.type == "$END")
    except UnexpectedToken:
        return None
    return trial


def _fed_after_popping(state: ParserState[Any], token: Token) -> ParserState[Any] | None:
    """Drop unfinished constructs from the top of the stack until a closing bracket fits."""
    for depth in range(len(state.state_stack) - 1, 0, -1):
        popped = ParserState(state.parse_conf, state.lexer, state.state_stack[:depth], state.value_stack[: depth - 1])
        trial = _fed(popped, token)
        if trial is not None:
            return trial
    return None


def _expected(state: ParserState[Any]) -> set[str]:
    """Terminals that really fit here (LALR tables list merged lookaheads that fail later)."""
    candidates = [t for t in state.parse_conf.states[state.position] if t.isupper()]
    return {t for t in candidates if _fed(state, Token(t, "")) is not None} or set(candidates)


def _parse_tokens(path: str, text: str, tokens: list[Token], diagnostics: list[Diagnostic]) -> Tree[Token] | None:
    state: ParserState[Any] = _parser().parse_interactive(text).parser_state
    recovering = False
    taken_since_error = _QUIET_AFTER_ERROR
    brackets = nots = 0  # open brackets, and `not`s in a row: how deep the tree being parsed nests
    for token in tokens:
        brackets += (token.type in _OPENERS) - (token.type in _CLOSERS and brackets > 0)
        nots = nots + 1 if token.type == "NOT" else 0
        if brackets + nots > MAX_NESTING:  # stop here: each token fed below copies a stack as deep as this
            diagnostics.append(
                error(f"nested more than {MAX_NESTING} levels deep", _token_span(path, token), code=Code.TOO_LARGE)
            )
            return None
        trial = _fed(state, token)
        if trial is None:
            if not recovering and taken_since_error >= _QUIET_AFTER_ERROR:
                diagnostics.append(_unexpected_token(path, token, _expected(state)))
                if len(diagnostics) >= MAX_ERRORS:
                    return None
            recovering, taken_since_error = True, 0
            if token.type in _CLOSERS:
                trial = _fed_after_popping(state, token)
        if trial is not None:
            state, recovering = trial, False
            taken_since_error += 1
    end = _end_token(tokens[-1] if tokens else None)
    try:
        tree: Tree[Token] = state.copy(deepcopy_values=False).feed_token(end, is_end=True)
    except UnexpectedToken:
        if not recovering:
            diagnostics.append(_unexpected_token(path, end, _expected(state)))
        return None
    return tree


def _end_token(last: Token | None) -> Token:
    """The end-of-input token, placed just after the last token."""
    if last is None:
        return Token("$END", "", 0, 1, 1, 1, 1, 1)
    line, column = last.end_line or 1, last.end_column or 1
    return Token("$END", "", last.end_pos, line, column, line, column + 1, last.end_pos)


def parse(text: str, path: str = "<string>") -> ast.File:
    """One rule file's ``text`` as its syntax tree (an ast.File); raises RuleError with every syntax error found,
    each at ``path``:line:column. Includes are not read (load_rules reads them)."""
    expect("text", text, str, "the rule file's text (str)")
    expect("path", path, str, "the file name to report (str)")
    tree, diagnostics = parse_partial(text, path)
    if tree is None or diagnostics:
        raise RuleError(diagnostics)
    return tree


def parse_partial(text: str, path: str = "<string>") -> tuple[ast.File | None, list[Diagnostic]]:
    """Like parse, but returns whatever tree recovery produced along with the syntax errors."""
    if "\r" in text:  # classic Mac line ends (a bare CR) end lines too, as they do where diagnostics show them
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    diagnostics: list[Diagnostic] = []
    tokens, comments, too_long = _lex(path, text, diagnostics)
    tree = _parse_tokens(path, text, tokens, diagnostics) if len(diagnostics) < MAX_ERRORS else None
    if tree is None or too_long:
        if not diagnostics:
            diagnostics.append(error("the file could not be parsed", Span(path, 1, 1, 1, 2), code=Code.SYNTAX))
        return None, diagnostics
    deep = _too_deep(tree, MAX_NESTING)
    if deep is not None:
        line, column = getattr(deep.meta, "line", 1), getattr(deep.meta, "column", 1)
        where = Span(path, line, column, line, column + 1)
        diagnostics.append(error(f"nested more than {MAX_NESTING} levels deep", where, code=Code.TOO_LARGE))
        return None, diagnostics
    try:
        items = _ToAst(path, diagnostics).transform(tree)
    except VisitError as exc:
        if not isinstance(exc.orig_exc, RuleError):
            raise
        diagnostics.extend(exc.orig_exc.diagnostics)
        return None, diagnostics
    return ast.File(items=tuple(items), comments=tuple(comments), path=path, span=Span(path, 1, 1, 1, 1)), diagnostics


def _too_deep(tree: Tree[Token], limit: int) -> Tree[Token] | None:
    """The first subtree more than ``limit`` levels below ``tree`` (walked without recursion), or None."""
    stack: list[tuple[Tree[Token], int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return node
        stack += [(child, depth + 1) for child in node.children if isinstance(child, Tree)]
    return None


def duration_seconds(text: str) -> int:
    return sum(int(n) * UNIT_SECONDS[u] for n, u in _DURATION_PART.findall(text))


def parse_duration(text: str) -> int | None:
    """Seconds of a duration written as the language writes them (90s, 5m, 1h30m, 2d), or None."""
    return duration_seconds(text) if _DURATION.fullmatch(text) else None


def _children(items: list[Any]) -> Iterator[Any]:
    return (c for c in items if c is not None)


@v_args(meta=True)
class _ToAst(Transformer[Token, Any]):
    """Builds AST nodes bottom-up; each node gets the span of the text it was parsed from."""

    def __init__(self, path: str, diagnostics: list[Diagnostic]) -> None:
        super().__init__()
        self.file_path = path
        self.diagnostics = diagnostics

    def _span(self, meta: Any) -> Span:
        if getattr(meta, "empty", True):
            return Span(self.file_path, 1, 1, 1, 1)
        return Span(self.file_path, meta.line, meta.column, meta.end_line, meta.end_column)

    def _tok(self, token: Token) -> Span:
        return _token_span(self.file_path, token)

    def _string(self, token: Token) -> str:
        try:
            value = json.loads(str(token))
        except json.JSONDecodeError as exc:
            raise RuleError([error(f"invalid string literal: {exc.msg}", self._tok(token), code=Code.SYNTAX)]) from None
        assert isinstance(value, str)
        return value

    def _word(self, token: Token) -> ast.Word:
        value = self._string(token) if token.type == "STRING" else str(token)
        return ast.Word(value, span=self._tok(token))

    # words
    def name(self, meta: Any, c: list[Token]) -> ast.Word:
        return self._word(c[0])

    key = word = name

    def word_list(self, meta: Any, c: list[ast.Word]) -> tuple[ast.Word, ...]:
        return tuple(c)

    def duration(self, meta: Any, c: list[Token]) -> ast.Duration:
        token = c[0]
        seconds = int(token) if token.type == "INT" else duration_seconds(str(token))
        return ast.Duration(seconds, span=self._tok(token))

    def start(self, meta: Any, c: list[ast.Item]) -> list[ast.Item]:
        return list(c)

    def include(self, meta: Any, c: list[Token]) -> ast.Include:
        return ast.Include(self._word(c[0]), span=self._span(meta))

    # policies
    def policy(self, meta: Any, c: list[Any]) -> ast.Policy:
        return ast.Policy(c[0], tuple(c[1:]), span=self._span(meta))

    def select(self, meta: Any, c: list[ast.SelectStmt]) -> ast.Select:
        return ast.Select(tuple(c), span=self._span(meta))

    def _select_list(self, which: ast.SelectField, meta: Any, c: list[Any]) -> ast.SelectList:
        return ast.SelectList(which, c[0], span=self._span(meta))

    def select_kind(self, meta: Any, c: list[Any]) -> ast.SelectList:
        return self._select_list(ast.SelectField.KIND, meta, c)

    def select_namespace(self, meta: Any, c: list[Any]) -> ast.SelectList:
        return self._select_list(ast.SelectField.NAMESPACE, meta, c)

    def select_name(self, meta: Any, c: list[Any]) -> ast.SelectList:
        return self._select_list(ast.SelectField.NAME, meta, c)

    def select_labels(self, meta: Any, c: list[Any]) -> ast.SelectLabels:
        return ast.SelectLabels(c[0], span=self._span(meta))

    def selector(self, meta: Any, c: list[Any]) -> ast.Selector:
        return ast.Selector(tuple(_children(c)), span=self._span(meta))

    def _req(self, op: ast.Op, meta: Any, key: ast.Word, values: tuple[ast.Word, ...] = ()) -> ast.Requirement:
        return ast.Requirement(key, op, values, span=self._span(meta))

    def req_equals(self, meta: Any, c: list[Any]) -> ast.Requirement:
        return self._req(ast.Op.EQUALS, meta, c[0], (c[1],))

    def req_not_equals(self, meta: Any, c: list[Any]) -> ast.Requirement:
        return self._req(ast.Op.NOT_EQUALS, meta, c[0], (c[2],))

    def req_in(self, meta: Any, c: list[Any]) -> ast.Requirement:
        return self._req(ast.Op.IN, meta, c[0], c[1])

    def req_not_in(self, meta: Any, c: list[Any]) -> ast.Requirement:
        return self._req(ast.Op.NOT_IN, meta, c[0], c[1])

    def req_exists(self, meta: Any, c: list[Any]) -> ast.Requirement:
        return self._req(ast.Op.EXISTS, meta, c[0])

    def req_not_exists(self, meta: Any, c: list[Any]) -> ast.Requirement:
        return self._req(ast.Op.DOES_NOT_EXIST, meta, c[0])

    def cluster_affinity(self, meta: Any, c: list[Any]) -> ast.ClusterAffinity:
        statements = tuple(s for s in c[1:] if not isinstance(s, ast.Overflow))
        overflow = tuple(s for s in c[1:] if isinstance(s, ast.Overflow))
        return ast.ClusterAffinity(c[0], statements, overflow, span=self._span(meta))

    def overflow(self, meta: Any, c: list[Any]) -> ast.Overflow:
        return ast.Overflow(c[0], tuple(c[1:]), span=self._span(meta))

    def cluster_names(self, meta: Any, c: list[Any]) -> ast.ClusterList:
        return ast.ClusterList(ast.ClusterField.NAMES, c[0], span=self._span(meta))

    def cluster_exclude(self, meta: Any, c: list[Any]) -> ast.ClusterList:
        return ast.ClusterList(ast.ClusterField.EXCLUDE, c[0], span=self._span(meta))

    def cluster_labels(self, meta: Any, c: list[Any]) -> ast.ClusterSelector:
        return ast.ClusterSelector(ast.ClusterField.LABELS, c[0], span=self._span(meta))

    def cluster_fields(self, meta: Any, c: list[Any]) -> ast.ClusterSelector:
        return ast.ClusterSelector(ast.ClusterField.FIELDS, c[0], span=self._span(meta))

    def toleration(self, meta: Any, c: list[Any]) -> ast.Toleration:
        key, value, effect, seconds = c
        return ast.Toleration(key, value, effect, seconds, span=self._span(meta))

    def tol_key(self, meta: Any, c: list[Any]) -> ast.Word | None:
        return None if isinstance(c[0], Token) and c[0].type == "STAR" else c[0]

    def tol_value(self, meta: Any, c: list[Any]) -> ast.Word:
        return c[0]  # type: ignore[no-any-return]

    def priority(self, meta: Any, c: list[Any]) -> ast.Priority:
        minus, value = c
        number = ast.Number(-int(value) if minus is not None else int(value), span=self._span(meta))
        return ast.Priority(number, span=self._span(meta))

    def schedule_priority(self, meta: Any, c: list[Any]) -> ast.SchedulePriority:
        return ast.SchedulePriority(c[0], span=self._span(meta))

    def preemption(self, meta: Any, c: list[Any]) -> ast.Preemption:
        return ast.Preemption(c[0], span=self._span(meta))

    def activation(self, meta: Any, c: list[Any]) -> ast.Activation:
        return ast.Activation(c[0], span=self._span(meta))

    def propagate(self, meta: Any, c: list[Any]) -> ast.PropagateDeps:
        return ast.PropagateDeps(c[0], span=self._span(meta))

    def spread(self, meta: Any, c: list[Any]) -> ast.Spread:
        field, low, high = c
        return ast.Spread(field, self._number(low), self._number(high), span=self._span(meta))

    def replicas_plain(self, meta: Any, c: list[Any]) -> ast.Replicas:
        return ast.Replicas(c[0], span=self._span(meta))

    def replicas_dynamic(self, meta: Any, c: list[Any]) -> ast.Replicas:
        return ast.Replicas(c[0], c[1], span=self._span(meta))

    def replicas_weighted(self, meta: Any, c: list[Any]) -> ast.Replicas:
        by = ast.Word("weight", span=self._span(meta))
        return ast.Replicas(c[0], by, tuple(w for w in c[1:] if w is not None), span=self._span(meta))

    def weight_named(self, meta: Any, c: list[Any]) -> ast.StaticWeight:
        name, weight = c
        target = (ast.ClusterList(ast.ClusterField.NAMES, (name,), span=name.span),)
        return ast.StaticWeight(target, ast.Number(int(weight), span=self._tok(weight)), span=self._span(meta))

    def weight_clusters(self, meta: Any, c: list[Any]) -> ast.StaticWeight:
        *stmts, weight = c
        return ast.StaticWeight(tuple(stmts), ast.Number(int(weight), span=self._tok(weight)), span=self._span(meta))

    def _number(self, token: Token | None) -> ast.Number | None:
        return None if token is None else ast.Number(int(token), span=self._tok(token))

    def workload_term(self, meta: Any, c: list[Any]) -> ast.WorkloadTerm:
        prefer, anti, key, weight, topology = c
        return ast.WorkloadTerm(prefer is not None, anti, key, self._number(weight), topology, span=self._span(meta))

    def affinity_kind(self, meta: Any, c: list[Token]) -> bool:
        return c[0].type == "ANTI_AFFINITY"

    def failover(self, meta: Any, c: list[Any]) -> ast.Failover:
        return ast.Failover(c[0], tuple(c[1:]), span=self._span(meta))

    def fo_toleration(self, meta: Any, c: list[Any]) -> ast.FailoverToleration:
        return ast.FailoverToleration(c[0], span=self._span(meta))

    def fo_purge(self, meta: Any, c: list[Any]) -> ast.Purge:
        return ast.Purge(c[0], span=self._span(meta))

    def fo_grace(self, meta: Any, c: list[Any]) -> ast.Grace:
        return ast.Grace(c[0], span=self._span(meta))

    def fo_preserve(self, meta: Any, c: list[Any]) -> ast.Preserve:
        return ast.Preserve(c[0], self._word(c[1]), span=self._span(meta))

    # rules
    def rule(self, meta: Any, c: list[Any]) -> ast.Rule:
        patterns = tuple(x for x in c[1:] if isinstance(x, ast.Pattern))
        actions = tuple(x for x in c[1:] if not isinstance(x, ast.Pattern))
        return ast.Rule(c[0], patterns, actions, span=self._span(meta))

    def pattern(self, meta: Any, c: list[Any]) -> ast.Pattern:
        negated, fact_type, var, condition = c
        return ast.Pattern(negated is not None, fact_type, self._word(var), condition, span=self._span(meta))

    def condition(self, meta: Any, c: list[Any]) -> ast.Condition:
        name, *params, body = c
        return ast.Condition(self._word(name), tuple(self._word(t) for t in params), body, span=self._span(meta))

    def act_reject(self, meta: Any, c: list[Token]) -> ast.Reject:
        reason = self._word(c[3]) if c[3] is not None else None
        return ast.Reject(self._word(c[0]), self._word(c[1]), self._word(c[2]), reason, span=self._span(meta))

    def act_prefer(self, meta: Any, c: list[Token]) -> ast.Prefer:
        weight = ast.Number(int(c[2]), span=self._tok(c[2]))
        return ast.Prefer(self._word(c[0]), self._word(c[1]), weight, span=self._span(meta))

    def act_derive(self, meta: Any, c: list[Any]) -> ast.Derive:
        return ast.Derive(c[0], tuple(_children(c[1:])), span=self._span(meta))

    def act_evict(self, meta: Any, c: list[Any]) -> ast.Evict:
        return ast.Evict(self._word(c[0]), self._word(c[1]), c[2], self._word(c[3]), span=self._span(meta))

    def field_name(self, meta: Any, c: list[Token]) -> ast.Word:
        return self._word(c[0])

    def assignment(self, meta: Any, c: list[Any]) -> ast.Assignment:
        return ast.Assignment(c[0], c[1], span=self._span(meta))

    # expressions
    def or_expr(self, meta: Any, c: list[ast.Expr]) -> ast.Or:
        return ast.Or(tuple(c), span=self._span(meta))

    def and_expr(self, meta: Any, c: list[ast.Expr]) -> ast.And:
        return ast.And(tuple(c), span=self._span(meta))

    def negation(self, meta: Any, c: list[Any]) -> ast.Not:
        return ast.Not(c[1], span=self._span(meta))

    def compare(self, meta: Any, c: list[Any]) -> ast.Compare:
        return ast.Compare(ast.CompareOp(str(c[1])), c[0], c[2], span=self._span(meta))

    def member(self, meta: Any, c: list[Any]) -> ast.Member:
        return ast.Member(False, c[0], c[1], span=self._span(meta))

    def not_member(self, meta: Any, c: list[Any]) -> ast.Member:
        return ast.Member(True, c[0], c[2], span=self._span(meta))

    def path(self, meta: Any, c: list[Token]) -> ast.Path:
        head, *subscripts = c
        var, *steps = str(head).split(".")
        steps += [self._string(s) for s in subscripts]
        return ast.Path(var, tuple(steps), span=self._span(meta))

    def call(self, meta: Any, c: list[Token | None]) -> ast.Call:
        name, *args = c
        assert name is not None
        return ast.Call(self._word(name), tuple(self._word(t) for t in args if t is not None), span=self._span(meta))

    def string(self, meta: Any, c: list[Token]) -> ast.Literal:
        return ast.Literal(self._string(c[0]), span=self._span(meta))

    def number(self, meta: Any, c: list[Token]) -> ast.Literal:
        return ast.Literal(int(c[0]), span=self._span(meta))

    def true(self, meta: Any, c: list[Token]) -> ast.Literal:
        return ast.Literal(True, span=self._span(meta))

    def false(self, meta: Any, c: list[Token]) -> ast.Literal:
        return ast.Literal(False, span=self._span(meta))

    def list(self, meta: Any, c: list[Any]) -> ast.ListExpr:
        return ast.ListExpr(tuple(_children(c)), span=self._span(meta))
