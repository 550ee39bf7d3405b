"""The gap radar's replay: open knowledge gaps searched again after a rebuild, the answered ones marked.

Run by the `gap_probe` asset and `python -m eval probe`, both through the pipeline in this process.
"""

from __future__ import annotations

from pydantic import BaseModel

from hippo_core.ranking.evidence import Evidence, gap_kind
from hippo_search.envelope import SearchRequest
from hippo_search.pipeline import SearchEngine


class AnsweredGap(BaseModel):
    query: str
    answered_by: str


class GapProbe(BaseModel):
    probed: int
    answered: list[AnsweredGap]


def replay_gaps(engine: SearchEngine) -> GapProbe:
    """Search every open gap again (not logged as a query); a gap whose evidence is now strong is answered."""
    if engine.ledger is None:
        raise ValueError("no ledger configured: the gaps live in the ledger")
    answered: list[AnsweredGap] = []
    gaps = engine.ledger.gaps("open")
    for gap in gaps:
        response = engine.search(SearchRequest(query=gap["query"], limit=5), log=False)
        evidence = [
            Evidence(anchor=h.anchor, coverage=h.coverage, semantic_similarity=h.semantic_similarity)
            for h in response.results
        ]
        if response.status == "ok" and gap_kind(evidence, engine.evidence_params) is None:
            engine.ledger.mark_gap_answered(gap["normalized"], response.results[0].anchor)
            answered.append(AnsweredGap(query=gap["query"], answered_by=response.results[0].anchor))
    return GapProbe(probed=len(gaps), answered=answered)
