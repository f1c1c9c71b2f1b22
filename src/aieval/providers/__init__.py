"""Providers: the model endpoints a run or a judge calls."""

from aieval.providers._base import ChatRequest, ChatResponse, Provider

__all__ = ["ChatRequest", "ChatResponse", "Provider"]
