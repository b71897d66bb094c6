/* global summary, firstKeptEntryId, session, readFileSync -- from the README block and pi.before.mjs */
// The README's pi 1.x example (pi-1), after the block: what pi committed.
import assert from "node:assert/strict";

assert.ok(summary.startsWith("[compact-safe checkpoint]\n"), summary.slice(0, 80));
const entries = readFileSync(session.sessionFile, "utf8")
  .trim()
  .split("\n")
  .map((l) => JSON.parse(l));
const compaction = entries.find((e) => e.type === "compaction");
assert.equal(compaction.summary, summary);
assert.equal(compaction.firstKeptEntryId, firstKeptEntryId);
assert.equal(compaction.fromHook, true);
// The cut keeps the last task: its instruction and its calls with their results.
const context = JSON.stringify(session.messages);
for (const kept of ["Step 3 too.", "call_3a", "call_3b", "call_2a"]) assert.ok(context.includes(kept), kept);
// The extension audited the compaction pi committed.
const audit = entries.find((e) => e.type === "custom" && e.customType === "compact-safe-audit");
assert.equal(audit.data.kept, true);
session.dispose();
