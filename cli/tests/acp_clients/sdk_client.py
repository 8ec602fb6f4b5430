"""A small ACP client on the official Python SDK (`agent-client-protocol`, module `acp`) that
drives `hrns acp`: it checks the order of a tool call's updates, the diff content of a write,
the file system delegation (it advertises `fs`, holds an unsaved buffer of `b.txt` that the
model's read must see, and takes the write of `a.txt` instead of the disk), and that a cancelled
prompt ends with `cancelled`. Run by cli/tests/acp_clients.rs, which scripts
the provider; prints one JSON summary line and exits non-zero when a check fails.

usage: sdk_client.py HRNS_BINARY WORKSPACE
"""

import asyncio
import json
import os
import sys

from acp import spawn_agent_process, text_block
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    FileEditToolCallContent,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)


class Recorder:
    def __init__(self, workspace):
        self.updates = []
        self.permissions = []
        # The editor's buffers: b.txt has unsaved changes, a.txt is as on disk.
        self.buffers = {
            os.path.join(workspace, "a.txt"): "old\n",
            os.path.join(workspace, "b.txt"): "unsaved buffer\n",
        }
        self.fs_calls = []

    async def read_text_file(self, session_id, path, line=None, limit=None, **kwargs):
        self.fs_calls.append(("read", path))
        if path not in self.buffers:
            raise RuntimeError(f"no buffer for {path}")
        return ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(self, session_id, path, content, **kwargs):
        self.fs_calls.append(("write", path))
        self.buffers[path] = content
        return WriteTextFileResponse()

    def on_connect(self, conn):
        pass

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        self.permissions.append((tool_call.tool_call_id, [o.kind for o in options]))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id="allow_once")
        )

    async def session_update(self, session_id, update, **kwargs):
        self.updates.append(update)


def check(cond, what):
    if not cond:
        print(json.dumps({"failed": what}))
        sys.exit(1)


async def main(binary, workspace):
    workspace = os.path.realpath(workspace)
    client = Recorder(workspace)
    env = dict(os.environ)
    async with spawn_agent_process(client, binary, "acp", cwd=workspace, env=env) as (conn, _proc):
        init = await conn.initialize(
            protocol_version=1,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=True, write_text_file=True)
            ),
        )
        check(init.protocol_version == 1, "protocol version 1")
        check(init.agent_capabilities.load_session, "loadSession")
        session = await conn.new_session(cwd=workspace, mcp_servers=[])
        check(session.modes is not None, "modes in session/new")

        answer = await conn.prompt(
            session_id=session.session_id, prompt=[text_block("write the file")]
        )
        check(answer.stop_reason == "end_turn", f"end_turn, got {answer.stop_reason}")
        check(len(client.permissions) == 1, "one permission request")
        a, b = os.path.join(workspace, "a.txt"), os.path.join(workspace, "b.txt")
        check(("read", b) in client.fs_calls, f"read_file read the buffer, got {client.fs_calls}")
        check(("write", a) in client.fs_calls, f"write_file went to the editor, got {client.fs_calls}")
        check(client.buffers[a] == "new\n", "the editor holds the written text")
        kinds = [u.session_update for u in client.updates]
        statuses = [
            u.status
            for u in client.updates
            if u.session_update in ("tool_call", "tool_call_update")
            and u.tool_call_id == "call_1"
        ]
        check(
            statuses == ["pending", "in_progress", "completed"],
            f"tool call statuses in order, got {statuses}",
        )
        check(
            kinds.index("tool_call") < kinds.index("agent_message_chunk"),
            f"the tool call before the answer, got {kinds}",
        )
        done = [u for u in client.updates if u.session_update == "tool_call_update"][-1]
        diffs = [c for c in done.content if isinstance(c, FileEditToolCallContent)]
        check(len(diffs) == 1, "one diff")
        check(diffs[0].old_text == "old\n" and diffs[0].new_text == "new\n", "diff texts")
        check(diffs[0].path.endswith("/a.txt"), "diff path")

        # The second prompt streams one word, then nothing until cancelled: cancel once the
        # word is seen, so the turn is surely running (a fixed wait can be outlasted by a
        # loaded machine, and a cancel before the turn starts cancels nothing).
        client.updates.clear()
        prompt = asyncio.ensure_future(
            conn.prompt(session_id=session.session_id, prompt=[text_block("wait")])
        )
        for _ in range(3000):
            if any(u.session_update == "agent_message_chunk" for u in client.updates):
                break
            check(not prompt.done(), "the waiting prompt ended before it was cancelled")
            await asyncio.sleep(0.01)
        else:
            check(False, "the waiting prompt's first word never came (30 s)")
        await conn.cancel(session_id=session.session_id)
        cancelled = await prompt
        check(cancelled.stop_reason == "cancelled", f"cancelled, got {cancelled.stop_reason}")
        print(json.dumps({"ok": True, "kinds": kinds}))


asyncio.run(main(sys.argv[1], sys.argv[2]))
