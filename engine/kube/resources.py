"""Resource lists as Karmada's util.Resource computes with them (pkg/util/resource.go).

A Resource keeps CPU in millicores and every other resource as Quantity.Value (rounded up);
resource names that are neither native nor scalar (extended, hugepages, attachable volumes,
``kubernetes.io/``-prefixed) are not counted, as in Karmada.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction

from engine.kube.quantity import milli_value, value
from engine.kube.validation import qualified_name_problems

CPU, MEMORY, PODS, EPHEMERAL = "cpu", "memory", "pods", "ephemeral-storage"
_NATIVE_PREFIX = "kubernetes.io/"

ResourceList = Mapping[str, Fraction]


def is_scalar(name: str) -> bool:
    """lifted.IsScalarResourceName: extended, hugepages, prefixed native or attachable-volumes resources."""
    native = "/" not in name or _NATIVE_PREFIX in name
    extended = not native and not name.startswith("requests.") and not qualified_name_problems(f"requests.{name}")
    return extended or name.startswith("hugepages-") or _NATIVE_PREFIX in name or name.startswith("attachable-volumes-")


def units(name: str, quantity: Fraction) -> int:
    """The integer util.Resource keeps for one resource: millicores for CPU, Value otherwise."""
    return milli_value(quantity) if name == CPU else value(quantity)


def counted(name: str) -> bool:
    return name in (CPU, MEMORY, PODS, EPHEMERAL) or is_scalar(name)


def to_units(resources: ResourceList) -> dict[str, int]:
    """util.NewResource: the resources Karmada counts, in its units."""
    out: dict[str, int] = {}
    for name, quantity in resources.items():
        if counted(name):
            out[name] = out.get(name, 0) + units(name, quantity)
    return out


def from_units(amounts: Mapping[str, int]) -> dict[str, Fraction]:
    """Resource.ResourceList: the positive amounts back as quantities."""
    return {
        name: Fraction(amount, 1000) if name == CPU else Fraction(amount)
        for name, amount in sorted(amounts.items())
        if amount > 0
    }


def effective_requests(
    containers: Iterable[tuple[ResourceList, ResourceList]],
    init_containers: Iterable[tuple[ResourceList, ResourceList]],
    overhead: ResourceList,
) -> dict[str, Fraction]:
    """Resource.AddPodTemplateRequest: each container's requests, defaulted from its limits; the sum over
    containers, raised to the largest init container's, plus the pod overhead. Each item is
    (requests, limits)."""
    total: dict[str, int] = {}
    for requests, limits in containers:
        for name, amount in to_units({**limits, **requests}).items():
            total[name] = total.get(name, 0) + amount
    for requests, limits in init_containers:
        for name, amount in to_units({**limits, **requests}).items():
            total[name] = max(total.get(name, 0), amount)
    for name, amount in to_units(overhead).items():
        total[name] = total.get(name, 0) + amount
    return from_units(total)
