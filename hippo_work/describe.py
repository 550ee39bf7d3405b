"""The one description of each work-memory parameter, shared by the MCP tools, REST and the `hippo work`
flags. Strings only: the command line builds its parser from them without importing the work API."""

from __future__ import annotations

DESCRIBE: dict[str, str] = {
    "project": "The project, a plain slug (a-z, 0-9, '-', '_'), e.g. the git repository's folder name.",
    "session_id": "Your session's id (the same for every call of this session).",
    "since": "Cursor '<generation>:<seq>' from hippo_resume or the last hippo_sync; '0' reads from the start.",
    "limit": "Entries per page (default 100, at most 500).",
    "kind": "'work': what you did and what is next; 'conversation': a summary of the conversation.",
    "summary": "The checkpoint's text (at most 8 KB; refused when it holds a secret or an injection).",
    "event_id": "Unique per write within the session; a resend with the same id returns the first record.",
    "base_cursor": "The cursor you last read up to; entries you had not seen come back as `unseen`.",
    "agent": "Who writes (e.g. 'claude-code'), shown in the worklog.",
    "entry": "What was done, one line.",
    "next": "What comes next (leave out when nothing is open).",
    "text": "The whole handoff for the next session (Markdown).",
    "name": "The memory's title (it becomes the file name).",
    "body": "The lesson, in a few sentences that make sense outside this project.",
    "scope": "'project' keeps it here; 'shared' offers it to other projects once a person approves it.",
    "query": "What you are looking for.",
    "current_project": "The project you work in now.",
    "k": "How many memories at most (default 5).",
    "anchor": "A result's anchor (search: 'path#heading'; ghost: 'ghost/<project>/<memory>').",
    "useful": "True when the result helped, false when it did not.",
    "verbose": "Long form: every field, also the ones left out to keep results short.",
}
