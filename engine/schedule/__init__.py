"""Karmada's scheduler: the queue (queue), which bindings run (reschedule), the session's facts (store), the filter
stage over the backend's decisions (feasibility), scores, select and assign (scheduler, generic, spread, replicas),
explanations (explain), shared result views (views); a sweep's kept unschedulable bindings (waiting)."""
