"""Scorers pickle (for Ray workers and process pools): built-ins by import path, with options."""

from __future__ import annotations

import pickle

import pytest
from ray import cloudpickle

from aieval.scorers import Scorer, exact_match, rouge_l, scorer, token_f1


@scorer(name="local_length_ratio")
def length_ratio(prediction: str, expected: str) -> float:
    return min(len(prediction), len(expected)) / max(len(prediction), len(expected), 1)


@pytest.mark.parametrize("dumps", [pickle.dumps, cloudpickle.dumps], ids=["pickle", "cloudpickle"])
@pytest.mark.parametrize(
    "item",
    [
        pytest.param(rouge_l, id="rouge_l"),
        pytest.param(exact_match, id="exact_match"),
        pytest.param(token_f1.with_options(name="f1"), id="renamed"),
        pytest.param(length_ratio, id="user-scorer"),
    ],
)
def test_a_scorer_comes_back_equal_and_working(item: Scorer, dumps) -> None:
    back = pickle.loads(dumps(item))
    assert isinstance(back, Scorer)
    assert (back.name, back.options, back.fn) == (item.name, item.options, item.fn)
    assert back("the cat sat", "the cat sat on") == item("the cat sat", "the cat sat on")


def test_an_unimportable_scorer_is_carried_by_value() -> None:
    def shout(prediction: str) -> float:
        return float(prediction.isupper())

    back = cloudpickle.loads(cloudpickle.dumps(Scorer(shout)))
    assert back.name == "shout" and back("ABC") == 1.0
