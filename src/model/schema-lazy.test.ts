import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";

/**
 * In a fresh process (another test may have loaded zod here): valid entries
 * are checked without loading zod; an invalid one loads it to explain itself.
 */
test("schema: zod is loaded only to explain an invalid value", () => {
  const schema = new URL("./schema.js", import.meta.url).href;
  const script = `
    import { createRequire } from "node:module";
    import { parseJournalEntry, parseMessage } from ${JSON.stringify(schema)};
    const zod = () => Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes("/zod/"));
    const out = [];
    parseJournalEntry({ id: "header", parent_id: null, kind: "header", created_at: "t",
      payload: { session_id: "s", created_at: "t", schema_version: 2, source_format: "codex" } });
    parseJournalEntry({ id: "c", parent_id: "header", kind: "compaction", created_at: "t",
      payload: { summary: "s", tokens_before: 1, tokens_after: 1, model: "m", path: "summary", coverage: null,
        trigger: "auto", replacement: [{ role: "user", content: [{ type: "text", text: "hi" }] }] } });
    parseMessage({ role: "user", usage: { input_tokens: 3, cache_read_input_tokens: null }, content: [
      { type: "tool_result", tool_use_id: "a", content: "x", content_blocks: [{ type: "text", text: "x" }] },
      { type: "image_url", image_url: { url: "u" } }, { type: "custom", anything: 1 }] });
    out.push(zod());
    try { parseMessage({ role: "user", content: [{ type: "tool_use", id: "x", name: 1, input: {} }] }); }
    catch (e) { out.push(e.message); }
    out.push(zod());
    console.log(JSON.stringify(out));`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), [
    false,
    'message.content[0] (tool_use): "name" must be string, got number',
    true,
  ]);
});

/**
 * In a fresh process: the workspace layer, which every command loads for its anchors, loads no zod
 * (it was about a third of a command's start-up); reading an invalid background file loads it to
 * explain itself. zod marks its load on `globalThis`, whichever build (ESM or CommonJS) is loaded.
 */
test("workspace: zod is loaded only to check a background file", () => {
  const workspace = new URL("../workspace/index.js", import.meta.url).href;
  const script = `
    import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
    import { tmpdir } from "node:os";
    import { join } from "node:path";
    import { readAnchors, readBackgroundFile } from ${JSON.stringify(workspace)};
    const zod = () => "__zod_globalConfig" in globalThis;
    const dir = mkdtempSync(join(tmpdir(), "cs-lazy-"));
    const out = [];
    try {
      await readAnchors(dir);
      out.push(zod());
      const file = join(dir, "bg.json");
      writeFileSync(file, JSON.stringify([{ id: "a", kind: "shell" }, { kind: "y" }]));
      try { await readBackgroundFile(file); } catch (e) { out.push(e.message.slice(file.length)); }
      out.push(zod());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    console.log(JSON.stringify(out));`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), [false, ': [1]: missing "id"', true]);
});
