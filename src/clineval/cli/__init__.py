"""The command-line interface (entry point ``clineval``)."""

import os as _os
import sys as _sys


def _running_as_command() -> bool:
    """True while the ``clineval`` command (or ``python -m clineval.cli.main``) is starting."""
    first = _sys.argv[0] if _sys.argv else ""
    return first == "-m" or _os.path.basename(first).removesuffix(".exe") == "clineval"


if _running_as_command():  # not when a program or a test imports the package
    from clineval.interrupts import quiet_startup_interrupts

    quiet_startup_interrupts()
