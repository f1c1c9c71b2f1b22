"""``python -m aieval`` runs the command line."""

from aieval.cli import main

main()
