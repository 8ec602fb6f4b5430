# A loopback SSE server for counting `hrns exec` writes (BENCHMARKS.md): one streamed answer of
# N small text deltas, close-delimited. Usage: python3 sse_deltas.py PORT N
import http.server, json, sys
N = int(sys.argv[2])
def body():
    parts = ['data: {"id":"x","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}]}\n\n']
    for i in range(N):
        d = json.dumps({"id":"x","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"content":" w%d" % i + ("\n" if i % 20 == 19 else "")},"finish_reason":None}]})
        parts.append("data: " + d + "\n\n")
    parts.append('data: {"id":"x","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')
    return "".join(parts).encode()
B = body()
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        for i in range(0, len(B), 16384):
            self.wfile.write(B[i:i+16384])
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
