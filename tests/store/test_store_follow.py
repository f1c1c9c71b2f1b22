"""Reading a run's samples in insertion order, as event streams do."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aieval._records import SampleRecord
from aieval.store import Store, new_run_id

batches = st.lists(st.lists(st.booleans(), min_size=1, max_size=4), min_size=1, max_size=5)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=30)
@given(batches=batches, position=st.integers(0, 25))
def test_samples_since_follows_insertion_order(
    store_location: str, batches: list[list[bool]], position: int
) -> None:
    with Store(store_location) as store:
        run_id = store.create_run(name="follow", run_id=new_run_id())
        inserted: list[tuple[str, bool]] = []
        for batch in batches:
            # finishing order differs from dataset order: index counts down
            records = []
            for passed in batch:
                n = len(inserted)
                inserted.append((f"s{n}", passed))
                records.append(SampleRecord(id=f"s{n}", index=1000 - n, input="x", passed=passed))
            store.record_samples(run_id, records)
        got = store.samples_since(run_id, position)
        assert [s.id for s in got] == [sid for sid, _ in inserted[position:]]
        seen, passed = store.pass_counts(run_id, position)
        assert seen == min(position, len(inserted))
        assert passed == sum(ok for _, ok in inserted[:position])
        assert store.pass_counts(run_id) == (len(inserted), sum(ok for _, ok in inserted))
        assert [s.id for s in store.samples_since(run_id, position, limit=2)] == [
            sid for sid, _ in inserted[position : position + 2]
        ]


def test_create_run_with_a_chosen_id_and_count_runs(store_location: str) -> None:
    store = Store(store_location)
    assert store.count_runs() == 0
    store.create_run(name="a", run_id="fixed-1")
    store.create_run(name="b")
    store.create_run(name="a")
    assert store.get_run("fixed-1").name == "a"
    assert (store.count_runs(), store.count_runs(name="a"), store.count_runs(name="zz")) == (
        3,
        2,
        0,
    )
    assert new_run_id() != new_run_id()
