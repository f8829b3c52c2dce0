"""Multi-agent conversations (seed 000): transcripts, segments, simulation and metrics.

See docs/conversations.md.
"""

from clineval.conversations.cases import conversation_of, conversation_to_case
from clineval.conversations.model import Conversation, Message, ToolCallRecord, render_transcript

__all__ = [
    "Conversation",
    "Message",
    "ToolCallRecord",
    "conversation_of",
    "conversation_to_case",
    "render_transcript",
]
