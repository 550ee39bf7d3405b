"""The MCP tools, one module per domain: `search` (search, get, bundle, feedback, status and the
server itself), `work` (work memory, ghost layer, the stdio server and its capability gate)."""
