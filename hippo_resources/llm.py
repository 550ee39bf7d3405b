"""`LLM`: the Anthropic Messages API or any OpenAI-compatible chat endpoint (a local server included),
through instructor, returning pydantic models and token usage.

The one place the pipeline talks to a language model; `HIPPO_LLM_PROVIDER` (or HIPPO_LLM_BASE_URL) chooses
the API, and every caller uses `structured(...)` the same way. Without a key (Anthropic) or an endpoint
(OpenAI-compatible) it is disabled and the assets fall back to the deterministic offline compiler and judge. Malformed output is re-asked
(`max_retries`) with the validation error shown to the model; every attempt's tokens are counted.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from dagster import ConfigurableResource
from pydantic import BaseModel, Field

from hippo_core.wiki.cards import CompileOutput
from hippo_core.wiki.compile_offline import JudgeVerdict, RelatedPage
from hippo_core.wiki.prompts import COMPILER_SYSTEM, JUDGE_SYSTEM, compile_prompt, judge_prompt

T = TypeVar("T", bound=BaseModel)


class LLMError(RuntimeError):
    """The model could not produce valid output within the retries, or the API refused the call."""


class Usage(BaseModel):
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, other: Usage) -> Usage:
        return Usage(
            calls=self.calls + other.calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
        )

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens


class LLM(ConfigurableResource):
    provider: Literal["anthropic", "openai"] = Field(default="anthropic", description="HIPPO_LLM_PROVIDER")
    api_key: str | None = Field(
        default=None,
        description="ANTHROPIC_API_KEY, or HIPPO_LLM_API_KEY for an OpenAI-compatible endpoint (an EnvVar in "
        "Definitions); without it (and without an endpoint) the offline compiler runs.",
    )
    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint (HIPPO_LLM_BASE_URL).")
    model: str = Field(default="claude-sonnet-4-5", description="HIPPO_LLM_MODEL")
    max_tokens: int = Field(default=4096, description="Output token budget per call (HIPPO_LLM_MAX_TOKENS).")
    max_retries: int = Field(default=2, description="Re-asks on malformed output (HIPPO_LLM_RETRIES).")
    run_token_budget: int = Field(
        default=200_000, description="Stop calling once a run has used this many tokens."
    )
    timeout_seconds: float = 120.0

    @property
    def enabled(self) -> bool:
        if self.provider == "openai":
            return bool(self.api_key or self.base_url)  # a local server needs no key
        return bool(self.api_key)

    @property
    def name(self) -> str:
        return f"{self.provider}:{self.model}"

    def http_client(self) -> Any:
        """The HTTP client the SDK uses (None = its default). Tests replace the transport here."""
        return None

    def _instructor(self) -> Any:
        import instructor

        kwargs: dict[str, Any] = {"api_key": self.api_key, "max_retries": 1, "timeout": self.timeout_seconds}
        client = self.http_client()
        if client is not None:
            kwargs["http_client"] = client
        if self.provider == "openai":
            import openai

            kwargs["api_key"] = self.api_key or "unused"  # the client wants one; a local server ignores it
            kwargs["base_url"] = self.base_url
            # OpenAI itself: tool calls; another server (llama.cpp, Ollama, vLLM): JSON output, which they
            # all support, tools not always.
            mode = instructor.Mode.JSON if self.base_url else instructor.Mode.TOOLS
            return instructor.from_openai(openai.OpenAI(**kwargs), mode=mode)
        import anthropic

        return instructor.from_anthropic(anthropic.Anthropic(**kwargs), mode=instructor.Mode.ANTHROPIC_TOOLS)

    def structured(self, response_model: type[T], system: str, prompt: str) -> tuple[T, Usage]:
        """One structured call (with re-asks). Returns the parsed model and the tokens of every attempt."""
        if not self.enabled:
            missing = (
                "HIPPO_LLM_BASE_URL or HIPPO_LLM_API_KEY"
                if self.provider == "openai"
                else "ANTHROPIC_API_KEY"
            )
            raise LLMError(f"no {missing}: the LLM is disabled")
        from instructor.core import InstructorRetryException

        client = self._instructor()
        attempts: list[Usage] = []

        def count(response: Any) -> None:
            u = getattr(response, "usage", None)
            attempts.append(  # Anthropic counts input/output tokens, OpenAI prompt/completion tokens
                Usage(
                    calls=1,
                    input_tokens=int(getattr(u, "input_tokens", 0) or getattr(u, "prompt_tokens", 0) or 0),
                    output_tokens=int(
                        getattr(u, "output_tokens", 0) or getattr(u, "completion_tokens", 0) or 0
                    ),
                )
            )

        client.on("completion:response", count)
        if self.provider == "openai":
            call: dict[str, Any] = {
                "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
            }
        else:
            call = {"system": system, "messages": [{"role": "user", "content": prompt}]}
        try:
            result = client.chat.completions.create(
                model=self.model,
                max_tokens=self.max_tokens,
                max_retries=self.max_retries,
                response_model=response_model,
                **call,
            )
        except InstructorRetryException as exc:
            raise LLMError(
                f"{self.name} gave no valid {response_model.__name__} after {len(attempts)} attempt(s): "
                f"{str(exc).splitlines()[0]}"
            ) from None
        except Exception as exc:  # the SDK's API errors: report, never crash silently
            raise LLMError(f"{self.name} call failed: {type(exc).__name__}: {exc}") from None
        # instructor reports the running total on the response; per-attempt counts are added here
        usage = Usage()
        for u in attempts:
            usage = usage.add(u)
        return result, usage

    def compile(
        self, source_path: str, source_text: str, related: list[RelatedPage]
    ) -> tuple[CompileOutput, Usage]:
        return self.structured(
            CompileOutput, COMPILER_SYSTEM, compile_prompt(source_path, source_text, related)
        )

    def judge(self, card_text: str, cited: dict[str, str]) -> tuple[JudgeVerdict, Usage]:
        return self.structured(JudgeVerdict, JUDGE_SYSTEM, judge_prompt(card_text, cited))
