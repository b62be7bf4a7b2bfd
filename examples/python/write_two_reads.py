"""Two tool calls, interleaved, written as a cassette (docs/faults.md, the stream builder)."""

from harness.builder import StreamBuilder

a = StreamBuilder(start=False).tool(1, "read", {"path": "a.md"}, pieces=3, id="toolu_a")
b = StreamBuilder(start=False).tool(2, "read", {"path": "b.md"}, id="toolu_b")
(
    StreamBuilder()
    .text(0, "Reading ", "both.")
    .ping()
    .interleave([a, b], order=[0, 1, 1, 0, 0, 1, 1, 0, 0, 0])
    .stop("tool_use")
    .write("two_reads.jsonl", "two reads, interleaved")
)
