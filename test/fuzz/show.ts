/**
 * Debugging aid for a reproducer: `node dist/test/fuzz/show.js SEED INDEX [test|fuzz]` prints the case's
 * live context, both protected regions (the library's and the oracle's), the replacement and the outcome.
 */
import { makeCase, type Profile } from "./generate.js";
import { runInProcess } from "./pipeline.js";
import { importText } from "../../src/formats/index.js";
import { liveContext, parseJournal } from "../../src/journal/index.js";
import { compactMessagesSafe } from "../../src/engine/index.js";
import { extractiveSummarizer } from "../../src/summarizers/index.js";
import { protectedRound } from "../../src/contract/index.js";
import { protectedRegion } from "./oracle.js";

const [seed, index, profile] = process.argv.slice(2);
const c = makeCase(Number(seed), Number(index), (profile ?? "test") as Profile);
console.log(
  JSON.stringify({
    origin: c.origin,
    mutations: c.mutations,
    file: c.fileName,
    anchors: c.anchors,
    target: c.target,
    pruneOnly: c.pruneOnly,
  }),
);
const short = (v: unknown) => JSON.stringify(v).slice(0, 160);
let live;
try {
  live = c.bytes.toString("utf8").startsWith('{"id"')
    ? liveContext(parseJournal(c.bytes).entries)
    : liveContext(importText(c.bytes.toString("utf8"), c.fileName).entries);
} catch (e) {
  console.log("import error", e);
  process.exit(0);
}
console.log("LIVE");
live.forEach((m, i) => console.log(i, m.role, short(m.content)));
console.log(
  "lib region",
  JSON.stringify(protectedRound(live)),
  "oracle region",
  JSON.stringify(protectedRegion(live)),
);
const r = await compactMessagesSafe(live, {
  summarizer: extractiveSummarizer(),
  anchors: c.anchors,
  target: c.target,
  pruneOnly: c.pruneOnly,
  trigger: "manual",
});
if (!r.ok) console.log("REFUSED", r.error);
else {
  console.log("REPLACEMENT", r.path);
  r.replacement.forEach((m, i) => console.log(i, m.role, short(m.content)));
}
console.log(JSON.stringify(await runInProcess(c), null, 1));
