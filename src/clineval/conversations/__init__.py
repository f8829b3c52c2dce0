"""Multi-agent conversations (Healthcare Agent Orchestrator): transcripts, segments, simulation and metrics.

See docs/conversations.md.
"""

from clineval.conversations.cases import conversation_of, conversation_to_case
from clineval.conversations.loaders import conversations_dataset, load_conversations
from clineval.conversations.model import Conversation, Message, ToolCallRecord, render_transcript
from clineval.conversations.scenarios import Scenario, load_scenarios
from clineval.conversations.segments import Segment, agent_segments, user_turns
from clineval.conversations.simulate import (
    load_simulation_config,
    score_conversations,
    simulate_and_score,
    simulate_conversation,
)
from clineval.conversations.users import LLMUser, ScriptedUser

__all__ = [
    "Conversation",
    "LLMUser",
    "Message",
    "Scenario",
    "ScriptedUser",
    "Segment",
    "ToolCallRecord",
    "agent_segments",
    "conversation_of",
    "conversation_to_case",
    "conversations_dataset",
    "load_conversations",
    "load_scenarios",
    "load_simulation_config",
    "render_transcript",
    "score_conversations",
    "simulate_and_score",
    "simulate_conversation",
    "user_turns",
]
