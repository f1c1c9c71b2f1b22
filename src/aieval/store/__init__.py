"""The run store: every run, sample, score and model call, in an SQLite file or PostgreSQL."""

from aieval.store._certificates import CertificateRow
from aieval.store._column_reads import CallTotals, SampleColumns, ScoreColumns
from aieval.store._graded_sums import AgentSums, CoverageSums, GradedSums, WorkflowSums
from aieval.store._kept_columns import KeptColumns, KeptIds
from aieval.store._location import StoreLocation, default_location, parse_location
from aieval.store._online_alerts import StoredAlert, WindowRow
from aieval.store._online_rules import RulesChange, RuleSource, StoredRule
from aieval.store._online_spend import Reservation, SpendLimits, SpendRow
from aieval.store._online_status import (
    OnlineCountsRow,
    OnlineErrorRow,
    OnlineRuleRow,
    OnlineSpendRow,
    OnlineWindowRow,
)
from aieval.store._online_work import (
    OnlineBackfill,
    OnlineWindow,
    OnlineWork,
    SettledTrace,
    WorkItem,
    window_run_id,
)
from aieval.store._owner import HEARTBEAT_EVERY_S
from aieval.store._pair_details import ListedSample, PairDetails
from aieval.store._pair_reads import PairSamples, PairScores
from aieval.store._pair_sums import (
    BinaryTable,
    DeltaSums,
    PairStanding,
    PairSums,
    PassTable,
    ScorerDetails,
)
from aieval.store._plain_samples import PlainSamples
from aieval.store._read_pool import READ_POOL, ReadPool
from aieval.store._received import (
    ReceivedRequest,
    ReceivedTraces,
    StoredTrace,
    earlier_trace_file,
)
from aieval.store._report_sums import FailedVerdict, ReportSums
from aieval.store._reviews import HOLD_S, NewReviewQueue, ReviewItem, ReviewQueue, ReviewWeight
from aieval.store._run_sums import (
    CriterionSums,
    GateSums,
    LatencySums,
    RunSums,
    ScorerSums,
    SliceSums,
    ValueSums,
)
from aieval.store._runs import RUN_ID_SHAPE, is_run_id
from aieval.store._side import MEMORY, SideTable
from aieval.store._store import (
    BaselineChoice,
    CalibrationRow,
    RunRow,
    Store,
    default_db_path,
    new_run_id,
)
from aieval.store._table_queries import TableAsk, TableCount, TablePage, TableQueries
from aieval.store._table_reads import IndexRow, TableReads
from aieval.store._transfer import (
    Checked,
    ImportOutcome,
    RunHolding,
    StoredCall,
    StoredSample,
    StoredScore,
    holding_digest,
    not_yours_message,
)

__all__ = [
    "HEARTBEAT_EVERY_S",
    "HOLD_S",
    "MEMORY",
    "READ_POOL",
    "RUN_ID_SHAPE",
    "AgentSums",
    "BaselineChoice",
    "BinaryTable",
    "CalibrationRow",
    "CallTotals",
    "CertificateRow",
    "Checked",
    "CoverageSums",
    "CriterionSums",
    "DeltaSums",
    "FailedVerdict",
    "GateSums",
    "GradedSums",
    "ImportOutcome",
    "IndexRow",
    "KeptColumns",
    "KeptIds",
    "LatencySums",
    "ListedSample",
    "NewReviewQueue",
    "OnlineBackfill",
    "OnlineCountsRow",
    "OnlineErrorRow",
    "OnlineRuleRow",
    "OnlineSpendRow",
    "OnlineWindow",
    "OnlineWindowRow",
    "OnlineWork",
    "PairDetails",
    "PairSamples",
    "PairScores",
    "PairStanding",
    "PairSums",
    "PassTable",
    "PlainSamples",
    "ReadPool",
    "ReceivedRequest",
    "ReceivedTraces",
    "ReportSums",
    "Reservation",
    "ReviewItem",
    "ReviewQueue",
    "ReviewWeight",
    "RuleSource",
    "RulesChange",
    "RunHolding",
    "RunRow",
    "RunSums",
    "SampleColumns",
    "ScoreColumns",
    "ScorerDetails",
    "ScorerSums",
    "SettledTrace",
    "SideTable",
    "SliceSums",
    "SpendLimits",
    "SpendRow",
    "Store",
    "StoreLocation",
    "StoredAlert",
    "StoredCall",
    "StoredRule",
    "StoredSample",
    "StoredScore",
    "StoredTrace",
    "TableAsk",
    "TableCount",
    "TablePage",
    "TableQueries",
    "TableReads",
    "ValueSums",
    "WindowRow",
    "WorkItem",
    "WorkflowSums",
    "default_db_path",
    "default_location",
    "earlier_trace_file",
    "holding_digest",
    "is_run_id",
    "new_run_id",
    "not_yours_message",
    "parse_location",
    "window_run_id",
]
