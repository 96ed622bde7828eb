"""Karmada's resource detector and dependencies distributor: what happens to a template before the scheduler.

``templates``: which templates the detector sees at all, and the binding it builds for each (pkg/detector
detector.go); ``policy``: which policy claims each (pkg/detector policy.go, preemption.go); ``dependencies``:
the bindings the dependencies distributor attaches for a policy's propagateDeps (pkg/dependenciesdistributor).
"""
