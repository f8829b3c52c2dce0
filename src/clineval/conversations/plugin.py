"""The multi-agent conversations package's registration (called by :func:`clineval.plugins.load_plugins`).

It registers the conversation metrics (orchestrator and per-agent, each with
:func:`clineval.metrics.metric` as :mod:`clineval.conversations.metrics` is imported) and
the ``conversations`` dataset folder format (a folder of saved conversations, one case per
conversation), so that neither the metric registry nor the dataset loader imports this
package.
"""

from __future__ import annotations

from clineval.datasets.formats import register_folder_format


def register() -> None:
    """Register the conversation metrics and the ``conversations`` folder format."""
    from clineval.conversations import metrics  # noqa: F401  (each metric registers itself on import)

    register_folder_format(
        "conversations",
        "clineval.conversations.loaders:conversations_dataset",
        "a folder of saved conversations, one case per conversation",
    )
