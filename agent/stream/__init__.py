"""The stream, one package: the turn's state (turn.py), a typed constructor for every message
shape of the contract (messages.py), the events that update the turn (events.py) and its paced
snapshots (updates.py), and the narrow handle a kind of run shows things through (show.py).
It is the stream's one writer: outside it nothing builds a stream message, and an `AgentError`
is rendered in one place, `Turn.fail`.
"""

from agent.stream.events import MODEL_NODE, AnswerText, apply
from agent.stream.show import Show
from agent.stream.turn import MAX_OUTPUT_CHARS, Turn
from agent.stream.updates import updates

__all__ = ["MAX_OUTPUT_CHARS", "MODEL_NODE", "AnswerText", "Show", "Turn", "apply", "updates"]
