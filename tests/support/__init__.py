"""Test helpers shared across the suite (loopback model servers, ...)."""
