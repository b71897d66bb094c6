/**
 * Provider-native compaction (issue 28): an Anthropic `compaction` content
 * block and an OpenAI Responses `compaction` item are canonical
 * `provider_compaction` blocks, imported, written back as they were by an
 * exporter of the same provider, refused by any other exporter, and read as
 * a compaction (an entry the audit judges).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { importText } from "./detect.js";
import { exportLive } from "./registry.js";
import { checkProviderShape } from "./export/check-shape.js";
import { CompactSafeError, type CompactionEntry, type Message } from "../model/index.js";
import { liveContext } from "../journal/index.js";
import { auditEntries } from "../route/audit.js";
import { repoRoot } from "../../test/support.js";

const dir = join(repoRoot, "test", "fixtures", "provider-compaction");
const read = (name: string): string => readFileSync(join(dir, name), "utf8");

const anthropicText = read("anthropic-body.json");
const anthropicBlock = (JSON.parse(anthropicText) as { messages: { content: unknown }[] }).messages[3]!
  .content as Record<string, unknown>[];
const responsesText = read("responses-items.json");
const responsesItem = (JSON.parse(responsesText) as Record<string, unknown>[])[3]!;

function exported(format: "anthropic" | "openai" | "responses", text: string, file: string): string {
  const r = importText(text, file);
  return exportLive(format, liveContext(r.entries), { file, entries: r.entries, format: r.report.format });
}

/** The refusal an exporter throws, or a failure when it wrote something. */
function refusal(run: () => unknown): CompactSafeError {
  try {
    run();
  } catch (e) {
    assert.ok(e instanceof CompactSafeError, String(e));
    return e;
  }
  assert.fail("the exporter wrote the block's history instead of refusing");
}

test("an Anthropic body's compaction block comes back from export --to anthropic byte for byte, in place", () => {
  const body = JSON.parse(exported("anthropic", anthropicText, "body.json")) as {
    messages: { role: string; content: Record<string, unknown>[] }[];
  };
  const holder = body.messages.find((m) => m.content.some((b) => b.type === "compaction"));
  assert.ok(holder, "the compaction block was dropped");
  assert.equal(holder.role, "assistant");
  // The block and the text after it in its message, as the API returned them.
  assert.equal(JSON.stringify(holder.content), JSON.stringify(anthropicBlock));
  // What came after it is still after it.
  assert.equal(
    JSON.stringify(body.messages.at(-1)),
    JSON.stringify({
      role: "user",
      content: [{ type: "text", text: "Also run the whole suite afterwards." }],
    }),
  );
});

test("export --to anthropic opens with the compaction block, after the system prompt, and the shape check takes it", () => {
  const body = JSON.parse(exported("anthropic", anthropicText, "body.json")) as {
    system?: unknown;
    messages: { role: string; content: Record<string, unknown>[] }[];
  };
  // The system prompt survives the provider's compaction (it goes with every request).
  assert.deepEqual(body.system, [{ type: "text", text: "You are a coding agent." }]);
  // The block is the first block of the conversation: no opener before it (compaction_block_misplaced).
  assert.equal(body.messages[0]!.role, "assistant");
  assert.equal(body.messages[0]!.content[0]!.type, "compaction");
  assert.deepEqual(checkProviderShape(body, "anthropic"), { ok: true });
  // Anywhere else the block is what the API refuses.
  const misplaced = {
    messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }, ...body.messages],
  };
  assert.match(
    (checkProviderShape(misplaced, "anthropic") as { reason: string }).reason,
    /^messages\[1\]\.content\[0\]: a compaction block must be the first block of the conversation/,
  );
});

test("a Responses compaction item comes back from export --to responses byte for byte, in place", () => {
  const body = JSON.parse(exported("responses", responsesText, "items.json")) as {
    input: Record<string, unknown>[];
  };
  const at = body.input.findIndex((i) => i.type === "compaction");
  assert.ok(at >= 0, "the compaction item was dropped");
  assert.equal(JSON.stringify(body.input[at]), JSON.stringify(responsesItem));
  assert.equal(body.input.length - at, 2, "the user message after it is still after it");
});

test("an exporter that cannot carry a provider compaction refuses with one line, never drops it", () => {
  for (const [to, text, file, provider] of [
    ["openai", anthropicText, "body.json", "anthropic"],
    ["responses", anthropicText, "body.json", "anthropic"],
    ["anthropic", responsesText, "items.json", "openai"],
    ["openai", responsesText, "items.json", "openai"],
  ] as const) {
    const e = refusal(() => exported(to, text, file));
    assert.equal(e.code, "unsupported_block", `${to} <- ${provider}`);
    assert.ok(!e.message.includes("\n"), e.message);
    assert.match(e.message, new RegExp(`${provider} compaction`));
    assert.match(e.message, new RegExp(`export to ${to}`));
  }
});

function compactions(text: string, file: string): { entries: CompactionEntry[]; live: Message[] } {
  const r = importText(text, file);
  return {
    entries: r.entries.filter((e): e is CompactionEntry => e.kind === "compaction"),
    live: liveContext(r.entries),
  };
}

test("a history holding a provider compaction is compacted there: an entry whose replacement is the system prompt, then the block", () => {
  const a = compactions(anthropicText, "body.json");
  assert.equal(a.entries.length, 1);
  const c = a.entries[0]!;
  assert.equal(c.payload.source_agent, "anthropic");
  assert.equal(c.payload.path, "summary");
  assert.match(c.payload.summary, /^The user asked to fix the failing login test/);
  // The system prompt is the request's, never summarized by the provider: it stays before the block.
  assert.deepEqual(c.payload.replacement[0], {
    role: "system",
    content: [{ type: "text", text: "You are a coding agent." }],
  });
  assert.equal(c.payload.replacement[1]!.content[0]!.type, "provider_compaction");
  // How many messages of the conversation the block summarized, for a checkpoint that has to fold it.
  assert.equal(c.payload.replacement[1]!.meta?.compacted_messages, 3);
  // The live context is what the provider keeps: the system prompt, the block on, then what followed.
  assert.equal(a.live[0]!.role, "system");
  assert.equal(a.live[1]!.content[0]!.type, "provider_compaction");
  assert.equal(a.live.length, 3);

  const o = compactions(responsesText, "items.json");
  assert.equal(o.entries.length, 1);
  assert.equal(o.entries[0]!.payload.source_agent, "openai");
  assert.equal(o.entries[0]!.payload.summary, "");
  assert.equal(o.entries[0]!.payload.opaque_summary, true);
});

test("audit judges a provider compaction on what the context after it kept, and says when the summary is opaque", () => {
  const r = importText(anthropicText, "body.json");
  const audit = auditEntries(r.entries);
  assert.equal(audit.compactions.length, 1);
  const a = audit.compactions[0]!;
  assert.equal(a.source, "anthropic");
  assert.equal(a.kept, false);
  assert.match(a.reason!, /last round/);
  assert.deepEqual(a.provider_compaction, { provider: "anthropic", opaque: false, summary_chars: 104 });

  const o = auditEntries(importText(responsesText, "items.json").entries).compactions[0]!;
  assert.equal(o.source, "openai");
  assert.equal(o.kept, false);
  assert.equal(o.provider_compaction?.opaque, true);
  assert.deepEqual(o.losses.tool_calls, ["call_1"]);
});

test("a Codex rollout's remote compaction (v1 and v2) keeps its encrypted item and gets a verdict", () => {
  for (const file of ["codex-remote-v1.jsonl", "codex-remote-v2.jsonl"]) {
    const r = importText(read(file), file);
    assert.equal(r.report.format, "codex", file);
    const cs = r.entries.filter((e): e is CompactionEntry => e.kind === "compaction");
    assert.equal(cs.length, 1, file);
    const blocks = cs[0]!.payload.replacement.flatMap((m) => m.content);
    const native = blocks.find((b) => b.type === "provider_compaction") as { native?: unknown } | undefined;
    assert.ok(native, `${file}: the compaction item was dropped from the replacement`);
    assert.equal(
      JSON.stringify(native.native),
      JSON.stringify({
        type: "compaction",
        encrypted_content: "gAAAAABpHxRlbW90ZSBjb21wYWN0aW9uIG9mIGEgcm9sbG91dA==",
      }),
    );
    assert.equal(cs[0]!.payload.path, "summary", file);
    const a = auditEntries(r.entries).compactions[0]!;
    assert.equal(a.source, "codex");
    assert.equal(a.kept, false, file);
    assert.match(a.reason!, /tool call "call_read"/);
    assert.equal(a.provider_compaction?.opaque, true, file);
    // The rollout goes back out as Responses items with the item as it was.
    const back = exportLive("responses", liveContext(r.entries), {
      file,
      entries: r.entries,
      format: "codex",
    });
    const items = (JSON.parse(back) as { input: Record<string, unknown>[] }).input;
    assert.ok(
      items.some((it) => JSON.stringify(it) === JSON.stringify(native.native)),
      file,
    );
  }
});
