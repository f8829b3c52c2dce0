"""The local web viewer (``clineval view``) and the self-contained HTML report.

:func:`clineval.viewer.app.create_app` builds the read-only web app over a run store;
:mod:`clineval.viewer.data` holds its queries. Nothing heavy is imported here: the CLI
imports these modules only when ``clineval view`` or ``clineval report`` runs.
"""
