"""symgrad's command-line app (installed as the package ``symgrad_cli``)."""
