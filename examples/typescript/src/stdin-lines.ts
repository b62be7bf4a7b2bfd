// Standard input's lines, read as the bytes arrive. Not readline's async iterator: it can
// lose lines, or leave `next()` pending for ever (the process then exits 0, having printed
// nothing), when the input and its end arrive together (nodejs/node#28565), which a loaded
// machine makes likely.
export async function* stdinLines(): AsyncGenerator<string> {
  process.stdin.setEncoding("utf8");
  let rest = "";
  for await (const chunk of process.stdin as AsyncIterable<string>) {
    const parts = (rest + chunk).split("\n");
    rest = parts.pop() ?? "";
    for (const part of parts) yield part.endsWith("\r") ? part.slice(0, -1) : part;
  }
  if (rest !== "") yield rest;
}
