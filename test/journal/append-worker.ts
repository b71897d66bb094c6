/**
 * Child process for the concurrent-append fault test: appends `batches`
 * batches of entries to one journal through the compiled write module.
 * Usage: node append-worker.js FILE WORKER ROOT_ID BATCHES PAYLOAD_BYTES
 */
import type { JournalEntry } from "../../src/model/index.js";
import { appendEntries } from "../../src/journal/write.js";

const [file, worker, rootId, batchesArg, payloadArg] = process.argv.slice(2);
if (!file || !worker || !rootId || !batchesArg || !payloadArg) {
  process.stderr.write("usage: append-worker FILE WORKER ROOT_ID BATCHES PAYLOAD_BYTES\n");
  process.exit(2);
}
const batches = Number(batchesArg);
const payloadBytes = Number(payloadArg);

let parent = rootId;
for (let b = 0; b < batches; b++) {
  const size = 1 + (b % 4);
  const batch: JournalEntry[] = [];
  for (let k = 0; k < size; k++) {
    const id = `${worker}-${b}-${k}`;
    const text = `${id}:` + String.fromCharCode(97 + (b % 26)).repeat(payloadBytes + ((b * 7919 + k) % 512));
    batch.push({
      id,
      parent_id: parent,
      kind: "user",
      created_at: new Date().toISOString(),
      payload: { role: "user", content: [{ type: "text", text }] },
    });
    parent = id;
  }
  await appendEntries(file, batch, { lockOptions: { wait: true, timeoutMs: 300_000, pollMs: 1 } });
}
