import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aieval.datasets import load_dataset
from aieval.errors import DatasetError


def write_jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_list_rows_become_examples() -> None:
    ds = load_dataset(
        [
            {"id": "q1", "prompt": "2+2?", "expected": "4", "metadata": {"topic": "math"}},
            {"input": "capital of France?", "expected": "Paris"},
        ]
    )
    examples = list(ds)
    assert [e.id for e in examples] == ["q1", "1"]
    assert examples[0].metadata == {"topic": "math"}
    assert examples[1].prompt == "capital of France?"
    assert ds.scan().count == 2


def test_chat_messages_input() -> None:
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    (example,) = load_dataset([{"messages": messages}])
    assert example.prompt == "hi"
    assert example.messages == messages


def test_jsonl_csv_and_json_agree(tmp_path: Path) -> None:
    rows = [{"id": str(i), "prompt": f"p{i}", "expected": f"e{i}"} for i in range(5)]
    jsonl = write_jsonl(tmp_path / "d.jsonl", rows)
    as_json = tmp_path / "d.json"
    as_json.write_text(json.dumps(rows), encoding="utf-8")
    csv_file = tmp_path / "d.csv"
    csv_file.write_text(
        "id,prompt,expected\n" + "".join(f"{i},p{i},e{i}\n" for i in range(5)), encoding="utf-8"
    )
    for source in (jsonl, as_json, csv_file):
        examples = list(load_dataset(source))
        assert [(e.id, e.prompt, e.expected) for e in examples] == [
            (r["id"], r["prompt"], r["expected"]) for r in rows
        ]
    assert load_dataset(jsonl).scan().version == load_dataset(rows).scan().version


def test_csv_extra_columns_become_metadata(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("prompt,expected,category,metadata.lang\nhi,hello,greeting,en\n")
    (example,) = load_dataset(path)
    assert example.metadata == {"category": "greeting", "lang": "en"}


@given(
    st.lists(st.text(min_size=1, max_size=20), min_size=1, max_size=20, unique=True), st.randoms()
)
def test_version_is_order_independent(prompts: list[str], rnd: object) -> None:
    rows = [{"id": str(i), "prompt": p} for i, p in enumerate(prompts)]
    shuffled = rows[:]
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert load_dataset(rows).scan().version == load_dataset(shuffled).scan().version


def test_version_changes_with_any_row_change() -> None:
    rows = [{"id": "a", "prompt": "x", "expected": "1"}, {"id": "b", "prompt": "y"}]
    changed = [rows[0], {"id": "b", "prompt": "y!"}]
    assert load_dataset(rows).scan().version != load_dataset(changed).scan().version


def test_duplicate_id_names_both_rows(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "d.jsonl",
        [{"id": "a", "prompt": "1"}, {"id": "b", "prompt": "2"}, {"id": "a", "prompt": "3"}],
    )
    with pytest.raises(
        DatasetError, match=r"d.jsonl, line 3: duplicate id 'a' \(first seen at line 1\)"
    ):
        load_dataset(path).scan()


def test_row_without_prompt_names_the_row() -> None:
    with pytest.raises(DatasetError, match=r"row 2: row has no 'prompt'.*fields present: question"):
        load_dataset([{"prompt": "ok"}, {"question": "where?"}]).scan()


def test_bad_jsonl_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"prompt": "a"}\n\n{"prompt": "b",}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"bad.jsonl, line 3: invalid JSON"):
        load_dataset(path).scan()


def test_non_object_line(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [{"prompt": "a"}, [1, 2]])
    with pytest.raises(DatasetError, match=r"line 2: expected an object"):
        load_dataset(path).scan()


@pytest.mark.parametrize(
    ("name", "message"),
    [
        pytest.param("missing.jsonl", "file not found", id="missing"),
        pytest.param("data.parquet", "unsupported dataset file type", id="suffix"),
        pytest.param("folder.jsonl", "is a directory", id="directory"),
    ],
)
def test_unreadable_files(tmp_path: Path, name: str, message: str) -> None:
    path = tmp_path / name
    if name.endswith(".parquet"):
        path.write_bytes(b"PAR1")
    if name.startswith("folder"):
        path.mkdir()
    with pytest.raises(DatasetError, match=message):
        load_dataset(path).scan()


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read any file")
def test_permission_denied(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [{"prompt": "a"}])
    path.chmod(0)
    with pytest.raises(DatasetError, match="not readable"):
        load_dataset(path)


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'{"prompt": "\xff\xfe"}\n')
    with pytest.raises(DatasetError, match="not UTF-8"):
        load_dataset(path).scan()


def test_recorded_predictions_by_model_and_field() -> None:
    row = {"prompt": "q", "predictions": {"v1": "a1", "v2": "a2"}, "out": {"text": "a3"}}
    assert next(iter(load_dataset([row], model="v2"))).prediction == "a2"
    assert next(iter(load_dataset([row], prediction_field="out.text"))).prediction == "a3"
    assert next(iter(load_dataset([row]))).prediction is None
    assert load_dataset([row], model="v1").scan().with_prediction == 1


def test_streams_without_loading_everything(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    with path.open("w") as handle:
        for i in range(5000):
            handle.write(json.dumps({"id": i, "prompt": f"p{i}"}) + "\n")
    iterator = iter(load_dataset(path))
    assert next(iterator).id == "0"
    assert load_dataset(path, limit=10).scan().count == 10


def test_limit_and_bad_id_type() -> None:
    with pytest.raises(DatasetError, match="'id' must be a string or integer"):
        load_dataset([{"id": [1], "prompt": "a"}]).scan()
    with pytest.raises(DatasetError, match="not a single dict"):
        load_dataset({"prompt": "a"})


def test_hugging_face_dataset_rows() -> None:
    datasets = pytest.importorskip("datasets")
    hf = datasets.Dataset.from_list(
        [
            {"id": "a", "prompt": "2+2?", "expected": "4"},
            {"id": "b", "prompt": "3+3?", "expected": "6"},
        ]
    )
    ds = load_dataset(hf)
    assert [(e.id, e.prompt, e.expected) for e in ds] == [("a", "2+2?", "4"), ("b", "3+3?", "6")]
    assert (
        ds.scan().version
        == load_dataset(
            [
                {"id": "b", "prompt": "3+3?", "expected": "6"},
                {"id": "a", "prompt": "2+2?", "expected": "4"},
            ]
        )
        .scan()
        .version
    )


def test_the_version_hash_is_pinned_for_every_kind_of_value() -> None:
    """The version of these rows as every earlier release computed it: a stored run's dataset
    version compares with a new run's only while the hash stays the same."""
    rows = [
        {
            "id": 1,
            "input": "é ✓ q",
            "expected": ["a", {"b": None}],
            "prediction": "x",
            "metadata": {"z": 1.5, "a": True},
        },
        {"id": "two", "messages": [{"role": "user", "content": "\udc80"}], "expected": None},
        {"input": "q3", "n": 10**30, "f": 1e-300},
    ]
    assert load_dataset(rows).scan().version == "67962d7c43aa853738ae54be3dc38fa5"
