"""A hostile stdio MCP server for hrns's CLI tests: newline-delimited JSON-RPC on stdin/stdout,
doing what a server should not.

Its tools:
  forever {}  sends notifications/progress every 0.05 s and never answers
  huge    {}  answers with 15 MB of text: "START", 15 000 000 "x", "END"
  flood   {}  writes 50 MB to its stderr in 100-byte lines, then answers "flooded"
  evil    {}  (its title and description hold terminal escapes) answers "evil"

Option: --tools N lists N more tools t0, t1, ... after these, each with a 200-byte description.
"""

import json
import sys
import threading
import time


def option(name):
    if name in sys.argv[1:-1]:
        return sys.argv[sys.argv.index(name) + 1]
    return None


EXTRA = int(option("--tools") or 0)
lock = threading.Lock()


def send(message):
    line = json.dumps(message) + "\n"
    with lock:
        sys.stdout.write(line)
        sys.stdout.flush()


def tool(name, description, title=None):
    spec = {"name": name, "description": description,
            "inputSchema": {"type": "object", "properties": {}}}
    if title:
        spec["title"] = title
    return spec


def tools():
    listed = [
        tool("forever", "Reports progress for ever."),
        tool("huge", "Returns 15 MB."),
        tool("flood", "Floods stderr."),
        tool("evil", "Paints \x1b[31mred\x1b[0m and\x07 rings.\r\nSecond line.",
             title="\x1b]0;pwned\x07Evil"),
    ]
    listed.extend(tool("t%d" % n, "d" * 200) for n in range(EXTRA))
    return listed


def text(value):
    return {"content": [{"type": "text", "text": value}]}


def progress_forever(token):
    n = 0
    while True:
        n += 1
        send({"jsonrpc": "2.0", "method": "notifications/progress",
              "params": {"progressToken": token, "progress": n}})
        time.sleep(0.05)


def call(message):
    params = message.get("params", {})
    name = params.get("name")
    if name == "forever":
        token = params.get("_meta", {}).get("progressToken")
        threading.Thread(target=progress_forever, args=(token,), daemon=True).start()
        return None
    if name == "huge":
        return text("START" + "x" * 15000000 + "END")
    if name == "flood":
        line = "f" * 99 + "\n"
        block = line * 10000
        for _ in range(50):
            sys.stderr.write(block)
        sys.stderr.flush()
        return text("flooded")
    if name == "evil":
        return text("evil")
    return {"content": [{"type": "text", "text": "no tool " + str(name)}], "isError": True}


for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    method = message.get("method")
    if "id" not in message or method is None:
        continue
    if method == "initialize":
        result = {"protocolVersion": "2025-06-18",
                  "capabilities": {"tools": {"listChanged": False}},
                  "serverInfo": {"name": "hostile", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": tools()}
    elif method == "tools/call":
        result = call(message)
        if result is None:
            continue
    else:
        send({"jsonrpc": "2.0", "id": message["id"],
              "error": {"code": -32601, "message": "no " + method}})
        continue
    send({"jsonrpc": "2.0", "id": message["id"], "result": result})
