"""Whether a judge may gate a release: certified, uncertified or drifting, with the numbers."""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

from aieval.core import ReviewLabel
from aieval.errors import ConfigError
from aieval.judges._agreement import (
    Agreement,
    ReviewDesign,
    SampleKey,
    agreement,
    latest_labels,
)

__all__ = [
    "DEFAULT_KAPPA_FLOOR",
    "DEFAULT_MIN_LABELS",
    "Certificate",
    "Certification",
    "CertificationStatus",
    "certify",
    "labels_to_settle",
]

DEFAULT_KAPPA_FLOOR = 0.6
DEFAULT_MIN_LABELS = 100


class CertificationStatus(enum.StrEnum):
    """A judge's standing against its human labels."""

    CERTIFIED = "certified"
    UNCERTIFIED = "uncertified"
    DRIFTING = "drifting"


@dataclass(frozen=True, slots=True)
class Certificate:
    """A judge's certification as stored: on ``n`` labelled items its judge-human kappa had
    lower bound ``bound`` (>= ``floor``) at time ``certified_at`` (seconds since the epoch)."""

    judge: str
    n: int
    kappa: float
    bound: float
    floor: float
    certified_at: float


@dataclass(frozen=True, slots=True)
class Certification:
    """The decision and the numbers behind it.

    Attributes:
        status: certified, uncertified or drifting.
        agreement: the figures on every label (the certificate's and newer ones).
        floor / min_labels: the policy it was decided on.
        labels_needed: more labelled items that would settle an uncertified judge at its
            current agreement (see :func:`labels_to_settle`); ``None`` when certified, when the
            estimate itself is at or below the floor (more labels would not certify it), when
            the kappa is too close to the floor for more labels to settle it soon (``reason``
            says so), or for a drifting judge.
        certificate: a new certificate when ``status`` is certified and none was given, else
            the one given.
        newer: labels saved after the given certificate.
        reason: one sentence for people: the figures and why (the status is not repeated).
    """

    status: CertificationStatus
    agreement: Agreement
    floor: float
    min_labels: int
    labels_needed: int | None
    certificate: Certificate | None
    newer: int
    reason: str

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        cert = self.certificate
        return {
            "status": str(self.status),
            "floor": self.floor,
            "min_labels": self.min_labels,
            "labels_needed": self.labels_needed,
            "newer": self.newer,
            "reason": self.reason,
            "certificate": None
            if cert is None
            else {
                "judge": cert.judge,
                "n": cert.n,
                "kappa": cert.kappa,
                "bound": cert.bound,
                "floor": cert.floor,
                "certified_at": cert.certified_at,
            },
            "agreement": self.agreement.to_dict(),
        }


#: More labelled items than this is no estimate one can act on (see :func:`labels_to_settle`).
MAX_TO_SETTLE = 100_000

#: Nor is more than this many times the labelled items held (and the ``min_labels`` asked for):
#: the kappa then sits so close to the floor that the figure would only mislead.
MAX_TO_SETTLE_RATIO = 50


def labels_to_settle(
    kappa: float, low: float, n: int, floor: float, min_labels: int, confidence: float = 0.95
) -> int | None:
    """More labelled items until the kappa lower bound reaches ``floor``, at this agreement.

    The estimate assumes the agreement stays what it is and the interval narrows as
    ``1/sqrt(n)`` (the analytic standard error's rate): the standard error now is
    ``(kappa - low) / z``, and ``N = n * (z * se / (kappa - floor))**2`` items put the bound at
    the floor. The answer is at least ``min_labels - n``. ``None`` when ``kappa <= floor``:
    at this agreement no number of labels certifies the judge; also ``None`` when the answer
    would exceed :data:`MAX_TO_SETTLE`, or :data:`MAX_TO_SETTLE_RATIO` times both ``n`` and
    ``min_labels`` (an estimate just above the floor: no review could supply that many soon,
    and the figure would only mislead).

    Example:
        >>> labels_to_settle(0.7, 0.5, 60, 0.6, 100)
        180
    """
    if kappa <= floor:
        return None
    if low >= floor:
        return max(0, min_labels - n)
    z = NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)
    se = (kappa - low) / z
    total = n * (z * se / (kappa - floor)) ** 2
    bound = min(MAX_TO_SETTLE, MAX_TO_SETTLE_RATIO * max(n, min_labels))
    if not math.isfinite(total) or total - n > bound:
        return None
    return max(math.ceil(total), min_labels) - n


def certify(
    labels: Iterable[ReviewLabel],
    verdicts: Mapping[SampleKey, bool],
    *,
    judge: str | None = None,
    floor: float = DEFAULT_KAPPA_FLOOR,
    min_labels: int = DEFAULT_MIN_LABELS,
    certificate: Certificate | None = None,
    threshold: float = 0.5,
    now: float = 0.0,
    design: Sequence[ReviewDesign] | None = None,
) -> Certification:
    """Decide a judge's status from its labels (pure: nothing is read or stored).

    - **certified**: the lower bound of the judge-human kappa (95%) is at least ``floor`` on
      at least ``min_labels`` labelled items (an item with two reviewers counts once);
    - **drifting**: a ``certificate`` was given, labels were saved after it, and with them the
      bound is below ``floor``;
    - **uncertified**: otherwise, with ``labels_needed``.

    ``now`` is the time a new certificate carries (seconds since the epoch). With ``design``
    (the judge's review queues) the bound is the design-weighted one when the queues combine
    (see :func:`~aieval.judges.agreement`); the reason says which it is and, when a design
    was given but not used, why.

    Raises:
        ConfigError: a floor outside (-1, 1) or a negative ``min_labels``; no usable label.
    """
    if not -1.0 < floor < 1.0:
        raise ConfigError(f"judge_kappa_floor must be between -1 and 1, got {floor!r}")
    if min_labels < 0:
        raise ConfigError(f"judge_min_labels must be 0 or more, got {min_labels!r}")
    rows = latest_labels(labels, judge)
    result = agreement(rows, verdicts, judge=judge, threshold=threshold, design=design)
    kappa = result.judge_human
    newer = (
        0
        if certificate is None
        else sum(lab.labelled_at > certificate.certified_at for lab in rows)
    )
    undefined = result.judge_human_undefined
    # An undefined kappa (one class missing on a side) is no evidence either way: never certify.
    meets = undefined is None and kappa.low >= floor and result.items >= min_labels
    figures = (
        f"{result.kappa_name} {kappa.estimate:.3f} (lower bound {kappa.low:.3f}) on "
        f"{result.items} item(s)"
        if undefined is None
        else f"kappa n/a on {result.items} item(s): {undefined}"
    )
    if design is not None and not result.weighted and undefined is None:
        figures += f" (unweighted: {result.unweighted})"
    if undefined is not None and not (certificate is not None and newer):
        return Certification(
            CertificationStatus.UNCERTIFIED, result, floor, min_labels, None, certificate, newer,
            f"{figures}; agreement needs passes and fails on both sides, so it is not measured "
            "and nothing is certified on it; label samples of both kinds",
        )  # fmt: skip
    if certificate is not None and newer and kappa.low < floor:
        return Certification(
            CertificationStatus.DRIFTING, result, floor, min_labels, None, certificate, newer,
            f"with {newer} label(s) newer than its certificate, {figures}; "
            + (
                f"the bound fell below the floor {floor}"
                if undefined is None
                else "agreement can no longer be measured, so the certificate does not hold"
            ),
        )  # fmt: skip
    if meets or (certificate is not None and undefined is None and kappa.low >= floor):
        held = certificate or Certificate(
            result.judge, result.items, kappa.estimate, kappa.low, floor, now
        )
        return Certification(
            CertificationStatus.CERTIFIED, result, floor, min_labels, None, held, newer,
            f"{figures}, at least the floor {floor}",
        )  # fmt: skip
    needed = labels_to_settle(kappa.estimate, kappa.low, result.items, floor, min_labels)
    if needed is None and kappa.estimate <= floor:
        why = (
            f"{figures}: the estimate itself is not above the floor {floor}, so more labels "
            "at this agreement will not certify it"
        )
    elif needed is None:
        why = (
            f"{figures}: the kappa is too close to the floor {floor} for more labels to settle"
            " it soon (at this agreement it would take more than"
            f" {min(MAX_TO_SETTLE, MAX_TO_SETTLE_RATIO * max(result.items, min_labels)):,} more"
            " labelled items); fix the judge or its rubric rather than label on"
        )
    else:
        why = f"{figures}; about {needed} more labelled item(s) at this agreement would settle it"
    return Certification(
        CertificationStatus.UNCERTIFIED, result, floor, min_labels, needed, certificate, newer,
        why,
    )  # fmt: skip
