"""Which resource templates Karmada's detector binds, and the names it binds them by: the cases of karmada
pkg/detector/detector_test.go (TestEventFilter), pkg/util/names/names_test.go (TestGenerateBindingName,
TestIsReservedNamespace), the controller manager's --skipped-propagating-namespaces
(cmd/controller-manager/app/options: options.go SkippedNamespacesRegexps, validation.go) and the API server's name
validation per kind (a ClusterRole's name is a path segment, a Service's a DNS-1035 label)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engine import Result, evaluate, load_facts, load_rules, to_json, to_text
from engine.cli import main
from engine.detector.templates import DEFAULT_SKIPPED_NAMESPACES, is_reserved_namespace, not_propagated
from engine.errors import FactError
from engine.inputs.facts import Binding, binding_name
from engine.karmada.gates import Controllers
from engine.kube import validation as k8s

CLUSTER = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "m1"}}
EVERYTHING = """
policy everything {
  select { kind Pod, ConfigMap, Deployment, Node, ClusterRole, RoleBinding }
  clusters { names m1 }
}
"""


def template(kind: str, name: str, namespace: str | None = None, api_version: str = "v1") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}


def evaluated(
    tmp_path: Path, objects: list[dict[str, Any]], flags: tuple[str, ...] = (), rules: str = EVERYTHING
) -> Result:
    (tmp_path / "rules.fr").write_text(rules)
    facts = load_facts(objects=[CLUSTER, *objects])
    return evaluate(load_rules([tmp_path / "rules.fr"]), facts, controllers=Controllers.parse(flags))


# detector_test.go TestEventFilter: (name, object, --skipped-propagating-namespaces, propagated)
EVENT_FILTER = [
    ("object in karmada-system namespace", template("Pod", "test-obj", "karmada-system"), None, False),
    ("object in karmada-cluster namespace", template("Pod", "test-obj", "karmada-cluster"), None, False),
    ("object in karmada-es-* namespace", template("Pod", "test-obj", "karmada-es-test"), None, False),
    ("object in skipped namespace", template("Pod", "test-obj", "kube-system"), "kube-.*", False),
    # Karmada's test gives no patterns here; the controller manager's default (kube-.*) does not match either
    ("object in non-skipped namespace", template("Pod", "test-obj", "default"), None, True),
    (
        "extension-apiserver-authentication configmap in kube-system",
        template("ConfigMap", "extension-apiserver-authentication", "kube-system"),
        "",  # not even when kube-system is not skipped
        False,
    ),
    ("cluster-scoped resource", template("Node", "test-node"), None, True),
]


@pytest.mark.parametrize(("case", "obj", "skipped", "propagated"), EVENT_FILTER, ids=[c[0] for c in EVENT_FILTER])
def test_event_filter(tmp_path: Path, case: str, obj: dict[str, Any], skipped: str | None, propagated: bool) -> None:
    flags = () if skipped is None else (f"skipped-propagating-namespaces={skipped}",)
    result = evaluated(tmp_path, [obj], flags)
    assert bool(result.placements) is propagated
    assert bool(result.not_propagated) is not propagated


def test_the_default_skips_kube_namespaces_and_says_why(tmp_path: Path) -> None:
    objects = [
        template("ConfigMap", "coredns", "kube-system"),
        template("ConfigMap", "cluster-info", "kube-public"),
        template("ConfigMap", "web", "kube"),  # ^kube-.*$ wants the dash
        template("ConfigMap", "web", "shop"),
        template("ConfigMap", "agent", "karmada-system"),
    ]
    result = evaluated(tmp_path, objects)
    assert [p.binding for p in result.placements] == ["kube/web-configmap", "shop/web-configmap"]
    reasons = {n.binding: n.reason for n in result.not_propagated}
    assert reasons == {
        "karmada-system/agent-configmap": "ReservedNamespace",
        "kube-public/cluster-info-configmap": "SkippedNamespace",
        "kube-system/coredns-configmap": "SkippedNamespace",
    }
    text = to_text(result)
    assert "not propagated: 3 resource templates the resource detector never binds" in text
    assert "namespace kube-system matches --skipped-propagating-namespaces kube-.*: kube-system/coredns-configmap" in (
        text
    )
    assert "namespace karmada-system is reserved by Karmada: karmada-system/agent-configmap" in text
    data = json.loads(to_json(result))
    assert data["notPropagated"][0] == {
        "binding": "karmada-system/agent-configmap",
        "kind": "ConfigMap",
        "namespace": "karmada-system",
        "name": "agent",
        "reason": "ReservedNamespace",
        "message": "namespace karmada-system is reserved by Karmada",
    }


def test_skipped_namespaces_flag_as_pflag_reads_it(tmp_path: Path) -> None:
    """A StringSlice: comma-separated (CSV), the first use replaces the default, later ones add, "" is none."""
    assert Controllers().skipped_namespaces.patterns == ("kube-.*",)
    assert Controllers.parse(["skipped-propagating-namespaces=istio-.*,team-a"]).skipped_namespaces.patterns == (
        "istio-.*",
        "team-a",
    )
    twice = ["--skipped-propagating-namespaces=a", "skipped-propagating-namespaces=b"]
    assert Controllers.parse(twice).skipped_namespaces.patterns == ("a", "b")
    assert Controllers.parse(["skipped-propagating-namespaces="]).skipped_namespaces.patterns == ()
    objects = [template("ConfigMap", "c", "kube-system"), template("ConfigMap", "c", "istio-system")]
    result = evaluated(tmp_path, objects, ("skipped-propagating-namespaces=istio-.*",))
    assert [p.binding for p in result.placements] == ["kube-system/c-configmap"]
    assert [n.binding for n in result.not_propagated] == ["istio-system/c-configmap"]


def test_patterns_are_anchored_as_go_anchors_them(tmp_path: Path) -> None:
    """regexp.MustCompile(fmt.Sprintf("^%s$", ns)) and MatchString: ``^a|b$`` is ``^a`` or ``b$``; a pattern
    that matches "" skips cluster-scoped templates too, as in Karmada."""
    skipped = Controllers.parse(["skipped-propagating-namespaces=team|ops"]).skipped_namespaces
    assert skipped.matching("team-x") == "team|ops"  # ^team
    assert skipped.matching("devops") == "team|ops"  # ops$
    assert skipped.matching("my-team") is None
    result = evaluated(tmp_path, [template("Node", "n1")], ("skipped-propagating-namespaces=.*",))
    assert not result.placements
    assert "a cluster-scoped template" in result.not_propagated[0].message


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("a(", "missing ), unterminated subpattern"),
        ("(?!kube)", "lookaround"),
        ("(a)\\1", "backreference"),
        ("\\pL+", "Unicode character classes"),
        ("[[:alpha:]]+", "POSIX character classes"),
    ],
)
def test_invalid_namespace_patterns_refused_in_karmadas_words(pattern: str, why: str) -> None:
    with pytest.raises(ValueError) as raised:
        Controllers.parse([f"skipped-propagating-namespaces={pattern}"])
    message = str(raised.value)
    assert message.startswith("SkippedPropagatingNamespaces[0]: Invalid value: ")
    assert "Invalid namespace regular expression" in message and why in message


# names_test.go TestGenerateBindingName
BINDING_NAMES = [
    ("uppercase kind", "Pods", "pod", "pod-pods"),
    ("uppercase name", "pods", "Pod", "pod-pods"),
    ("role kind resource", "Role", "system:controller:tom", "system.controller.tom-role"),
    ("clusterRole kind resource", "ClusterRole", "system::tom", "system..tom-clusterrole"),
    ("roleBinding kind resource", "RoleBinding", "system::tt:tom", "system..tt.tom-rolebinding"),
    ("clusterRoleBinding kind resource", "ClusterRoleBinding", "system:tt:tom", "system.tt.tom-clusterrolebinding"),
]


@pytest.mark.parametrize(("case", "kind", "name", "expect"), BINDING_NAMES, ids=[c[0] for c in BINDING_NAMES])
def test_generate_binding_name(case: str, kind: str, name: str, expect: str) -> None:
    assert binding_name(name, kind) == expect


# names_test.go TestIsReservedNamespace
@pytest.mark.parametrize(
    ("namespace", "reserved"),
    [("karmada-system", True), ("karmada-cluster", True), ("karmada-es-", True), ("test-A", False)],
)
def test_is_reserved_namespace(namespace: str, reserved: bool) -> None:
    assert is_reserved_namespace(namespace) is reserved


def test_rbac_names_with_colons_are_placed(tmp_path: Path) -> None:
    """Every cluster has system:… roles: a ClusterRole is a path segment, and its binding's name has dots."""
    objects = [
        template("ClusterRole", "monitoring:metrics-reader", api_version="rbac.authorization.k8s.io/v1"),
        template("RoleBinding", "system:controller:x", "shop", api_version="rbac.authorization.k8s.io/v1"),
    ]
    result = evaluated(tmp_path, objects)
    assert [p.binding for p in result.placements] == [
        "monitoring.metrics-reader-clusterrole",
        "shop/system.controller.x-rolebinding",
    ]
    assert [p.clusters for p in result.placements] == [("m1",), ("m1",)]


def test_a_binding_name_the_api_server_refuses_is_never_bound(tmp_path: Path) -> None:
    """``system::tom`` is a valid ClusterRole name; its binding ``system..tom-clusterrole`` is no DNS subdomain."""
    rbac = "rbac.authorization.k8s.io/v1"
    objects = [
        template("ClusterRole", "system::tom", api_version=rbac),
        template("ClusterRole", "ok", api_version=rbac),
    ]
    result = evaluated(tmp_path, objects)
    assert [p.binding for p in result.placements] == ["ok-clusterrole"]
    assert [(n.binding, n.reason) for n in result.not_propagated] == [("system..tom-clusterrole", "InvalidBindingName")]


def test_two_templates_one_binding_name(tmp_path: Path) -> None:
    """``a:b`` and ``a.b`` make one binding name: Karmada binds one (the other's update fails on the owner), the
    rest of the snapshot stands, and a warning names both."""
    rbac = "rbac.authorization.k8s.io/v1"
    facts = load_facts(
        objects=[template("ClusterRole", "a:b", api_version=rbac), template("ClusterRole", "a.b", api_version=rbac)]
    )
    assert [b.key for b in facts.bindings] == ["a.b-clusterrole"]
    assert any("not bound: its binding a.b-clusterrole is ClusterRole" in w.message for w in facts.warnings)


@pytest.mark.parametrize(
    ("api_version", "kind", "name", "valid"),
    [
        ("rbac.authorization.k8s.io/v1", "ClusterRole", "system:aggregate-to-admin", True),
        ("rbac.authorization.k8s.io/v1", "ClusterRole", "Mixed Case & symbols", True),
        ("rbac.authorization.k8s.io/v1", "ClusterRole", "a/b", False),
        ("rbac.authorization.k8s.io/v1", "Role", "..", False),
        ("rbac.authorization.k8s.io/v1", "RoleBinding", "100%", False),
        ("v1", "ConfigMap", "my.config", True),
        ("v1", "ConfigMap", "Bad_Name", False),
        ("v1", "Service", "my.service", False),  # a DNS-1035 label: no dots
        ("v1", "Service", "1st", False),  # starts with a letter
        ("v1", "Namespace", "a.b", False),
        ("apps/v1", "Deployment", "system:x", False),
        ("batch/v1", "CronJob", "c" * 53, False),
        ("batch/v1", "CronJob", "c" * 52, True),
        ("flink.apache.org/v1beta1", "FlinkDeployment", "orders.v2", True),
    ],
)
def test_names_per_kind_as_the_api_server_takes_them(api_version: str, kind: str, name: str, valid: bool) -> None:
    assert (not k8s.name_problems(api_version, kind, name)) is valid


def test_an_object_the_api_server_refuses_is_skipped_with_a_warning(tmp_path: Path) -> None:
    objects = [template("ConfigMap", "Bad_Name", "shop"), template("ConfigMap", "good", "shop")]
    facts = load_facts(objects=[CLUSTER, *objects])
    assert [b.key for b in facts.bindings] == ["shop/good-configmap"]
    (warned,) = [w for w in facts.warnings if "Bad_Name" in w.message]
    assert "the API server refuses it: skipped" in warned.message


def test_a_cluster_with_an_invalid_name_is_still_an_error() -> None:
    with pytest.raises(FactError):
        load_facts(objects=[{**CLUSTER, "metadata": {"name": "Member_1"}}])


def test_selector_names_are_checked_per_kind(tmp_path: Path) -> None:
    """Karmada takes any name in a resource selector; one no object of the kinds can have selects nothing."""
    path = tmp_path / "rules.fr"
    path.write_text('policy p {\n  select { kind ClusterRole name "system:node" }\n}\n')
    assert not load_rules([path]).warnings
    path.write_text('policy p {\n  select { kind Deployment name "system:node" }\n}\n')
    (warned,) = load_rules([path]).warnings
    assert "selects nothing: a Deployment's name is a DNS-1123 subdomain" in warned.message
    path.write_text('policy p {\n  select { kind Deployment, ClusterRole name "system:node" }\n}\n')
    assert not load_rules([path]).warnings


def test_not_propagated_only_for_templates() -> None:
    """A ResourceBinding in the snapshot is scheduled whatever its namespace: the detector made it already."""
    made = Binding(namespace="kube-system", name="x-deployment", kind="Deployment", resource_name="x")
    assert not_propagated(made, DEFAULT_SKIPPED_NAMESPACES) is not None  # as a template it would be skipped
    from engine.detector.templates import detected

    kept, dropped = detected((made,), DEFAULT_SKIPPED_NAMESPACES)
    assert kept == (made,) and not dropped


def test_typed_lists_as_the_api_server_returns_them() -> None:
    """A DeploymentList's items carry no kind nor apiVersion: the list's; each keeps its position."""
    text = (
        "apiVersion: apps/v1\nkind: DeploymentList\nitems:\n- metadata: {name: web, namespace: shop}\n"
        "  spec: {replicas: 2}\n- metadata: {name: Bad_Name, namespace: shop}\n---\n"
        "apiVersion: cluster.karmada.io/v1alpha1\nkind: ClusterList\nitems:\n- metadata: {name: m1}\n"
    )
    facts = load_facts(texts=[("dump.yaml", text)])
    assert [c.name for c in facts.clusters] == ["m1"]
    assert [(b.key, b.api_version, b.replicas) for b in facts.bindings] == [("shop/web-deployment", "apps/v1", 2)]
    (warned,) = [w for w in facts.warnings if "Bad_Name" in w.message]
    assert warned.span is not None and warned.span.line == 6


def test_many_templates_no_policy_selects_are_counted_by_kind(tmp_path: Path) -> None:
    """A dump holds hundreds of templates no policy selects: beyond three, counted by kind in the text and in one
    warning; --rejections all (every) lists each."""
    rbac = "rbac.authorization.k8s.io/v1"
    roles = [template("ClusterRole", f"system:role-{i}", api_version=rbac) for i in range(5)]
    result = evaluated(
        tmp_path, [*roles, template("Service", "web", "shop")], rules="policy p {\n  select { kind Pod }\n}\n"
    )
    text = to_text(result)
    assert "no policy selects 6 bindings (--rejections all lists each):" in text
    assert (
        "  clusterrole 5: system.role-0-clusterrole, system.role-1-clusterrole, system.role-2-clusterrole and 2 more"
        in (text)
    )
    assert "system.role-4-clusterrole: no policy selects it" in to_text(result, every_cluster=True)
    (said,) = [w for w in result.warnings if "no policy selects" in w.message]
    assert said.message.startswith("no policy selects 6 bindings: ClusterRole 5 (")


def test_explain_names_why_a_template_is_not_propagated(tmp_path: Path) -> None:
    (tmp_path / "snap.yaml").write_text(
        "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: m1}\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: kube-system}\n"
    )
    (tmp_path / "p.fr").write_text("policy p {\n  select { kind ConfigMap }\n}\n")
    result = CliRunner().invoke(
        main, ["explain", str(tmp_path / "p.fr"), "--facts", str(tmp_path / "snap.yaml"),
               "--binding", "kube-system/c-configmap", "--cluster", "m1"]
    )  # fmt: skip
    assert result.exit_code == 2
    assert "kube-system/c-configmap is not propagated: namespace kube-system matches" in result.output
