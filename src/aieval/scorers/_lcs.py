"""Exact ROUGE-L on whitespace tokens: one pair, or many pairs at once with numpy.

Tokens are compared by their text. One pair's token lists go to rapidfuzz's LCS as they are
(it compares their hash values) when no two distinct tokens share a value, and otherwise become
small integer ids (one code point each) through a dict. Over many pairs the
texts are tokenized as UTF-8 bytes with numpy: each token's id comes from its exact bytes
(two 8-byte words shifted out of aligned loads, a longer token through a dict), sorted by pair
and a hash of those bytes, with every group of equal hashes checked byte for byte; a pair where
two different tokens share a hash is scored again on its own, exactly. The groups are numbered
in sorted order, so a pair's ids are consecutive and, taken mod 256, one byte each when it has
at most 256 distinct tokens; the LCS of every pair of a chunk runs in one rapidfuzz ``cpdist``
call. The F-measure uses rouge-score's arithmetic, so both paths give its numbers to the last
bit.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from itertools import repeat
from typing import Any

import numpy as np
from numpy.typing import NDArray
from rapidfuzz.distance import LCSseq
from rapidfuzz.process import cpdist as _cpdist

from aieval.scorers._token_hashes import distinct_by_hash

__all__ = ["f_measure", "lcs_by_ids", "lcs_of_tokens", "rouge_l_many"]

_lcs_length = LCSseq.similarity

#: One code point per id, below the surrogates (a str holds those too, but utf-32 refuses them).
_IDS = "".join(map(chr, range(0xD800)))

#: Non-ASCII characters ``str.split()`` splits on (``\s`` in ``re`` is the same test,
#: ``Py_UNICODE_ISSPACE``); turned into spaces so the byte tokenizer needs only ASCII.
_NON_ASCII_SPACE = re.compile(r"[^\S\x00-\x7f]")
#: Each byte to 0 if it is ASCII whitespace, else 1: the joined bytes' token mask in one pass.
_SOLID = bytes(0 if b < 128 and chr(b).isspace() else 1 for b in range(256))

_U64 = np.uint64
#: The second word of a token longer than 16 bytes (0xFE never occurs in UTF-8 either); its
#: first word is then its number in a dict of such tokens.
_LONG = _U64(0xFEFEFEFEFEFEFEFE)
_MIX1 = _U64(0x9E3779B97F4A7C15)
_MIX2 = _U64(0xC2B2AE3D27D4EB4F)

#: Sort-key layout: pair (high), hash bits, token index (low).
_PAIR_BITS = 10
_INDEX_BITS = 18
_HASH_SHIFT = _U64(_PAIR_BITS + _INDEX_BITS)
_MAX_PAIRS = 1 << _PAIR_BITS
#: Bytes per chunk: its tokens (at most half its bytes, plus one) fit the index bits, and its
#: arrays stay in cache (64 kB chunks measured faster than 32 kB and 128 kB ones).
_MAX_BYTES = 1 << (_INDEX_BITS - 2)
_INDEX_MASK = _U64((1 << _INDEX_BITS) - 1)
_PAIR_SHIFT = _U64(64 - _PAIR_BITS)
_PAIR_SHIFT_SORTED = _U64(64 - _PAIR_BITS - _INDEX_BITS)
_ALL_INT = 0xFFFFFFFFFFFFFFFF
#: By a token's byte count in a word (0..8): the 0xFF bytes after them in a little-endian word.
_FILL = np.array([_ALL_INT ^ ((1 << (8 * k)) - 1) for k in range(9)], dtype=_U64)
#: After the joined texts: spaces up to a whole 8-byte word, then two more words (so the three
#: aligned words holding any token's first 16 bytes are all there).
_PAD = b" " * 24


def lcs_of_tokens(pred: list[str], ref: list[str]) -> int:
    """The length of the longest common subsequence of two token lists, tokens compared exactly.

    rapidfuzz compares the tokens by their hash values where no two of their distinct tokens
    share one (:func:`~aieval.scorers._token_hashes.distinct_by_hash`), else by ids.
    """
    if distinct_by_hash(pred, ref):
        return int(_lcs_length(pred, ref))
    return lcs_by_ids(pred, ref)


def lcs_by_ids(pred: list[str], ref: list[str]) -> int:
    """:func:`lcs_of_tokens` without hashes: tokens become ids through a dict.

    Each reference token gets its own code point (by position, so a repeated token keeps
    its last one); a prediction token absent from the reference gets one no reference token
    has, since it can match nothing.
    """
    if len(ref) < len(_IDS):
        ids = dict(zip(ref, _IDS, strict=False))
        missing = _IDS[len(ref)]
        pred_ids = "".join(map(ids.get, pred, repeat(missing)))
        return int(_lcs_length(pred_ids, "".join(map(ids.__getitem__, ref))))
    numbers = dict(zip(ref, range(len(ref)), strict=True))
    # small non-negative ints: rapidfuzz compares them by value (an int's hash is itself)
    return int(_lcs_length([numbers.get(t, len(ref)) for t in pred], [numbers[t] for t in ref]))


def f_measure(lcs: int, pred_len: int, ref_len: int) -> float:
    """rouge-score's exact arithmetic (precision, recall, then their harmonic mean)."""
    precision = lcs / pred_len
    recall = lcs / ref_len
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


def _one(pred_text: str, ref_text: str) -> float:
    pred = pred_text.split()
    ref = ref_text.split()
    if not pred or not ref:
        return 0.0
    return f_measure(lcs_of_tokens(pred, ref), len(pred), len(ref))


def rouge_l_many(preds: Sequence[str], refs: Sequence[str]) -> list[float]:
    """ROUGE-L F1 on whitespace tokens of each ``(preds[i], refs[i])``: every value equal, bit for
    bit, to scoring the pair alone. Every item must be a ``str``."""
    if len(preds) != len(refs):
        raise ValueError(f"{len(preds)} predictions but {len(refs)} references")
    encoded_preds = list(map(_utf8, preds))
    encoded_refs = list(map(_utf8, refs))
    n = len(encoded_preds)
    weights = np.fromiter(map(len, encoded_preds), np.int64, n)
    weights += np.fromiter(map(len, encoded_refs), np.int64, n)
    weights += 2
    ends = np.cumsum(weights).tolist()
    results: list[float] = []
    start = done = 0  # the next row, and the bytes of the rows before it
    while start < n:
        # the most rows from ``start`` whose bytes fit one chunk (at most _MAX_PAIRS of them)
        stop = min(bisect_right(ends, done + _MAX_BYTES, start), start + _MAX_PAIRS, n)
        if stop == start:  # too many tokens for one chunk's sort key: alone, exactly
            results.append(_one(preds[start], refs[start]))
            stop = start + 1
        else:
            results.extend(_chunk(encoded_preds[start:stop], encoded_refs[start:stop]))
        done = ends[stop - 1]
        start = stop
    return results


def _utf8(text: str) -> bytes:
    """The text's UTF-8 bytes with every whitespace character an ASCII one (lone surrogates
    kept, as three bytes each, so different texts stay different bytes)."""
    if text.isascii():
        return text.encode()
    return _NON_ASCII_SPACE.sub(" ", text).encode("utf-8", "surrogatepass")


def _chunk(preds: list[bytes], refs: list[bytes]) -> list[float]:
    n = len(preds)
    counts, starts, lens, raw = _tokenize([*preds, *refs])
    if not len(starts):
        return [0.0] * n
    ids, bases, wide, collided = _pair_ids(n, counts, starts, lens, raw)
    bounds = np.concatenate(([0], np.cumsum(counts))).tolist()
    # a pair of at most 256 distinct tokens: its ids taken mod 256 are still distinct
    text = ids.astype(np.uint8).tobytes().decode("latin-1")
    spans = list(zip(bounds[:n], bounds[1 : n + 1], bounds[n:-1], bounds[n + 1 :], strict=True))
    lcs = _cpdist(
        [text[a:b] for a, b, _, _ in spans],
        [text[c:d] for _, _, c, d in spans],
        scorer=_lcs_length,
        dtype=np.int32,
    ).astype(np.float64)
    for pair in wide:  # more distinct tokens than one byte holds: ids counted from the pair's base
        a, b, c, d = spans[pair]
        pair_ids = np.concatenate((ids[a:b], ids[c:d]))
        pair_ids -= bases[pair]  # (mod 2**16: a pair's ids are consecutive from its base)
        pair_text = _as_text(pair_ids)
        lcs[pair] = _lcs_length(pair_text[: b - a], pair_text[b - a :])
    lens_f = counts.astype(np.float64)
    scores: list[float] = _f_measures(lcs, lens_f[:n], lens_f[n:]).tolist()
    for pair in collided:  # two different tokens shared a hash in this pair: score it exactly
        scores[pair] = _one(
            preds[pair].decode("utf-8", "surrogatepass"),
            refs[pair].decode("utf-8", "surrogatepass"),
        )
    return scores


def _tokenize(
    texts: list[bytes],
) -> tuple[NDArray[np.int64], NDArray[np.intp], NDArray[np.intp], bytes]:
    """Token counts per text, each token's start and length in the joined bytes, those bytes
    (padded to whole 8-byte words, with at least two spare words after the last token)."""
    sizes = np.fromiter(map(len, texts), np.int64, len(texts))
    # text i starts after the leading space and texts 0..i-1, each with its space
    text_starts = np.cumsum(sizes + 1)
    joined = int(text_starts[-1]) + 1  # the leading space, then every text and its space
    raw = b" ".join([b"", *texts, _PAD[: 15 + (-joined - 15) % 8]])
    text_starts -= sizes
    solid = np.frombuffer(raw.translate(_SOLID), np.bool_)
    edges = np.flatnonzero(solid[1:] != solid[:-1])
    edges += 1
    starts = edges[0::2]
    lens = edges[1::2] - starts
    first = np.searchsorted(starts, text_starts)
    counts = np.diff(first, append=len(starts))
    return counts, starts, lens, raw


def _pair_ids(
    n: int,
    counts: NDArray[np.int64],
    starts: NDArray[np.intp],
    lens: NDArray[np.intp],
    raw: bytes,
) -> tuple[NDArray[np.uint16], NDArray[np.uint16], list[int], list[int]]:
    """Each token's id (the number of its group of equal tokens, in the order of the pairs and
    their sorted hashes, mod 2**16), each pair's first id, the pairs with more than 256 distinct
    tokens, and the pairs where two different tokens shared a hash (their ids are not to be
    used)."""
    first, second = _words(np.frombuffer(raw, "<u8"), starts, lens)
    total = len(starts)
    long_tokens = np.flatnonzero(lens > 16)
    if len(long_tokens):
        numbers: dict[bytes, int] = {}
        ends = starts[long_tokens] + lens[long_tokens]
        spans = zip(starts[long_tokens].tolist(), ends.tolist(), strict=True)
        first[long_tokens] = [numbers.setdefault(raw[a:b], len(numbers)) for a, b in spans]
        second[long_tokens] = _LONG
    key = first * _MIX1
    key += second * _MIX2
    key >>= _HASH_SHIFT
    key <<= _U64(_INDEX_BITS)
    per_pair = counts[:n] + counts[n:]
    pair_bits = np.arange(n, dtype=_U64)
    pair_bits <<= _PAIR_SHIFT
    key |= np.repeat(np.concatenate((pair_bits, pair_bits)), counts)
    key |= np.arange(total, dtype=_U64)
    key.sort()
    order = (key & _INDEX_MASK).view(np.int64)
    key >>= _U64(_INDEX_BITS)  # pair and hash
    new_group = key[1:] != key[:-1]
    first_sorted = first.take(order)
    differ = first_sorted[1:] != first_sorted[:-1]
    second_sorted = second.take(order)
    differ |= second_sorted[1:] != second_sorted[:-1]
    differ &= ~new_group  # two different tokens in one group: their hashes clashed
    collided: list[int] = []
    if differ.any():
        clash = np.flatnonzero(differ)
        collided = sorted(set((key[clash] >> _PAIR_SHIFT_SORTED).tolist()))
    # groups numbered in sorted order, mod 2**16: a pair's groups are consecutive numbers (the
    # pair is the key's high bits) and fewer than 2**16 (a chunk has fewer tokens), so distinct
    group = np.empty(total, dtype=np.uint16)
    group[0] = 0
    np.cumsum(new_group, dtype=np.uint16, out=group[1:])
    ids = np.empty(total, dtype=np.uint16)
    ids[order] = group
    pair_firsts = np.cumsum(per_pair) - per_pair
    np.minimum(pair_firsts, total - 1, out=pair_firsts)
    bases = group.take(pair_firsts)
    spread = group.take(np.maximum(pair_firsts + per_pair - 1, 0)) - bases  # (mod 2**16)
    wide = np.flatnonzero((spread >= 256) & (per_pair > 0)).tolist()
    return ids, bases, wide, collided


def _words(
    aligned: NDArray[np.uint64], starts: NDArray[np.intp], lens: NDArray[np.intp]
) -> tuple[NDArray[np.uint64], NDArray[np.uint64]]:
    """Each token's first and second 8 bytes as two words, read from the joined bytes' aligned
    words (three per token, shifted together: no unaligned gather). A word keeps the token's
    bytes and sets the bytes past its end to 0xFF, a byte UTF-8 never uses, so the two words
    are a token of at most 16 bytes exactly (one of at most 8 has an all-0xFF second word)."""
    index = starts >> 3
    low = (starts & 7).astype(_U64)
    low <<= _U64(3)  # bits to drop from the first aligned word
    high = _U64(64) - low  # where the next word's bytes go (a shift by 64 gives 0 in numpy)
    a = aligned.take(index)
    index += 1
    b = aligned.take(index)
    index += 1
    c = aligned.take(index)
    a >>= low
    a |= b << high
    b >>= low
    b |= c << high
    a |= _FILL.take(np.minimum(lens, 8))
    b |= _FILL.take(np.clip(lens - 8, 0, 8))
    return a, b


def _as_text(ids: NDArray[np.integer[Any]]) -> str:
    """The ids as one string of code points (surrogates skipped)."""
    points = ids.astype(np.uint32)
    points[points >= 0xD800] += 0x800
    return points.tobytes().decode("utf-32-le")


def _f_measures(
    lcs: NDArray[np.float64], pred_lens: NDArray[np.float64], ref_lens: NDArray[np.float64]
) -> NDArray[np.float64]:
    """:func:`f_measure` elementwise, the same operations in the same order (so the same bits);
    0.0 where nothing is shared."""
    hit = lcs > 0
    zeros = np.zeros_like(lcs)
    precision = np.divide(lcs, pred_lens, out=zeros.copy(), where=hit)
    recall = np.divide(lcs, ref_lens, out=zeros.copy(), where=hit)
    f1: NDArray[np.float64] = np.divide(
        2 * precision * recall, precision + recall, out=zeros, where=hit
    )
    return f1
