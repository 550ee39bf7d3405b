"""The deterministic router: does a prompt need the person's memory, and how well does each candidate fit?

Pure scoring over what the normal search returned for the prompt (its lanes' ranks and similarities, the
share of the query's terms a section covers, the weak-hit floor, whether both lanes agree) and over the
prompt's own shape (a question about the person's own past vs. a generic task). The thresholds live in
`RouteParams` and are chosen by `python -m eval.recall_bench` on one data set and reported on another.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, Field

from hippo_core.index.tokenize import Tokenizer, bigram_heads
from hippo_core.ranking.evidence import content_terms

# Linear-time patterns only (no nested quantifiers): word lists matched on word boundaries.
_MEMORY_CUES = re.compile(
    r"\b(remember|recall|remind|last time|earlier|before|previous(?:ly)?|decided|agreed|we said|"
    r"did (?:i|we|you)|have (?:i|we)|when did|what did|where did|who did|how (?:long|many|much) (?:did|have))\b"
    r"|지난|저번|예전|결정|했었|했던",
    re.IGNORECASE,
)
_TASK_CUES = re.compile(
    r"\b(write|implement|refactor|fix|generate|create|translate|convert|explain|summari[sz]e|draft|"
    r"compose|design|debug|optimi[sz]e|rewrite|code|function|class|script|regex|sql|essay|poem|story|"
    r"email|letter|recipe|joke)\b"
    r"|작성|구현|번역|설명|만들어|짜줘|고쳐",
    re.IGNORECASE,
)
_WORD = re.compile(r"\w+")
_TERMS = Tokenizer(morphology=False)  # counts a query's terms as coverage counts them (no Kiwi model)


class QueryShape(BaseModel):
    """What the prompt's own words say about whether it is about the person's memory. Pronouns are no cue:
    every request to an assistant says "I" and "my"."""

    words: int
    terms: int = Field(description="Its search terms (content words; a Hangul word's head bigram).")
    memory_cues: int
    task_cues: int
    question: bool


def query_shape(query: str) -> QueryShape:
    text = query[:4000]
    tokens = _TERMS.tokenize(text)
    return QueryShape(
        words=len(_WORD.findall(text)),
        terms=len(content_terms(tokens) | set(bigram_heads(tokens))),
        memory_cues=len(_MEMORY_CUES.findall(text)),
        task_cues=len(_TASK_CUES.findall(text)),
        question="?" in text
        or text.lstrip()
        .lower()
        .startswith(
            ("what", "when", "where", "who", "how", "why", "which", "did", "do ", "does", "is ", "are ")
        ),
    )


class RouteCandidate(BaseModel):
    """The fields of a search hit the router reads (a `SearchHit` validates into it)."""

    anchor: str
    score: float = 0.0
    matched_by: list[str] = Field(default_factory=list)
    semantic_similarity: float | None = None
    coverage: float = 0.0
    weak: bool = False
    lexical_rank: int | None = None
    semantic_rank: int | None = None


class RouteParams(BaseModel, frozen=True):
    """The bars (`need_threshold` with both lanes, `lexical_need_threshold` with the lexical lane alone) are
    chosen by `python -m eval.recall_bench` leaving one set out (fit on LoCoMo-dev, reported on
    LongMemEval-dev and back; docs/benchmarks/recall_bench.md); the other values are set by hand from the
    lanes' calibration (similarity bounds around the solo-match floor) and the prompt shapes seen there."""

    coverage_strong: float = Field(default=0.6, gt=0, le=1)
    similarity_low: float = Field(default=0.80, ge=-1, le=1)
    similarity_high: float = Field(default=0.88, ge=-1, le=1)
    semantic_weight: float = Field(
        default=0.0,
        ge=0,
        le=1,
        description="The semantic lane's share of a fit (the rest is coverage). 0: on LoCoMo-dev and "
        "LongMemEval-dev multilingual-e5-small's similarities did not separate prompts the memory can answer "
        "from others (both ~0.80-0.87), so the semantic lane brings candidates and coverage judges them.",
    )
    agreement_bonus: float = Field(default=0.0, ge=0, le=1)  # 0.1 let more unrelated prompts through
    weak_factor: float = Field(default=0.5, ge=0, le=1)
    rank_decay: float = Field(default=0.08, ge=0, le=1)
    need_threshold: float = Field(default=0.575, ge=0, le=1)  # chosen on LoCoMo-dev and on LongMemEval-dev
    lexical_need_threshold: float = Field(
        default=0.575, ge=0, le=1, description="The bar when no candidate carries a semantic similarity."
    )
    memory_cue_bonus: float = Field(default=0.05, ge=0, le=1)
    task_cue_penalty: float = Field(default=0.1, ge=0, le=1)
    min_words: int = Field(
        default=3, ge=0, description="Shorter prompts (`continue`, `window?`, `yes do it`) steer the agent."
    )
    term_prior: float = Field(
        default=1.0,
        ge=0,
        description="Coverage is shrunk as if the query had this many more terms, none covered: one of two "
        "terms is weaker evidence than four of eight.",
    )
    min_fit: float = Field(default=0.3, ge=0, le=1)  # candidates under it are not injected


def lexical_only(candidates: Sequence[RouteCandidate]) -> bool:
    """No candidate carries a semantic similarity: the lexical lane answered alone (the hook's in-process
    search, or a librarian whose semantic lane is down)."""
    return not any(c.semantic_similarity is not None for c in candidates)


def candidate_fit(
    c: RouteCandidate, rank: int, params: RouteParams, lexical_alone: bool = False, terms: int | None = None
) -> float:
    """0..1: lexical coverage (shrunk by `term_prior` for a query of `terms` terms) and semantic closeness
    combined, lane agreement rewarded, weak hits and lower ranks discounted; with the lexical lane alone,
    its coverage is the whole evidence."""
    cov = c.coverage if terms is None else c.coverage * terms / (terms + params.term_prior)
    lexical = min(cov / params.coverage_strong, 1.0)
    if lexical_alone:
        fit = lexical
    else:
        semantic = 0.0
        if c.semantic_similarity is not None:
            span = max(params.similarity_high - params.similarity_low, 1e-6)
            semantic = min(max((c.semantic_similarity - params.similarity_low) / span, 0.0), 1.0)
        fit = (1 - params.semantic_weight) * lexical + params.semantic_weight * semantic
        if "lexical" in c.matched_by and "semantic" in c.matched_by:
            fit += params.agreement_bonus
    if c.weak:
        fit *= params.weak_factor
    fit *= max(0.0, 1.0 - params.rank_decay * rank)
    return round(min(max(fit, 0.0), 1.0), 4)


def shape_offset(shape: QueryShape, params: RouteParams) -> float:
    """How much the prompt's shape moves the bar: memory cues lower it, a generic task raises it."""
    offset = 0.0
    if shape.memory_cues:
        offset -= params.memory_cue_bonus
    if shape.task_cues and not shape.memory_cues:
        offset += params.task_cue_penalty
    return offset


class RouteDecision(BaseModel):
    needs_context: bool
    confidence: float = Field(description="The best fit minus the bar (negative: no context needed).")
    fits: list[float]


def decide(
    query: str, candidates: Sequence[RouteCandidate], params: RouteParams | None = None
) -> RouteDecision:
    """`needs_context` when the best candidate's fit clears the bar the prompt's shape sets (the lexical
    bar when the lexical lane answered alone); a prompt of fewer than `min_words` words never needs it."""
    params = params or RouteParams()
    alone = lexical_only(candidates)
    shape = query_shape(query)
    fits = [candidate_fit(c, i, params, alone, shape.terms) for i, c in enumerate(candidates)]
    bar = (params.lexical_need_threshold if alone else params.need_threshold) + shape_offset(shape, params)
    best = max(fits, default=0.0)
    needs = bool(fits) and best >= bar and shape.words >= params.min_words
    return RouteDecision(needs_context=needs, confidence=round(best - bar, 4), fits=fits)
