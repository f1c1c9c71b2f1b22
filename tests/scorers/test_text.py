import pytest

from aieval.scorers import exact_match, json_valid, rouge_l, token_f1


@pytest.mark.parametrize(
    ("pred", "ref", "want"),
    [
        pytest.param("the capital is paris", "paris is the capital", 1.0, id="order-ignored"),
        pytest.param("the cat extra", "the cat", 0.8, id="partial"),
        pytest.param("", "the cat", 0.0, id="empty-pred"),
        pytest.param("the cat", "", 0.0, id="empty-ref"),
        pytest.param("The Cat", "the cat", 1.0, id="lowercased"),
    ],
)
def test_token_f1_seed_examples(pred: str, ref: str, want: float) -> None:
    assert token_f1(pred, ref) == pytest.approx(want)


def test_token_f1_case_sensitive() -> None:
    assert token_f1("The Cat", "the cat", case_sensitive=True) == 0.0


def test_exact_match_trims() -> None:
    assert exact_match("  Paris\n", "Paris") == 1.0
    assert exact_match("paris", "Paris") == 0.0


def test_json_valid() -> None:
    assert json_valid('{"a": [1, 2]}', None) == 1.0
    assert json_valid("{'a': 1}", None) == 0.0


def test_rouge_l_basic() -> None:
    assert rouge_l("a b c d", "a b c d") == 1.0
    assert rouge_l("a b", "c d") == 0.0
