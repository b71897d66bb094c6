/**
 * The wire layer's corpus suite (skipped, saying so, on a clone without
 * ../shared): each wire module round-trips the messages of the real sessions
 * in ../shared/corpus.
 *
 * - pi: the session importer and the adapter read every message of the pi
 *   and GJC sessions alike (one reader; see pi.test.ts for the fields).
 * - Where the corpus holds the module's own elements, they are read and
 *   written back: Responses items (Codex rollouts' `response_item` payloads)
 *   and pi messages (pi and GJC sessions' `message` entries) come back
 *   deepEqual; Anthropic content blocks (Claude Code's `message.content`)
 *   come back with every field the Messages API takes; the Chat messages of
 *   the SWE-agent trajectory come back as the same role, text, calls (parsed
 *   arguments) and results.
 * - Every module also takes every corpus session's messages (as the formats
 *   layer imports them) the other way: the AI SDK, LangChain and Responses
 *   (with `carry`) modules give them back deepEqual, which they promise; the
 *   Anthropic and Chat modules give back what the provider takes of them (the
 *   exporter's repair, `prepareForProvider`, applied first, as the exporters
 *   do).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { corpusFiles, corpusSuite } from "../../test/support.js";
import type { Block, Message } from "../model/index.js";
import { importFile } from "../formats/detect.js";
import { prepareForProvider } from "../formats/export/prepare.js";
import { blockToAnthropic, fromAnthropicContent, toAnthropicMessages } from "./anthropic.js";
import { fromChatMessage, toChatMessages } from "./openai-chat.js";
import { itemsToMessages, messagesToItems } from "./responses.js";
import { fromModelMessagesIndexed, toModelMessages } from "./ai-sdk.js";
import { langChainStoredToMessages, messagesToLangChainStored } from "./langchain.js";
import { fromPiMessage, fromPiMessages, toPiMessages } from "./pi.js";
import { isRecord } from "./common.js";
import { convertMessage } from "../formats/import/pi.js";

type Rec = Record<string, unknown>;

/** The JSON records of a JSONL session (its broken lines left out: the formats suite accounts for them). */
function records(file: string): Rec[] {
  const out: Rec[] = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    try {
      const v: unknown = JSON.parse(line);
      if (isRecord(v)) out.push(v);
    } catch {
      // a broken line
    }
  }
  return out;
}

const files = (dir: string): string[] => corpusFiles().filter((f) => f.includes(`/${dir}/`));

/** Every message of a session as the formats layer imports it. */
async function messagesOf(file: string): Promise<Message[]> {
  const r = await importFile(file);
  const out: Message[] = [];
  for (const e of r.entries)
    if (e.kind !== "header" && e.kind !== "compaction" && e.kind !== "branch_summary")
      out.push(e.payload as Message);
  return out;
}

/** A block as the Messages API takes it from its own JSON (the fields `blockToAnthropic` writes). */
function apiFields(raw: Rec): Rec {
  const keep: Record<string, readonly string[]> = {
    text: ["type", "text", "cache_control"],
    thinking: ["type", "thinking", "signature"],
    redacted_thinking: ["type", "data"],
    tool_use: ["type", "id", "name", "input"],
    tool_result: ["type", "tool_use_id", "content", "is_error"],
  };
  const fields = keep[String(raw.type)];
  if (!fields) return raw;
  const out: Rec = {};
  for (const k of fields) if (raw[k] !== undefined) out[k] = raw[k];
  return out;
}

/**
 * A tool result's content as the model reads it: a string, or its text parts
 * joined by newlines (the model holds one text) followed by its other parts.
 */
function resultContent(content: unknown): unknown {
  if (!Array.isArray(content)) return content;
  const isText = (p: unknown) => isRecord(p) && p.type === "text";
  const text = content
    .filter(isText)
    .map((p) => (p as { text: string }).text)
    .join("\n");
  const others = content.filter((p) => !isText(p));
  if (others.length === 0) return text;
  return text === "" ? others : [{ type: "text", text }, ...others];
}

corpusSuite("wire modules round-trip the corpus", () => {
  test("anthropic: Claude Code's content blocks read and written back with every field the API takes", () => {
    let blocks = 0;
    for (const file of files("claude-code")) {
      for (const r of records(file)) {
        const content = isRecord(r.message) ? r.message.content : undefined;
        if (!Array.isArray(content)) continue;
        const back = fromAnthropicContent(content).map(blockToAnthropic);
        assert.equal(back.length, content.length, basename(file));
        content.forEach((raw, i) => {
          const want = apiFields(raw as Rec);
          const got = back[i]!;
          if (want.type === "tool_result") {
            want.content = resultContent(want.content);
            got.content = resultContent(got.content);
          }
          if (got.type === "thinking" && got.signature === undefined) delete got.signature;
          assert.deepEqual(got, want, `${basename(file)}: ${String(want.type)} block`);
          blocks++;
        });
      }
    }
    assert.ok(blocks > 1000, `${blocks} blocks`);
  });

  test("responses: Codex rollouts' response items read and written back deepEqual", () => {
    let items = 0;
    for (const file of files("codex")) {
      const list = records(file)
        .filter((r) => r.type === "response_item" && isRecord(r.payload))
        .map((r) => r.payload);
      const messages = itemsToMessages(list);
      assert.deepEqual(messagesToItems(messages), list, basename(file));
      items += list.length;
    }
    assert.ok(items > 500, `${items} items`);
  });

  test("pi: pi and GJC sessions' messages read and written back deepEqual", () => {
    let count = 0;
    for (const file of [...files("pi"), ...files("gjc")]) {
      const list = records(file)
        .filter((r) => r.type === "message" && isRecord(r.message))
        .map((r) => r.message as Rec);
      const messages = fromPiMessages(list);
      assert.equal(messages.length, list.length, basename(file));
      assert.deepEqual(toPiMessages(messages), list, basename(file));
      count += list.length;
    }
    assert.ok(count > 500, `${count} messages`);
  });

  test("openai-chat: the trajectory's Chat messages read and written back (role, text, calls, results)", () => {
    for (const file of files("openai")) {
      const doc = JSON.parse(readFileSync(file, "utf8")) as { history: Rec[] };
      const messages = doc.history.map((raw) => fromChatMessage(raw)!);
      const back = toChatMessages(messages) as unknown as Rec[];
      assert.equal(back.length, doc.history.length, basename(file));
      doc.history.forEach((raw, i) => {
        const got = back[i]!;
        assert.equal(got.role, raw.role);
        if (raw.role === "tool") assert.equal(got.tool_call_id, (raw.tool_call_ids as string[])[0]);
        const text = (c: unknown) => (c === null ? "" : c);
        assert.deepEqual(text(got.content), raw.content, `${basename(file)}: message ${i}`);
        const calls = (m: Rec) =>
          ((m.tool_calls as Rec[] | undefined) ?? []).map((c) => {
            const fn = c.function as { name: string; arguments: string };
            return [c.id, fn.name, JSON.parse(fn.arguments)];
          });
        assert.deepEqual(calls(got), calls(raw), `${basename(file)}: message ${i}'s calls`);
      });
    }
  });

  test("every corpus session's messages: AI SDK, LangChain and Responses (carry) give them back deepEqual", async () => {
    let count = 0;
    for (const file of corpusFiles()) {
      const messages = await messagesOf(file);
      const name = basename(file);
      assert.deepEqual(
        fromModelMessagesIndexed(toModelMessages(messages), undefined).messages,
        messages,
        `${name}: ai-sdk`,
      );
      assert.deepEqual(
        langChainStoredToMessages(messagesToLangChainStored(messages), (i) => `messages[${i}]`),
        messages,
        `${name}: langchain`,
      );
      assert.deepEqual(
        itemsToMessages(messagesToItems(messages, { carry: true })),
        messages,
        `${name}: responses`,
      );
      count += messages.length;
    }
    assert.ok(count > 2000, `${count} messages`);
  });

  test("every corpus session's messages: Anthropic and Chat give back what the provider takes of them", async () => {
    for (const file of corpusFiles()) {
      const name = basename(file);
      const messages = await messagesOf(file);
      const anthropic = prepareForProvider(messages, "anthropic").messages;
      const read = toAnthropicMessages(anthropic).map((m) => fromAnthropicContent(m.content));
      assert.deepEqual(
        read,
        anthropic.map((m) => m.content.map((b) => fromAnthropicContent([blockToAnthropic(b)])[0]!)),
        `${name}: anthropic`,
      );
      const chat = prepareForProvider(messages, "openai").messages;
      const back = toChatMessages(chat).map((m) => fromChatMessage(m as unknown as Rec)!);
      const calls = (ms: readonly Message[]) =>
        ms.flatMap((m) =>
          m.content.filter((b): b is Block => b.type === "tool_use" || b.type === "tool_result"),
        );
      assert.deepEqual(
        calls(back).map((b) =>
          b.type === "tool_use" ? (b as { id: string }).id : (b as { tool_use_id: string }).tool_use_id,
        ),
        calls(chat).map((b) =>
          b.type === "tool_use" ? (b as { id: string }).id : (b as { tool_use_id: string }).tool_use_id,
        ),
        `${name}: chat calls and results`,
      );
    }
  });

  test("every message of the pi and GJC sessions: the importer and the adapter read the same role, content and usage", () => {
    let compared = 0;
    for (const file of [...files("pi"), ...files("gjc")]) {
      for (const rec of records(file)) {
        if (rec.type !== "message" || !isRecord(rec.message)) continue;
        const imported = convertMessage(rec.message, {});
        if ("skip" in imported) continue;
        const { meta: _a, ...read } = imported;
        const { meta: _b, ...adapter } = fromPiMessage(rec.message);
        assert.deepEqual(read, adapter, `${basename(file)}: ${JSON.stringify(rec.id ?? "")}`);
        compared++;
      }
    }
    assert.ok(compared > 500, `${compared} messages compared`);
  });
});
