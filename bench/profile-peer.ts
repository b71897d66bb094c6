/**
 * Profiles compact-safe's cold compaction as `npm run bench:peers` times it (keepRecentTokens B, the
 * stand-in summarizer that builds the LLM prompt), on fresh copies of the messages:
 * `node --cpu-prof dist/bench/profile-peer.js FILE [reps]`. A helper for finding hot spots; not a benchmark.
 */
import { importFile } from "../src/formats/index.js";
import { liveContext } from "../src/journal/index.js";
import { compactMessagesSafe } from "../src/engine/compact.js";
import { estimateTokens } from "../src/engine/tokens.js";
import { buildUserPrompt, SYSTEM_PROMPT } from "../src/summarizers/prompt.js";
import type { Summarizer } from "../src/summarizers/types.js";
import type { Message } from "../src/model/types.js";
import { budgetTokens, STAND_IN_NOTE } from "./peers-core.js";
import { compactSafeOptions } from "./peers-libs.js";

const file = process.argv[2];
if (!file) {
  console.error("usage: profile-peer FILE [reps]");
  process.exit(2);
}
const reps = Number(process.argv[3] ?? 200);
const messages: Message[] = liveContext((await importFile(file)).entries);
const json = JSON.stringify(messages);
const budget = budgetTokens(estimateTokens(messages));
let chars = 0;
const summarizer: Summarizer = {
  name: "stand-in",
  model: "stand-in",
  async summarize(request) {
    chars = SYSTEM_PROMPT.length + buildUserPrompt(request).length;
    return { text: STAND_IN_NOTE, model: "stand-in" };
  },
};
const copies = Array.from({ length: reps }, () => JSON.parse(json) as Message[]);
const times: number[] = [];
const cpu: number[] = [];
for (const copy of copies) {
  const c = process.cpuUsage();
  const t = process.hrtime.bigint();
  const r = await compactMessagesSafe(copy, compactSafeOptions(budget, summarizer));
  times.push(Number(process.hrtime.bigint() - t) / 1e6);
  const d = process.cpuUsage(c);
  cpu.push((d.user + d.system) / 1000);
  if (!r.ok) console.error(r.error);
}
const parses: number[] = [];
for (let i = 0; i < 50; i++) {
  const t = process.hrtime.bigint();
  JSON.parse(json);
  parses.push(Number(process.hrtime.bigint() - t) / 1e6);
}
const med = (a: number[]) => a.sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
const tail = times.slice(Math.floor(reps / 2));
console.log(
  `${file.split("/").pop()}: cold median ${med(tail).toFixed(2)} ms (cpu ${med(cpu.slice(Math.floor(reps / 2))).toFixed(2)}) (second half of ${reps}); messages JSON parse ${med(parses).toFixed(2)} ms; input ${chars} chars`,
);
