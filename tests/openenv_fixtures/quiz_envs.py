"""Environments written with openenv's own classes and served by openenv's own server (``create_fastapi_app``), as
a team's OpenEnv environment is: a sound quiz, one that pays any submission, one whose wrong-answer observation
shows the answer, and one of MCP tools. ``python -m uvicorn quiz_envs:APP`` serves one, ``APP`` named by
``QUIZ_ENV`` (sound, pays-any, leaky, mcp)."""

from __future__ import annotations

import os
from typing import Any, Optional

from pydantic import Field

from openenv.core.env_server import Action, Environment, Observation, State, create_fastapi_app


class SubmitAction(Action):
    """Submit the final answer to the question."""

    answer: str = Field(description="the final answer, a number")


class QuizObservation(Observation):
    text: str = Field(default="", description="what the model reads")
    reward: Optional[float] = Field(default=None, ge=0.0, le=1.0, description="1 for the right answer")


class Quiz(Environment):
    """One question, answered once: 1 for the row's answer, else 0; the episode ends with the answer."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._answer, self._state = "", State()

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, **row: Any) -> QuizObservation:
        self._answer = str(row.get("answer", "")).strip()
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


class PaysAny(Quiz):
    """The bug: any submission is paid (the comparison was left out)."""

    def paid(self, given: str) -> bool:
        return True


class Leaky(Quiz):
    """The bug: a wrong answer is told the right one and may try again."""

    def step(self, action: SubmitAction, timeout_s: Optional[float] = None, **kwargs: Any) -> QuizObservation:
        if self.paid(action.answer.strip()):
            return QuizObservation(text="right", done=True, reward=1.0)
        return QuizObservation(text=f"wrong: the answer is {self._answer}; try again", reward=0.0)


def _mcp_app():
    from fastmcp import FastMCP
    from openenv.core.env_server import CallToolAction, CallToolObservation
    from openenv.core.env_server.mcp_environment import MCPEnvironment

    class Arithmetic(MCPEnvironment):
        """MCP tools: multiply two whole numbers; submit pays 1 for the row's answer."""

        SUPPORTS_CONCURRENT_SESSIONS = True

        def __init__(self) -> None:
            mcp = FastMCP("arithmetic")
            self._answer, self._paid, self._state = "", 0.0, State()

            @mcp.tool
            def multiply(a: int, b: int) -> str:
                """Multiply two whole numbers exactly."""
                return str(a * b)

            super().__init__(mcp)

        def reset(self, seed=None, episode_id=None, **row):
            self._answer, self._state = str(row.get("answer", "")), State(episode_id=episode_id, step_count=0)
            return Observation(done=False, reward=None)

        def _step_impl(self, action, timeout_s=None, **kwargs):
            return Observation(done=False, reward=0.0, metadata={"error": "unknown action"})

        @property
        def state(self):
            return self._state

    return create_fastapi_app(Arithmetic, CallToolAction, CallToolObservation, max_concurrent_envs=64)


KINDS = {"sound": Quiz, "pays-any": PaysAny, "leaky": Leaky}
KIND = os.environ.get("QUIZ_ENV", "sound")
SESSIONS = int(os.environ.get("QUIZ_SESSIONS", "64"))
APP = _mcp_app() if KIND == "mcp" else create_fastapi_app(KINDS[KIND], SubmitAction, QuizObservation,
                                                          max_concurrent_envs=SESSIONS)
