"""``python -m symgrad`` runs the command-line app."""
from symgrad_cli.main import main

main(prog_name="symgrad")
