"""The typed syntax tree of a rule file.

The tree is faithful to the source statement by statement (so the formatter can re-print it and
the checker can point at duplicates); semantic views are properties. Spans never take part in
equality, so ``parse(format(x)) == parse(x)`` compares meaning, not layout.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import assert_never

from engine.errors import NO_SPAN, Span


@dataclass(frozen=True)
class Node:
    span: Span = field(default=NO_SPAN, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class Word(Node):
    """A name, label key, label value or enum word as written (quoted or bare)."""

    value: str


@dataclass(frozen=True)
class Number(Node):
    value: int


@dataclass(frozen=True)
class Duration(Node):
    seconds: int


@dataclass(frozen=True)
class Comment(Node):
    text: str


# ---------------------------------------------------------------- selectors


class Op(enum.Enum):
    EQUALS = "="
    NOT_EQUALS = "!="
    IN = "in"
    NOT_IN = "notin"
    EXISTS = "exists"
    DOES_NOT_EXIST = "!exists"


@dataclass(frozen=True)
class Requirement(Node):
    key: Word
    op: Op
    values: tuple[Word, ...] = ()


@dataclass(frozen=True)
class Selector(Node):
    requirements: tuple[Requirement, ...]


# ---------------------------------------------------------------- policies


class SelectField(enum.Enum):
    KIND = "kind"
    NAMESPACE = "namespace"
    NAME = "name"


@dataclass(frozen=True)
class SelectList(Node):
    field: SelectField
    values: tuple[Word, ...]


@dataclass(frozen=True)
class SelectLabels(Node):
    selector: Selector


SelectStmt = SelectList | SelectLabels


@dataclass(frozen=True)
class Select(Node):
    statements: tuple[SelectStmt, ...]

    def values(self, which: SelectField) -> tuple[Word, ...]:
        return tuple(w for s in self.statements if isinstance(s, SelectList) and s.field is which for w in s.values)

    @property
    def label_selectors(self) -> tuple[Selector, ...]:
        return tuple(s.selector for s in self.statements if isinstance(s, SelectLabels))


class ClusterField(enum.Enum):
    NAMES = "names"
    EXCLUDE = "exclude"
    LABELS = "labels"
    FIELDS = "fields"


@dataclass(frozen=True)
class ClusterList(Node):
    field: ClusterField  # NAMES or EXCLUDE
    values: tuple[Word, ...]


@dataclass(frozen=True)
class ClusterSelector(Node):
    field: ClusterField  # LABELS or FIELDS
    selector: Selector


ClusterStmt = ClusterList | ClusterSelector


@dataclass(frozen=True)
class Overflow(Node):
    """``overflow NAME { … }`` inside a named clusters block: one of the term's overflowAffinities, a group
    of clusters the scheduler adds, in order, when the term's own clusters cannot hold the replicas."""

    name: Word
    statements: tuple[ClusterStmt, ...]


@dataclass(frozen=True)
class ClusterAffinity(Node):
    """``clusters { … }`` is placement.clusterAffinity; ``clusters NAME { … }`` one ordered term."""

    name: Word | None
    statements: tuple[ClusterStmt, ...]
    overflow: tuple[Overflow, ...] = ()

    def values(self, which: ClusterField) -> tuple[Word, ...]:
        return tuple(w for s in self.statements if isinstance(s, ClusterList) and s.field is which for w in s.values)

    def selectors(self, which: ClusterField) -> tuple[Selector, ...]:
        return tuple(s.selector for s in self.statements if isinstance(s, ClusterSelector) and s.field is which)


@dataclass(frozen=True)
class Toleration(Node):
    key: Word | None  # None: `*`, any key
    value: Word | None  # None: operator Exists
    effect: Word | None  # None: every effect
    seconds: Duration | None


@dataclass(frozen=True)
class Spread(Node):
    field: Word  # cluster | region | zone | provider
    min_groups: Number | None
    max_groups: Number | None


@dataclass(frozen=True)
class StaticWeight(Node):
    """One staticWeightList entry: the clusters its targetCluster matches, and their weight."""

    target: tuple[ClusterStmt, ...]
    weight: Number


@dataclass(frozen=True)
class Replicas(Node):
    """placement.replicaScheduling. ``mode`` is duplicated, aggregated or divided; ``by`` is None,
    ``available`` (dynamicWeight AvailableReplicas) or ``weight`` (a staticWeightList, ``weights``)."""

    mode: Word
    by: Word | None = None
    weights: tuple[StaticWeight, ...] = ()


@dataclass(frozen=True)
class WorkloadTerm(Node):
    preferred: bool
    anti: bool
    key: Word
    weight: Number | None
    topology: Word | None  # None: the cluster itself

    @property
    def keyword(self) -> str:
        return "anti-affinity" if self.anti else "affinity"


@dataclass(frozen=True)
class FailoverToleration(Node):
    duration: Duration


@dataclass(frozen=True)
class Purge(Node):
    mode: Word


@dataclass(frozen=True)
class Grace(Node):
    duration: Duration


@dataclass(frozen=True)
class Preserve(Node):
    alias: Word
    json_path: Word


FailoverStmt = FailoverToleration | Purge | Grace | Preserve


@dataclass(frozen=True)
class Failover(Node):
    kind: Word  # application | cluster
    statements: tuple[FailoverStmt, ...]


@dataclass(frozen=True)
class Priority(Node):
    """``priority N``: spec.priority, the explicit priority of a policy (karmada pkg/detector/compare.go)."""

    value: Number


@dataclass(frozen=True)
class SchedulePriority(Node):
    """``priority class NAME``: spec.schedulePriority from the Kubernetes PriorityClass NAME (karmada pkg/detector
    BuildResourceBinding; the scheduler's queue orders bindings by it)."""

    class_name: Word


# the language's words for spec.preemption and spec.activationPreference → Karmada's values
PREEMPTION_MODES = {"always": "Always", "never": "Never"}
ACTIVATION_MODES = {"lazy": "Lazy"}


@dataclass(frozen=True)
class Preemption(Node):
    """``preemption always|never``: spec.preemption (karmada pkg/detector/preemption.go)."""

    mode: Word


@dataclass(frozen=True)
class Activation(Node):
    """``activation lazy``: spec.activationPreference Lazy (karmada pkg/detector ApplyPolicy)."""

    mode: Word


@dataclass(frozen=True)
class PropagateDeps(Node):
    """``propagate dependencies``: spec.propagateDeps (karmada pkg/dependenciesdistributor)."""

    what: Word


PolicyStmt = (
    Select
    | Priority
    | SchedulePriority
    | Preemption
    | Activation
    | PropagateDeps
    | ClusterAffinity
    | Toleration
    | Spread
    | Replicas
    | WorkloadTerm
    | Failover
)


@dataclass(frozen=True)
class Policy(Node):
    """``policy NAMESPACE/NAME`` is a PropagationPolicy of that namespace: it selects workloads of its own
    namespace only. ``policy NAME`` is a ClusterPropagationPolicy."""

    name: Word
    statements: tuple[PolicyStmt, ...]

    @property
    def namespace(self) -> str | None:
        """The namespace of a PropagationPolicy; None for a ClusterPropagationPolicy."""
        namespace, slash, _ = self.name.value.partition("/")
        return namespace if slash else None

    @property
    def priority(self) -> int:
        """ExplicitPriority: spec.priority, 0 when unset."""
        found = [s.value.value for s in self.statements if isinstance(s, Priority)]
        return found[0] if found else 0

    @property
    def preempts(self) -> bool:
        """spec.preemption is Always."""
        return any(isinstance(s, Preemption) and s.mode.value == "always" for s in self.statements)

    @cached_property
    def lazy(self) -> bool:
        """spec.activationPreference is Lazy (asked of every binding's policy by the reschedule triggers)."""
        return any(isinstance(s, Activation) and s.mode.value == "lazy" for s in self.statements)

    def of_type(self, kind: type[PolicyStmt]) -> tuple[PolicyStmt, ...]:
        return tuple(s for s in self.statements if isinstance(s, kind))


# ---------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Path(Node):
    """``c.labels["karmada.io/group"]``: a variable and the steps into its fact."""

    var: str
    steps: tuple[str, ...]


@dataclass(frozen=True)
class Literal(Node):
    value: str | int | bool


@dataclass(frozen=True)
class ListExpr(Node):
    items: tuple[Expr, ...]


class CompareOp(enum.Enum):
    EQ = "=="
    NE = "!="
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="


@dataclass(frozen=True)
class Compare(Node):
    op: CompareOp
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Member(Node):
    negated: bool
    item: Expr
    container: Expr


@dataclass(frozen=True)
class Not(Node):
    operand: Expr


@dataclass(frozen=True)
class And(Node):
    operands: tuple[Expr, ...]


@dataclass(frozen=True)
class Or(Node):
    operands: tuple[Expr, ...]


@dataclass(frozen=True)
class Call(Node):
    """``tolerates(x, t)``: a named condition (``Condition``), its parameters standing for the variables named."""

    name: Word
    args: tuple[Word, ...]


Expr = Path | Literal | ListExpr | Compare | Member | Not | And | Or | Call


def children(expr: Expr) -> tuple[Expr, ...]:
    """The expressions directly inside ``expr``, in order (a call's condition is not inside it)."""
    match expr:
        case Path() | Literal() | Call():
            return ()
        case ListExpr():
            return expr.items
        case Compare():
            return (expr.left, expr.right)
        case Member():
            return (expr.item, expr.container)
        case Not():
            return (expr.operand,)
        case And() | Or():
            return expr.operands
        case _:
            assert_never(expr)


def with_children(expr: Expr, new: Sequence[Expr]) -> Expr:
    """``expr`` with ``new`` in place of its ``children``, one for one."""
    match expr:
        case Path() | Literal() | Call():
            return expr
        case ListExpr():
            return replace(expr, items=tuple(new))
        case Compare():
            return replace(expr, left=new[0], right=new[1])
        case Member():
            return replace(expr, item=new[0], container=new[1])
        case Not():
            return replace(expr, operand=new[0])
        case And() | Or():
            return replace(expr, operands=tuple(new))
        case _:
            assert_never(expr)


def subexpressions(expr: Expr) -> Iterator[Expr]:
    """``expr`` and every expression inside it, depth first (not inside the conditions it calls)."""
    yield expr
    for child in children(expr):
        yield from subexpressions(child)


# ---------------------------------------------------------------- general rules


@dataclass(frozen=True)
class Pattern(Node):
    negated: bool
    fact_type: Word
    var: Word
    condition: Expr | None


@dataclass(frozen=True)
class Reject(Node):
    cluster: Word
    binding: Word
    message: Word  # the detail, per cluster
    reason: Word | None = None  # Karmada's words for the filter (default: the message)


@dataclass(frozen=True)
class Prefer(Node):
    cluster: Word
    binding: Word
    weight: Number


@dataclass(frozen=True)
class Assignment(Node):
    name: Word
    value: Expr


@dataclass(frozen=True)
class Derive(Node):
    fact_type: Word
    fields: tuple[Assignment, ...]


@dataclass(frozen=True)
class Evict(Node):
    binding: Word
    cluster: Word
    reason: Word
    message: Word


Action = Reject | Prefer | Derive | Evict


@dataclass(frozen=True)
class Rule(Node):
    name: Word
    patterns: tuple[Pattern, ...]
    actions: tuple[Action, ...]


@dataclass(frozen=True)
class Include(Node):
    path: Word


@dataclass(frozen=True)
class Condition(Node):
    """``condition NAME(X, Y) { EXPR }``: a condition written once, used in rules' patterns as ``NAME(A, B)``, where
    it is EXPR with X and Y standing for A and B (engine.syntax.conditions). A fleetrules extension."""

    name: Word
    params: tuple[Word, ...]
    body: Expr


Item = Include | Policy | Rule | Condition

# Every statement of the language, as the formatter prints it: a block holds statements, a leaf is one line. The
# places that act on statements match on these unions and end in ``assert_never``, so that mypy names each place
# a new statement is missing from (tests/test_language_checklist.py lists the places).
Block = Policy | Select | ClusterAffinity | Overflow | Failover | Rule | Condition
Leaf = (
    Include
    | SelectList
    | SelectLabels
    | ClusterList
    | ClusterSelector
    | Priority
    | SchedulePriority
    | Preemption
    | Activation
    | PropagateDeps
    | Toleration
    | Spread
    | Replicas
    | WorkloadTerm
    | FailoverToleration
    | Purge
    | Grace
    | Preserve
)
Statement = Block | Leaf


@dataclass(frozen=True)
class File(Node):
    path: str = field(compare=False)
    items: tuple[Item, ...]
    comments: tuple[Comment, ...] = ()

    @property
    def policies(self) -> tuple[Policy, ...]:
        return tuple(i for i in self.items if isinstance(i, Policy))

    @property
    def rules(self) -> tuple[Rule, ...]:
        return tuple(i for i in self.items if isinstance(i, Rule))

    @property
    def conditions(self) -> tuple[Condition, ...]:
        return tuple(i for i in self.items if isinstance(i, Condition))

    @property
    def includes(self) -> tuple[Include, ...]:
        return tuple(i for i in self.items if isinstance(i, Include))


def dump(node: object, indent: str = "") -> str:
    """An indented, position-annotated dump of a tree, for golden tests and debugging."""
    if isinstance(node, tuple):
        if not node:
            return "()"
        return "\n".join(f"{indent}- " + dump(item, indent + "  ").lstrip() for item in node)
    if isinstance(node, enum.Enum):
        return node.name
    if not isinstance(node, Node):
        return repr(node)
    where = f" @{node.span.line}:{node.span.column}-{node.span.end_line}:{node.span.end_column}"
    if isinstance(node, (Word, Number, Duration, Comment, Literal)):
        value = node.text if isinstance(node, Comment) else node.seconds if isinstance(node, Duration) else node.value
        return f"{indent}{type(node).__name__} {value!r}{where}"
    lines = [f"{indent}{type(node).__name__}{where}"]
    for name in node.__dataclass_fields__:
        if name == "span":
            continue
        value = getattr(node, name)
        text = dump(value, indent + "    ")
        if "\n" in text or (isinstance(value, (Node, tuple)) and value != ()):
            lines.append(f"{indent}  {name}:\n{text}")
        else:
            lines.append(f"{indent}  {name}: {text.strip()}")
    return "\n".join(lines)
