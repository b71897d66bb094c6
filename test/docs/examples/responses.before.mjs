/* eslint-disable @typescript-eslint/no-unused-vars -- client, history and original are used by the README block and the after-file */
// A Responses server on 127.0.0.1 standing in for api.openai.com: it records each request body and answers "ok".
import { createServer } from "node:http";
import OpenAI from "openai";

const received = [];
const server = createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    received.push(JSON.parse(body));
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        id: "resp_1",
        object: "response",
        created_at: 0,
        status: "completed",
        model: "gpt-5",
        output: [
          {
            type: "message",
            id: "msg_1",
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: "ok", annotations: [] }],
          },
        ],
      }),
    );
  });
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const client = new OpenAI({ apiKey: "test", baseURL: `http://127.0.0.1:${server.address().port}/v1` });

// A long Codex-like history: requests, encrypted reasoning, calls and large outputs.
let history = [];
for (let i = 0; i < 20; i++) {
  history.push(
    { role: "user", content: `Step ${i}: read src/file${i}.ts` },
    { type: "reasoning", id: `rs_${i}`, summary: [], encrypted_content: `gAAAAB${Buffer.from(`secret ${i}`).toString("base64")}` },
    { type: "function_call", id: `fc_${i}`, call_id: `call_${i}`, name: "shell", arguments: `{"command": ["cat", "src/file${i}.ts"]}` },
    { type: "function_call_output", call_id: `call_${i}`, output: `// file ${i}\n`.repeat(300) },
  );
}
const original = history;
