"""An environment written for OpenEnv, with openenv's own classes and served by openenv's own server: one question
per episode, answered once with the ``submit`` action, paid 1 for the row's answer.

    uvicorn openenv_quiz:app --port 8000       # from this folder (pip install "grpo-core[openenv]")
    grpo-run check --env http://127.0.0.1:8000 --dataset arithmetic
    grpo-run --env http://127.0.0.1:8000 --dataset arithmetic

grpo-run reads the server as a TRL environment class: ``submit`` is a tool with the action's field ``answer`` as its
argument, reset gets the row's columns, and the episode's reward is the sum of its step rewards, within the bounds
the observation declares for ``reward`` (``ge``/``le``).
"""

from __future__ import annotations

from typing import Any, Optional

from openenv.core.env_server import Action, Environment, Observation, State, create_fastapi_app
from pydantic import Field


class SubmitAction(Action):
    """Submit the final answer to the question."""

    answer: str = Field(description="the final answer, a number")


class QuizObservation(Observation):
    text: str = Field(default="", description="what the model reads")
    reward: Optional[float] = Field(default=None, ge=0.0, le=1.0, description="1 for the right answer")


class Quiz(Environment):
    """One question, answered once: 1 for the row's answer, else 0; the episode ends with the answer."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # each session has its own instance: episodes share nothing

    def __init__(self) -> None:
        super().__init__()
        self._answer, self._state = "", State()

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, **row: Any) -> QuizObservation:
        self._answer = str(row.get("answer", "")).strip()  # kept for the reward, never shown
        self._state = State(episode_id=episode_id, step_count=0)
        return QuizObservation(text="Submit your answer with the submit tool.")

    def step(self, action: SubmitAction, timeout_s: Optional[float] = None, **kwargs: Any) -> QuizObservation:
        self._state.step_count += 1
        right = self.paid(action.answer.strip())
        return QuizObservation(text="right" if right else "wrong", done=True, reward=1.0 if right else 0.0)

    def paid(self, given: str) -> bool:
        return given == self._answer

    @property
    def state(self) -> State:
        return self._state


# A training step plays per_device_train_batch_size episodes at once, each a session of its own.
app = create_fastapi_app(Quiz, SubmitAction, QuizObservation, max_concurrent_envs=64)
