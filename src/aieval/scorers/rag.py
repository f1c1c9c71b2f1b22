"""RAG checks (profile C): citations for claims, citation/link rules, context precision/recall.

Groundedness and hallucination need judgement, so they are judge criteria
(:data:`GROUNDEDNESS_CRITERION`, :data:`HALLUCINATION_CRITERION`) for the rubric judges rather
than string checks.

Example:
    >>> gate = citations_present_for_claims(
    ...     "Oslo is the capital of Norway [d1]. It lies at the end of a fjord.", ["d1", "d2"])
    >>> gate.passed, gate.evidence["uncited_claims"]
    (False, ['It lies at the end of a fjord.'])
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlparse

from aieval.errors import ConfigError
from aieval.grading import GateResult, register_gate
from aieval.scorers._scorer import Scorer

__all__ = [
    "GROUNDEDNESS_CRITERION",
    "HALLUCINATION_CRITERION",
    "citation_requirements_met",
    "citations_present_for_claims",
    "context_precision",
    "context_recall",
    "extract_citations",
    "rag_scorer",
    "split_claims",
]

#: Default citation markers: ``[1]``, ``[d3]``, ``[1, 2]``, ``[^4]``, ``[source: kb-7]``.
CITATION_PATTERN = re.compile(r"\[\^?(?:source:\s*)?([^\[\]()]+?)\](?!\()")
_LINK_PATTERN = re.compile(r"\[[^\]]*\]\((https?://[^)\s]+)\)|(?<![(\[])(https?://[^\s)\]>]+)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])|\n+")

GROUNDEDNESS_CRITERION = {
    "name": "groundedness",
    "description": "Every factual statement in the answer is supported by the retrieved context.",
    "anchors": {
        1: "Most statements are unsupported by, or contradict, the context.",
        3: "The main answer is supported; some details go beyond the context.",
        5: "Every statement is directly supported by the context.",
    },
}
HALLUCINATION_CRITERION = {
    "name": "no_high_severity_hallucination",
    "description": (
        "The answer states nothing false or invented that could mislead the user: no made-up "
        "facts, numbers, names, citations or links."
    ),
    "anchors": {
        0: "Contains at least one invented fact, source or link that matters to the user.",
        1: "Contains no invented or contradicted content.",
    },
}


def split_claims(answer: str, *, min_words: int = 4) -> list[str]:
    """Sentences (and list items) of ``answer`` long enough to state a claim.

    Questions and headings are not claims; neither are sentences shorter than ``min_words``
    words once citations are removed.

    Example:
        >>> split_claims("# Answer\\nParis is in France [1]. Why? Because it is.")
        ['Paris is in France [1].']
    """
    claims = []
    for piece in _SENTENCE_END.split(answer):
        sentence = piece.strip().lstrip("-*•").strip()
        if not sentence or sentence.startswith("#") or sentence.endswith("?"):
            continue
        if len(CITATION_PATTERN.sub(" ", sentence).split()) >= min_words:
            claims.append(sentence)
    return claims


def extract_citations(text: str, *, pattern: re.Pattern[str] | None = None) -> list[str]:
    """Citation ids in ``text``; ``[1, 2]`` gives ``["1", "2"]``. Markdown links are not ids.

    Example:
        >>> extract_citations("A [1, 3]. B [^doc-2]. See [here](https://x.org).")
        ['1', '3', 'doc-2']
    """
    ids: list[str] = []
    for match in (pattern or CITATION_PATTERN).finditer(text):
        ids.extend(part.strip() for part in match.group(1).split(",") if part.strip())
    return ids


def _doc_ids(retrieved: Sequence[Any]) -> list[str]:
    ids = []
    for doc in retrieved:
        if isinstance(doc, Mapping):
            ids.append(str(doc.get("id") or doc.get("url") or doc.get("source") or ""))
        else:
            ids.append(str(doc))
    return ids


def _resolves(citation: str, ids: Sequence[str], numbered: bool) -> bool:
    if citation in ids:
        return True
    return numbered and citation.isdigit() and 1 <= int(citation) <= len(ids)


def citations_present_for_claims(
    answer: str,
    retrieved: Sequence[Any],
    *,
    numbered: bool = True,
    min_words: int = 4,
    pattern: re.Pattern[str] | None = None,
) -> GateResult:
    """Gate: every claim sentence cites a source, and every citation names a retrieved document.

    Args:
        answer: the generated answer.
        retrieved: the retrieved documents: ids, or dicts with ``id`` (or ``url``/``source``).
        numbered: also accept ``[n]`` as the n-th retrieved document (1-based).
        min_words: shorter sentences are not treated as claims.
        pattern: a regex whose group 1 holds the cited id(s), to replace the default markers.
    """
    ids = _doc_ids(retrieved)
    claims = split_claims(answer, min_words=min_words)
    uncited = [claim for claim in claims if not extract_citations(claim, pattern=pattern)]
    unresolved = sorted(
        {c for c in extract_citations(answer, pattern=pattern) if not _resolves(c, ids, numbered)}
    )
    evidence = {
        "claims": len(claims),
        "uncited_claims": uncited,
        "unresolved_citations": unresolved,
    }
    problems = []
    if uncited:
        problems.append(f"{len(uncited)} of {len(claims)} claim(s) carry no citation")
    if unresolved:
        problems.append(f"citation(s) {', '.join(unresolved)} match no retrieved document")
    if problems:
        return GateResult("citations_present_for_claims", False, "; ".join(problems), evidence)
    reason = f"all {len(claims)} claim(s) cite a retrieved document"
    return GateResult("citations_present_for_claims", True, reason, evidence)


def citation_requirements_met(
    answer: str,
    *,
    min_citations: int = 1,
    require_links: bool = False,
    allowed_domains: Sequence[str] | None = None,
    pattern: re.Pattern[str] | None = None,
) -> GateResult:
    """Gate: the answer has enough citations, and links when required, only to allowed domains.

    A link to ``docs.example.com`` is allowed by ``"example.com"`` (subdomains count).
    """
    citations = extract_citations(answer, pattern=pattern)
    links = [a or b for a, b in _LINK_PATTERN.findall(answer)]
    problems: list[str] = []
    if len(citations) + len(links) < min_citations:
        problems.append(
            f"{len(citations) + len(links)} citation(s), at least {min_citations} required"
        )
    if require_links and not links:
        problems.append("no link, one is required")
    off_domain = [link for link in links if not _allowed(link, allowed_domains)]
    if off_domain:
        problems.append(f"link(s) outside the allowed domains: {', '.join(off_domain[:3])}")
    evidence = {"citations": citations, "links": links, "disallowed_links": off_domain}
    if problems:
        return GateResult("citation_requirements_met", False, "; ".join(problems), evidence)
    return GateResult("citation_requirements_met", True, "citation requirements met", evidence)


def _allowed(link: str, domains: Sequence[str] | None) -> bool:
    if domains is None:
        return True
    host = (urlparse(link).hostname or "").lower()
    return any(host == d.lower() or host.endswith("." + d.lower()) for d in domains)


def _normalize(text: str) -> str:
    return " ".join(text.lower().split())


def _passage_key(item: Any, match: str) -> str:
    if isinstance(item, Mapping):
        item = item.get("id") if match == "id" else item.get("text", item.get("content", ""))
    return str(item) if match == "id" else _normalize(str(item))


def _is_gold(passage: str, gold: Sequence[str], match: str) -> bool:
    if match == "id":
        return passage in gold
    return any(g in passage or (passage and passage in g) for g in gold)


def _check_match(match: str) -> None:
    if match not in ("id", "text"):
        raise ConfigError(f"match must be 'id' or 'text', got {match!r}")


def context_precision(
    retrieved: Sequence[Any], gold: Sequence[Any], *, match: str = "id", k: int | None = None
) -> float:
    """Rank-aware precision of the retrieved contexts: mean precision@i at each gold hit.

    Gold passages ranked early score higher than the same passages ranked late; 0.0 when no
    retrieved context is gold. ``match="text"`` compares normalized passage text (a retrieved
    passage matches a gold one that contains it or that it contains).

    Example:
        >>> context_precision(["g1", "x", "g2"], ["g1", "g2"])
        0.8333333333333333
    """
    _check_match(match)
    gold_keys = [_passage_key(g, match) for g in gold]
    hits, total = 0, 0.0
    for i, item in enumerate(retrieved[:k] if k else retrieved, start=1):
        if _is_gold(_passage_key(item, match), gold_keys, match):
            hits += 1
            total += hits / i
    return total / hits if hits else 0.0


def context_recall(retrieved: Sequence[Any], gold: Sequence[Any], *, match: str = "id") -> float:
    """Share of the gold passages found among the retrieved contexts (1.0 when none is gold).

    Example:
        >>> context_recall(["g1", "x"], ["g1", "g2"])
        0.5
    """
    _check_match(match)
    if not gold:
        return 1.0
    keys = [_passage_key(item, match) for item in retrieved]
    found = sum(1 for g in gold if any(_is_gold(k, [_passage_key(g, match)], match) for k in keys))
    return found / len(gold)


def _read_rag_output(prediction: Any) -> tuple[str, list[Any]]:
    if isinstance(prediction, str):
        try:
            prediction = json.loads(prediction)
        except ValueError:
            raise ConfigError(
                'RAG scorer: the prediction must be JSON like {"answer": ..., "contexts": [...]}'
            ) from None
    if not isinstance(prediction, Mapping):
        raise ConfigError('RAG scorer: the prediction must be {"answer": ..., "contexts": [...]}')
    return str(prediction.get("answer", "")), list(prediction.get("contexts", []))


def rag_scorer(metric: str = "context_precision", *, match: str = "id") -> Scorer:
    """A per-sample scorer over a RAG output ``{"answer": ..., "contexts": [...]}``.

    ``context_precision`` and ``context_recall`` compare the contexts with the expected gold
    passages (a list, or a dict with ``gold_passages``); ``citations`` is 1.0 when
    :func:`citations_present_for_claims` passes on the answer and the contexts.

    Example:
        >>> recall = rag_scorer("context_recall")
        >>> recall('{"answer": "", "contexts": ["g1"]}', ["g1", "g2"])
        0.5
    """
    if metric not in ("context_precision", "context_recall", "citations"):
        raise ConfigError(
            f"rag_scorer: unknown metric {metric!r}; use context_precision, context_recall "
            "or citations"
        )
    _check_match(match)

    def score(prediction: Any, expected: Any) -> float:
        answer, contexts = _read_rag_output(prediction)
        if metric == "citations":
            return 1.0 if citations_present_for_claims(answer, contexts).passed else 0.0
        gold = expected.get("gold_passages", []) if isinstance(expected, Mapping) else expected
        if gold is None:
            raise ConfigError(f"{metric}: the example has no expected gold passages")
        if metric == "context_precision":
            return context_precision(contexts, list(gold), match=match)
        return context_recall(contexts, list(gold), match=match)

    return Scorer(score, name=metric)


register_gate("citations_present_for_claims", citations_present_for_claims)
register_gate(
    "citation_requirements_met",
    citation_requirements_met,
    description="citations and links meet the count, link and domain requirements",
)
