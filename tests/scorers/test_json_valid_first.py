"""``json_valid``'s batch tells a text that cannot be JSON by its first character: exactly."""

from __future__ import annotations

from aieval.scorers import json_valid


def test_every_first_character_scores_as_the_per_pair_function() -> None:
    tails = ["", "1", "}", "rue", "alse", "ull", "aN", "nfinity", '"', ' "a"', "[1]", "0"]
    firsts = [chr(c) for c in range(0x2100)] + ["\ufeff", "\u3000", "\U0001f642", "\udc80"]
    texts = [first + tail for first in firsts for tail in tails]
    texts += ["", " ", " \t\n\r", " \t\n\r-1", "\x0c1", "\u00a01", " NaN", "-Infinity", "tru"]
    expected = [json_valid.fn(text) for text in texts]
    assert json_valid.batch(texts, [None] * len(texts)) == expected
    assert sum(expected) > 40  # the valid ones are among them, not only failures
