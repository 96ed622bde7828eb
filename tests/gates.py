"""The flags of the control plane the tests' fleets run on: the taint manager and the feature gates of the features
the examples use, on (Karmada ships them off). The CLI reads them from FLEETRULES_CONTROLLER, which tests/conftest.py
sets for every test; the Python API takes no variable, and its tests pass ``ON``. Tests of Karmada's defaults clear
the variable or pass ``DEFAULT_CONTROLLERS``."""

from __future__ import annotations

from engine.karmada.gates import Controllers

ON_FLAGS = (
    "enable-no-execute-taint-eviction=true",
    "feature-gates=Failover=true,StatefulFailoverInjection=true,WorkloadAffinity=true,MultiplePodTemplatesScheduling=true",
)
ON = Controllers.parse(ON_FLAGS)
