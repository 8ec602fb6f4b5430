"""A small stdio MCP server for hrns's CLI tests: newline-delimited JSON-RPC on stdin/stdout.

Its tools (each answers with text; errors are `isError` results):
  write      {"path", "text"}  writes a file and says "wrote PATH", or the OSError's text
  look       {}                read-only (readOnlyHint: true): says "looked"
  die        {}                exits at once, without answering
  grow       {}                adds the tool `extra` and sends notifications/tools/list_changed
  extra      {}                (after grow) says "extra ran"
  picture    {}                answers with a text block and a 1x1 PNG image block
  stop_other {}                (with --other PIDFILE) kills the server whose pid PIDFILE holds and
                               says "stopped" once hrns has collected its exit (at most 10 s)

Options: --pidfile PATH writes this server's pid to PATH at start; --other PIDFILE offers
stop_other; --stderr-env NAME writes the value of the variable NAME to stderr: a line at start
(followed by a line of 20000 "z"), a line "last words VALUE" before die exits (and a helper it
leaves behind writes "late words" 0.2 s later), and "bye VALUE" (without a line end) when its
stdin ends.
"""

import json
import os
import signal
import subprocess
import sys
import time

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)

grown = False


def option(name):
    if name in sys.argv[1:-1]:
        return sys.argv[sys.argv.index(name) + 1]
    return None


OTHER = option("--other")
SAID = option("--stderr-env")
SAID = os.environ.get(SAID, "") if SAID else None


def say(words):
    if SAID is not None:
        sys.stderr.write(words)
        sys.stderr.flush()


say("starting with " + str(SAID) + "\n" + "z" * 20000 + "\n")
if option("--pidfile"):
    with open(option("--pidfile"), "w") as f:
        f.write(str(os.getpid()))


def tool(name, description, read_only=False):
    spec = {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": {}},
    }
    if read_only:
        spec["annotations"] = {"readOnlyHint": True}
    return spec


def tools():
    listed = [
        tool("write", "Writes a file."),
        tool("look", "Looks.", read_only=True),
        tool("die", "Exits."),
        tool("grow", "Adds a tool."),
        tool("picture", "Shows a picture.", read_only=True),
    ]
    if grown:
        listed.append(tool("extra", "Appears after grow."))
    if OTHER:
        listed.append(tool("stop_other", "Stops the other server."))
    return listed


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def text(value, is_error=False):
    return {"content": [{"type": "text", "text": value}], "isError": is_error}


def call(name, args):
    global grown
    if name == "write":
        try:
            with open(args["path"], "w") as f:
                f.write(args.get("text", ""))
            return text("wrote " + args["path"])
        except OSError as e:
            return text(str(e), is_error=True)
    if name == "look":
        return text("looked")
    if name == "die":
        say("last words " + str(SAID) + "\n")
        if SAID is not None:
            subprocess.Popen(["sh", "-c", "sleep 0.2; echo late words >&2"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        os._exit(3)
    if name == "grow":
        grown = True
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return text("grown")
    if name == "extra" and grown:
        return text("extra ran")
    if name == "stop_other" and OTHER:
        with open(OTHER) as f:
            pid = int(f.read())
        os.kill(pid, signal.SIGTERM)
        # The other server is hrns's child: it is gone (not a zombie) once hrns collected
        # its exit status, which is when hrns marks it failed.
        for _ in range(1000):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return text("stopped")
            time.sleep(0.01)
        return text("still there", is_error=True)
    if name == "picture":
        return {
            "content": [
                {"type": "text", "text": "a picture:"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
            ]
        }
    return text("no tool " + name, is_error=True)


for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    method = message.get("method")
    if "id" not in message or method is None:
        continue
    if method == "initialize":
        result = {
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "hrns-test", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": tools()}
    elif method == "tools/call":
        params = message.get("params", {})
        result = call(params.get("name"), params.get("arguments") or {})
    else:
        send({"jsonrpc": "2.0", "id": message["id"],
              "error": {"code": -32601, "message": "no " + method}})
        continue
    send({"jsonrpc": "2.0", "id": message["id"], "result": result})
say("bye " + str(SAID))
