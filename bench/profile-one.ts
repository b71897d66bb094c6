/**
 * Profiles one compaction: `node --cpu-prof dist/bench/profile-one.js FILE|synthetic:N [reps]`.
 * A helper for finding hot spots; not part of `npm run bench`.
 */
import { importFile } from "../src/formats/index.js";
import { liveContext } from "../src/journal/index.js";
import { compactMessagesSafe } from "../src/engine/compact.js";
import { estimateTokens } from "../src/engine/tokens.js";
import { syntheticSession } from "./synthetic.js";
import type { Message } from "../src/model/types.js";

const spec = process.argv[2];
if (!spec) {
  console.error("usage: profile-one FILE|synthetic:N [reps]");
  process.exit(2);
}
const reps = Number(process.argv[3] ?? 20);
const messages: Message[] = spec.startsWith("synthetic:")
  ? syntheticSession(Number(spec.slice(10)))
  : liveContext((await importFile(spec)).entries);
const target = Math.floor(estimateTokens(messages) * 0.3);
const times: number[] = [];
for (let i = 0; i < reps; i++) {
  const t = process.hrtime.bigint();
  const r = await compactMessagesSafe(messages, { target });
  times.push(Number(process.hrtime.bigint() - t) / 1e6);
  if (!r.ok) console.error(r.error);
}
times.sort((a, b) => a - b);
console.log(`${spec}: median ${times[Math.floor(times.length / 2)]!.toFixed(1)} ms over ${reps}`);
