"""Is there an answer? A calibrated decision, apart from ranking.

Ranking orders memories; it cannot say whether the best of them answers the question. A
question about a person, a tool or a column that memory does not hold shares words with
memories that are about something else ("what does Lena Marsh review?" against "Lena Park
reviews every change to the pricing model"), and so does a question about an attribute
memory never records ("what is Lena Park's email?"). A single overlap ratio got both
wrong, and it gave a word that no memory contains the largest IDF, so a natural question
about the only relevant memory of a small project abstained.

So each (query, memory) pair gets thirteen signals (eighteen with the dense leg:
``signals``, which says what each one is and why, from the question's wording read by
``wording`` and the encoder's word vectors in ``wordvec``), and a logistic model turns
them into a ``confidence`` from 0 to 1. There are nine models: lexical, hybrid with the
static tier and hybrid with the transformer (whose cosines have their own scale), each
for small projects (up to ``SMALL_PROJECT`` memories), for the statements of larger ones,
and for documents (memories of ``DOCUMENT_CHARS`` or more). A search answers when one of
its first ``ANSWER_K`` candidates reaches ``ANSWER_AT``.

The coefficients are data, not code: ``benchmarks/fit_answerability.py --write`` fits and
calibrates them leave one suite family out (each band's intercept set so that the worst
family held out of the fit abstains falsely on at most 4% of its answerable questions)
and writes them, with ``STRONG``, to ``jupymem/data/answerability.json``
(``benchmarks/answerability.md`` has the figures per family).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .signals import HYBRID_FEATURES, LEXICAL_FEATURES

FITTED = Path(__file__).resolve().parents[1] / "data" / "answerability.json"
MODES = ("lexical", "hybrid", "transformer")

# A search answers when one of its first ANSWER_K candidates is at least this confident.
ANSWER_K = 3
ANSWER_AT = 0.5
# A long memory's words compared one by one with the query's (hybrid mode): its rarest
# ones. Statements are shorter; a long abstract or prompt costs no more than one this long.
COMPARED_WORDS = 64
# Projects up to this size have their own models: every memory is a candidate there, and
# IDF over a handful of memories says little, so the signals mean something else.
SMALL_PROJECT = 10
# A memory this long is a document (an abstract, a pasted page), not a statement, and has
# its own models: a long text holds a query's names somewhere and has other words beside
# the query's everywhere, so a missing name or a swapped neighbour, which betray a
# question about something else in a one-line statement, say little there. Our suites'
# statements are under 180 characters and SciFact's abstracts mostly over 800; a person's
# long statement (up to 16 KB) is judged as a document, whose model abstains on almost
# nothing answerable, padded notes included (``benchmarks/fit_answerability.py``).
DOCUMENT_CHARS = 400
BANDS = ("small", "large", "document")


@dataclass(frozen=True)
class Model:
    """A logistic model: ``confidence = 1 / (1 + exp(-(intercept + coef . x)))``."""

    features: tuple[str, ...]
    coef: tuple[float, ...]
    intercept: float

    def confidence(self, x: Sequence[float]) -> float:
        z = self.intercept + sum(c * v for c, v in zip(self.coef, x))
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def _load(path: Path = FITTED) -> tuple[dict[tuple[str, str], Model], float, dict[str, dict], dict[str, dict]]:
    """The fitted models by (mode, band); the threshold of ``strong`` the models were fitted
    with; the verdict's reading settings per mode (``reading.py``); and per mode and band the
    model confidences from which a first hit is right at least 60% ("likely") and 90%
    ("strong") of the time on every held-out family (``LABELS``)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    models: dict[tuple[str, str], Model] = {}
    for key, fitted in data["models"].items():
        mode, band = key.split("/")
        features = LEXICAL_FEATURES if mode == "lexical" else HYBRID_FEATURES
        if len(fitted["coef"]) != len(features):
            raise ValueError(f"{path}: {key} has {len(fitted['coef'])} coefficients for {len(features)} signals")
        models[(mode, band)] = Model(features, tuple(fitted["coef"]), fitted["intercept"])
    return models, float(data["strong"]), dict(data.get("reading", {})), dict(data.get("labels", {}))


MODELS, FITTED_STRONG, READING, LABELS = _load()
# The confidence a person sees is the model's, mapped (``calibrated``) so that its labels
# mean the same in every mode and band: "strong" from STRONG (a first hit so labelled was
# right at least 90% of the time on every held-out family with 20 of them), "likely" from
# LIKELY (60%), "weak" below; a search answers from ANSWER_AT, so an answer may be weak.
STRONG, LIKELY = (0.9, 0.75) if LABELS else (FITTED_STRONG, ANSWER_AT)


def calibrated(confidence: float, *, mode: str, band: str) -> float:
    """``confidence`` (the model's, after the reading) on the labels' scale: the measured
    thresholds of ``mode`` and ``band`` (``LABELS``) go to LIKELY and STRONG, ANSWER_AT stays
    where it is, and the map is linear between and monotone (the order of hits is kept)."""
    got = LABELS.get(mode, {}).get(band)
    if not got or confidence < ANSWER_AT:
        return confidence
    likely = max(ANSWER_AT, float(got[0]))
    strong = max(likely, float(got[1]))
    if confidence >= strong:
        return STRONG + (1.0 - STRONG) * ((confidence - strong) / (1.0 - strong) if strong < 1.0 else 0.0)
    if confidence >= likely:
        return LIKELY + (STRONG - LIKELY) * (confidence - likely) / (strong - likely)
    return ANSWER_AT + (LIKELY - ANSWER_AT) * (confidence - ANSWER_AT) / (likely - ANSWER_AT)


def level(confidence: float) -> str:
    """The word a person sees for a (calibrated) confidence."""
    return "strong" if confidence >= STRONG else "likely" if confidence >= LIKELY else "weak"


def band(n_docs: int, chars: int) -> str:
    """Which model judges a memory of ``chars`` characters in a project of ``n_docs``."""
    if n_docs <= SMALL_PROJECT:
        return "small"
    return "document" if chars >= DOCUMENT_CHARS else "large"


def mode_of(*, hybrid: bool, tier: str | None = None) -> str:
    """The fitted mode of a search: the transformer tier's, the static tier's ("hybrid") or the words' alone."""
    return ("transformer" if tier == "transformer" else "hybrid") if hybrid else "lexical"


def model_for(*, hybrid: bool, band: str, tier: str | None = None) -> Model:
    """The model of a search's mode: the transformer tier's own, else the static tier's
    (hybrid) or the words' alone (lexical)."""
    return MODELS[(mode_of(hybrid=hybrid, tier=tier), band)]


def confidence(x: Sequence[float], *, hybrid: bool, band: str, tier: str | None = None) -> float:
    model = model_for(hybrid=hybrid, band=band, tier=tier)
    return model.confidence(x[: len(model.features)])
