"""The parts of an eval file that describe where answers come from: the target and the dataset."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from aieval.errors import ConfigError
from aieval.providers import check_headers, check_params
from aieval.runner._spec import env_name

__all__ = ["DatasetConfig", "TargetConfig"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TargetConfig(_Strict):
    """The model under evaluation."""

    provider: str = Field(description="provider name or preset: openai, sarmalink, vllm, ...")
    model: str
    base_url: str | None = None
    api_key_env: str | None = Field(
        None, description="the name of the environment variable holding the API key"
    )
    prompt: str | None = Field(None, description="str.format template over row fields")
    system: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    headers: dict[str, str] = Field(
        default_factory=dict, description="HTTP headers sent with every request (never stored)"
    )

    @field_validator("headers")
    @classmethod
    def _valid_headers(cls, value: dict[str, str]) -> dict[str, str]:
        try:
            return check_headers(value, "headers")
        except ConfigError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("api_key_env")
    @classmethod
    def _a_variable_name(cls, value: str | None) -> str | None:
        return None if value is None else env_name(value)

    @field_validator("params")
    @classmethod
    def _no_credentials(cls, value: dict[str, Any]) -> dict[str, Any]:
        try:
            check_params(value, "params")
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return value

    @model_validator(mode="after")
    def _headers_once(self) -> TargetConfig:
        if self.headers and "headers" in self.params:
            raise ValueError(
                "give HTTP headers once: in target.headers, not also in params.headers"
            )
        return self


class DatasetConfig(_Strict):
    """Where rows come from: a file ``path`` or inline ``rows``."""

    path: str | None = None
    rows: list[dict[str, Any]] | None = None
    limit: int | None = Field(None, ge=0)
    prediction_field: str | None = None


def _target_params(target: TargetConfig) -> dict[str, Any]:
    """The target's request parameters, its ``headers`` under ``params.headers`` (which the
    provider target sends as HTTP headers)."""
    if not target.headers:
        return target.params
    return {**target.params, "headers": target.headers}
