"""The command-line interface (entry point ``clineval``)."""
