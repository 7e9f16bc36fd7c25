"""The `workflow_step` stream messages (CONTRACT.md): one per step, updated in place."""

from __future__ import annotations

import json
import time
from typing import Any, Literal, cast

from agent.stream import MAX_OUTPUT_CHARS, Show, messages
from agent.workflows.definitions import Definition, Step


class Timeline:
    """The step messages of one execution in this turn's stream."""

    def __init__(self, show: Show, definition: Definition, execution_id: int) -> None:
        self.show = show
        self.definition = definition
        self.execution_id = execution_id
        self._cards: dict[int, int] = {}
        self._started: dict[int, float] = {}

    def running(self, index: int, step: Step, step_input: Any = None) -> None:
        self._started[index] = time.monotonic()
        metadata = messages.workflow_step(
            execution_id=self.execution_id,
            step_index=index,
            name=step.name,
            step_type=step.type,
            workflow=self.definition.name,
            title=step.title or step.name,
            total_steps=len(self.definition.steps),
        )
        if step_input is not None:
            metadata["input"] = bounded(step_input)
        if index in self._cards:
            self.show.update(self._cards[index], metadata, "")
        else:
            self._cards[index] = self.show.card(metadata)

    def text(self, index: int, delta: str) -> None:
        self.show.card_text(self._cards[index], delta)

    def completed(self, index: int, step: Step, output: Any) -> int:
        metadata = self._finish(index, step, "completed")
        metadata["output"] = bounded(output)
        return self._show(index, metadata)

    def failed(self, index: int, step: Step, error: dict[str, str]) -> int:
        metadata = self._finish(index, step, "failed")
        metadata["error"] = cast(messages.ErrorBody, error)
        return self._show(index, metadata)

    def _finish(
        self, index: int, step: Step, status: Literal["completed", "failed"]
    ) -> messages.WorkflowStep:
        if index not in self._cards:
            self.running(index, step)
        metadata = cast(messages.WorkflowStep, dict(self.show.card_metadata(self._cards[index])))
        metadata["status"] = status
        metadata["duration_ms"] = self.elapsed_ms(index)
        return metadata

    def _show(self, index: int, metadata: messages.WorkflowStep) -> int:
        self.show.update(self._cards[index], metadata, "")
        return metadata.get("duration_ms", 0)

    def elapsed_ms(self, index: int) -> int:
        started = self._started.get(index)
        return 0 if started is None else int((time.monotonic() - started) * 1000)


def bounded(value: Any) -> Any:
    """A value small enough for a stream message and a step row."""
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    if len(text) <= MAX_OUTPUT_CHARS:
        return value
    return {"truncated": True, "preview": text[:MAX_OUTPUT_CHARS]}
