"""``python -m engine`` runs the fleetrules command line."""

from engine.cli import main

main()
