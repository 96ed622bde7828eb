"""Failover through time: the simulation (simulate) of events, Karmada's controllers (engine.karmada.controllers)
and the scheduler on one session."""
