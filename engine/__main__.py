"""``python -m engine`` runs the fleetrules command line."""

from engine.cli import run

run()
