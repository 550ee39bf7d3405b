"""The compiler's lexical lookup: canonical pages our own index relates to a source (and the tokenizer it uses).

It runs the search library's lexical lane (`hippo_search.pipeline.lexical_lane`) over canonical wiki
pages, without bigram weights or governance: a draft only needs a few pages to cite, not a ranking.
"""

from __future__ import annotations

from hippo_core.index.tokenize import Tokenizer, TokenizerConfig
from hippo_core.wiki.compile_offline import RelatedPage
from hippo_resources import LexicalStore
from hippo_search.pipeline import lexical_lane

_TOKENIZER: Tokenizer | None = None


def tokenizer() -> Tokenizer:
    global _TOKENIZER
    if _TOKENIZER is None:
        _TOKENIZER = Tokenizer(TokenizerConfig())
    return _TOKENIZER


def related_pages(lexical_store: LexicalStore, query: str, k: int = 3) -> list[RelatedPage]:
    """Canonical wiki pages our own lexical index finds for a text (empty before the first index build)."""
    manifest = lexical_store.manifest()
    if manifest is None or not query.strip():
        return []
    view = lexical_store.view(manifest["generation"])
    table = view.table()  # the index's rows, tombstones included (they never score)
    if view.index.n_docs == 0:
        return []
    live = view.index.live
    mask = ((table["lane"] == "wiki") & (table["status"] == "canonical")).to_numpy() & live
    ids = table["chunk_id"].to_list()
    row_of = {cid: i for i, cid in enumerate(ids) if live[i]}
    out: list[RelatedPage] = []
    seen: set[str] = set()
    for cid, _score in lexical_lane(
        view.index, ids, tokenizer().query_tokens(query[:2000]), k * 8, allowed=mask
    ):
        row = table.row(row_of[cid], named=True)
        if row["path"] in seen:
            continue
        seen.add(row["path"])
        out.append(
            RelatedPage(path=row["path"], title=row["title"], sector=row["sector"], excerpt=row["text"][:600])
        )
        if len(out) == k:
            break
    return out
