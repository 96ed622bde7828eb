"""Karmada's controllers as fleetrules runs them over a world that changes in time, one module each: the
taint manager (pkg/controllers/cluster/taint_manager.go) and the application failover controller
(pkg/controllers/applicationfailover) create graceful eviction tasks, the scheduler places the evicted bindings
again, the graceful eviction controller (pkg/controllers/gracefuleviction) removes tasks, and the binding
controller (pkg/controllers/binding) creates and deletes the Works, injecting preserved labels. Their decisions
to evict are rules (rules/taint_manager.fr, rules/application_failover.fr); these modules keep their clocks, their
tasks and what the rules cannot say. ``failover`` runs them in the order Karmada's do.
"""
