"""MCP tools of search: search, get, bundle, feedback and status, over the same engine as REST.

Failures are raised as they come: `Librarian.call_tool` maps them (`code: reason`), as REST does."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Annotated, Any

import anyio
from mcp.types import ToolAnnotations
from pydantic import Field

from hippo_core.vault.vault_layout import LANES
from hippo_search.bundle import build_bundle, record_feedback
from hippo_search.envelope import SearchRequest
from hippo_server.mcp.annotations import READ_ONLY
from hippo_server.schemas import read_document, redacted

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from hippo_server.mcp import Backing


def _described(field: str) -> Any:
    """The request model's own description of a field, so MCP, REST and the CLI describe it alike."""
    return Field(description=SearchRequest.model_fields[field].description)


def register(mcp: MCPServer, backing: Backing) -> None:
    """The search tools, when the librarian has a search engine."""
    engine = backing.engine
    if engine is None:
        return

    @mcp.tool(annotations=READ_ONLY)
    async def hippo_search(
        query: Annotated[str, _described("query")],
        limit: Annotated[int, _described("limit")] = 10,
        lanes: Annotated[
            list[str] | None,
            # the enum is shown in the schema; SearchRequest checks it with a clean message (no input echoed)
            Field(
                description=SearchRequest.model_fields["lanes"].description,
                json_schema_extra={"items": {"type": "string", "enum": list(LANES)}},
            ),
        ] = None,
        path_prefix: Annotated[str | None, _described("path_prefix")] = None,
        include_tool_output: Annotated[bool, _described("include_tool_output")] = True,
        include_navigation: Annotated[bool, _described("include_navigation")] = False,
        as_of: Annotated[str | None, _described("as_of")] = None,
        include_history: Annotated[bool, _described("include_history")] = False,
    ) -> dict[str, Any]:
        """Hybrid (BM25 + vector) search of the vault. Returns sections with `path#heading` anchors,
        snippets, scores and which retrieval lanes matched. Lanes: wiki, sources, notes, conversations
        (agent conversations; include_tool_output=false leaves out tool calls and their outputs).
        Generated navigation pages (HOME, index, log, hubs) only with include_navigation=true. Each result
        carries its source's `date`; `as_of` (ISO date) searches the vault as it was then."""
        request = SearchRequest(
            query=query,
            limit=limit,
            lanes=lanes,
            path_prefix=path_prefix,
            include_tool_output=include_tool_output,
            include_navigation=include_navigation,
            as_of=as_of,
            include_history=include_history,
        )
        response = await anyio.to_thread.run_sync(partial(engine.search, request, log=False))
        engine.log_later(request, response)  # the query log's commit is no part of the answer's latency
        return redacted(response)

    @mcp.tool(annotations=READ_ONLY)
    async def hippo_get(
        ref: Annotated[
            str, Field(description="A document path, or a section anchor `path#heading` from hippo_search.")
        ],
    ) -> dict[str, Any]:
        """Read a whole document (`path`) or one section (`path#heading`, as returned by hippo_search)."""
        section = await anyio.to_thread.run_sync(read_document, engine, ref)
        return redacted(section)

    @mcp.tool(annotations=READ_ONLY)
    async def hippo_bundle(
        question: Annotated[str, Field(description="The question the evidence should answer.")],
        k: Annotated[int, Field(description="How many sections of evidence, 1 to 20.")] = 5,
    ) -> dict[str, Any]:
        """Evidence for a question: the top sections (anchor, text), a 0..1 sufficiency score and the
        reason. A weak bundle means the vault does not know this well; it is recorded as a knowledge gap."""
        bundle = await anyio.to_thread.run_sync(build_bundle, engine, question, max(1, min(k, 20)))
        return redacted(bundle)

    @mcp.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False))
    async def hippo_feedback(
        query: Annotated[str, Field(description="The query the result was returned for.")],
        anchor: Annotated[str, Field(description="The result's anchor (`path#heading`).")],
        useful: Annotated[bool, Field(description="True when the result helped answer the query.")],
    ) -> dict[str, Any]:
        """Say whether a result (anchor) was useful for a query; judgements become golden-set candidates."""
        await anyio.to_thread.run_sync(record_feedback, engine, query, anchor, useful)
        return {"recorded": True}

    @mcp.tool(annotations=READ_ONLY)
    async def hippo_status() -> dict[str, Any]:
        """What is indexed: generation, documents, chunks, vectors, embedding model, ranking parameters."""
        return await anyio.to_thread.run_sync(engine.status)
