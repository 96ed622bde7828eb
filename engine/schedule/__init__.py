"""The scheduler: which policy claims a binding (selection), feasibility, scores and selection over
the backend's decisions (scheduler), explanations (explain), shared result views (views)."""
