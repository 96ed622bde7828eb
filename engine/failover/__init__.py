"""Stateful failover: Karmada's controllers (controllers) and the simulation through time (simulate)."""
