/**
 * Fuzz cases: a history, serialized to bytes in one of the importable
 * formats, with the mutations applied. A case is a pure function of
 * (seed, index, profile), so any failure is reproduced from those three.
 *
 * Half the cases start from the generated histories of test/arbitraries.ts
 * (mutated as messages, and as journal lines like the corpus: checkpoint markers at the start of user text, orphan
 * results, in-flight and abandoned calls, duplicate tool ids, huge results,
 * unsigned thinking, control characters, blocks missing fields), half from a
 * window of a real corpus session (mutated as JSON and as lines: dropped,
 * duplicated, truncated or junk lines, missing fields, wrong types, huge
 * strings, control characters, duplicate ids, deep nesting, markers); some
 * get byte flips or a cut on top. The corpus is read, never written. On a
 * clone without ../shared every case starts from the generated histories
 * (`fuzzSources()` says so).
 */
import { readFileSync } from "node:fs";
import { basename, relative } from "node:path";
import fc from "fast-check";
import type { Block, JournalEntry, Message } from "../../src/model/types.js";
import { kindForMessage } from "../../src/model/types.js";
import { toAnthropicRequest, toOpenAIRequest } from "../../src/formats/index.js";
import { history } from "../arbitraries.js";
import { corpusDir, corpusFiles, corpusMissing } from "../support.js";
import { caseSeed, mulberry32, type Rng } from "./rng.js";
import {
  CHECKPOINT_MARKERS,
  PLANTED_TAG,
  controlString,
  hugeString,
  mutateBytes,
  mutateJson,
  mutateLines,
  stringifyWithDeep,
} from "./mutate.js";

export type Profile = "test" | "fuzz";

export interface FuzzCase {
  seed: number;
  index: number;
  /** Where the history came from, e.g. `arbitrary → journal` or `corpus pi/x.jsonl lines 10..40`. */
  origin: string;
  mutations: string[];
  /** The file name the bytes are imported under (its extension can matter: `.traj`). */
  fileName: string;
  bytes: Buffer;
  anchors: string;
  /** Size to reach (undefined: the engine's default, half). */
  target?: number;
  pruneOnly: boolean;
}

interface Limits {
  hugeBytes: () => number;
  depth: () => number;
  window: () => number;
}

function limits(profile: Profile, rng: Rng): Limits {
  return profile === "test"
    ? {
        hugeBytes: () => rng.pick([300, 9000, 20_000, 70_000]),
        depth: () => rng.pick([50, 3000, 20_000]),
        window: () => rng.int(3, 50),
      }
    : {
        hugeBytes: () => rng.pick([300, 9000, 70_000, 600_000, 2_000_000]),
        depth: () => rng.pick([50, 3000, 20_000, 200_000]),
        window: () => (rng.chance(0.05) ? 1_000_000 : rng.int(3, 200)),
      };
}

// ------------------------------------------------------------- messages

const clone = <T>(v: T): T => structuredClone(v);

function toolUses(ms: Message[]): { m: number; b: Block & { id: string } }[] {
  const out: { m: number; b: Block & { id: string } }[] = [];
  ms.forEach((m, i) =>
    m.content.forEach((b) => {
      if (b.type === "tool_use") out.push({ m: i, b: b as Block & { id: string } });
    }),
  );
  return out;
}

/** One message-level mutation (in place). */
function mutateMessages(ms: Message[], rng: Rng, lim: Limits, nonce: () => string): string {
  const users = ms.flatMap((m, i) =>
    m.role === "user" &&
    m.content.some((b) => b.type === "text") &&
    !m.content.some((b) => b.type === "tool_result")
      ? [i]
      : [],
  );
  const results = ms.flatMap((m) => m.content.filter((b) => b.type === "tool_result")) as (Block &
    Record<string, unknown>)[];
  switch (rng.int(0, 10)) {
    case 0: {
      if (users.length === 0) return "marker-in-user-text (no user)";
      const i = rng.chance(0.6) ? users[users.length - 1]! : rng.pick(users);
      const b = ms[i]!.content.find((x) => x.type === "text") as { text: string };
      b.text = `${rng.pick(CHECKPOINT_MARKERS)} ${nonce()} ${b.text}`;
      return `marker-in-user-text@${i}`;
    }
    case 1: {
      const at = rng.chance(0.5) ? 0 : rng.int(0, ms.length);
      ms.splice(at, 0, {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: `orphan_${rng.int(0, 99)}`, content: "orphan output" }],
      });
      return `orphan-result@${at}`;
    }
    case 2: {
      const at = rng.chance(0.5) ? ms.length : rng.int(0, ms.length);
      ms.splice(at, 0, {
        role: "assistant",
        content: [
          { type: "tool_use", id: `inflight_${rng.int(0, 99)}`, name: "Bash", input: { command: "make" } },
        ],
      });
      return at === ms.length - 1 ? "in-flight-call" : `abandoned-call@${at}`;
    }
    case 3: {
      const uses = toolUses(ms);
      if (uses.length < 2) return "duplicate-tool-id (too few calls)";
      const a = rng.pick(uses);
      const b = rng.pick(uses);
      const old = b.b.id;
      b.b.id = a.b.id;
      if (rng.chance(0.7))
        for (const m of ms)
          for (const x of m.content)
            if (x.type === "tool_result" && (x as { tool_use_id: string }).tool_use_id === old)
              (x as { tool_use_id: string }).tool_use_id = a.b.id;
      return `duplicate-tool-id ${a.b.id}`;
    }
    case 4: {
      if (results.length === 0) return "huge-result (no result)";
      const r = rng.pick(results);
      r.content = hugeString(rng, lim.hugeBytes());
      if (rng.chance(0.4)) r.is_error = true;
      if (rng.chance(0.3))
        r.content_blocks = [{ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }];
      return "huge-result";
    }
    case 5: {
      const asst = ms.flatMap((m, i) => (m.role === "assistant" ? [i] : []));
      if (asst.length === 0) return "unsigned-thinking (no assistant)";
      for (let k = rng.int(1, 3); k > 0; k--)
        ms[rng.pick(asst)]!.content.unshift({
          type: "thinking",
          thinking: hugeString(rng, rng.int(200, 6000)),
        });
      return "unsigned-thinking";
    }
    case 6: {
      const texts = ms.flatMap((m) => m.content.filter((b) => b.type === "text")) as { text: string }[];
      if (texts.length === 0) return "control-chars (no text)";
      const t = rng.pick(texts);
      t.text = controlString(rng) + t.text + controlString(rng);
      return "control-chars";
    }
    case 7: {
      if (results.length === 0) return "is-error (no result)";
      rng.pick(results).is_error = true;
      return "is-error";
    }
    case 8: {
      const m = rng.pick(ms.length > 0 ? ms : [{ role: "user", content: [] } as Message]);
      m.content.push(
        rng.pick<Block>([
          { type: "text" } as unknown as Block,
          { type: "redacted_thinking", data: "UmVkYWN0ZWQ=" },
          { type: "server_tool_use", id: `srv_${rng.int(0, 9)}`, name: "web_search", input: {} },
          { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
          { type: "text", text: "" },
        ]),
      );
      return "odd-block";
    }
    case 9: {
      ms.push({ role: "assistant", content: [{ type: "text", text: hugeString(rng, lim.hugeBytes()) }] });
      return "big-assistant-tail";
    }
    default: {
      if (ms.length === 0) return "drop-message (empty)";
      const at = rng.int(0, ms.length - 1);
      ms.splice(at, 1);
      return `drop-message@${at}`;
    }
  }
}

const STAMP = "2026-01-01T00:00:00.000Z";

/** Canonical messages as a compact-safe journal (deterministic ids). */
export function journalText(ms: readonly Message[], tag: string): string {
  const entries: JournalEntry[] = [
    {
      id: `${tag}-h`,
      parent_id: null,
      kind: "header",
      created_at: STAMP,
      payload: { session_id: tag, created_at: STAMP, schema_version: 2, source_format: "journal" },
    },
  ];
  ms.forEach((m, i) =>
    entries.push({
      id: `${tag}-${i}`,
      parent_id: i === 0 ? `${tag}-h` : `${tag}-${i - 1}`,
      kind: kindForMessage(m),
      created_at: STAMP,
      payload: m,
    } as JournalEntry),
  );
  return entries.map((e) => JSON.stringify(e)).join("\n") + "\n";
}

// --------------------------------------------------------------- corpus

/** Where the cases start from: one line for the campaign's report. */
export function fuzzSources(): string {
  return corpusMissing
    ? `fuzz sources: generated histories only (${corpusMissing}; the corpus windows are not drawn)`
    : `fuzz sources: generated histories and windows of the corpus at ${corpusDir}`;
}

let corpusCache: { rel: string; text: string }[] | undefined;
function corpus(): { rel: string; text: string }[] {
  corpusCache ??= corpusFiles().map((f) => ({ rel: relative(corpusDir, f), text: readFileSync(f, "utf8") }));
  return corpusCache;
}

/** JSON-level mutations of up to three lines, then (sometimes) one line-level mutation. */
function mutateJsonl(
  lines: string[],
  rng: Rng,
  lim: Limits,
  nonce: () => string,
  mutations: string[],
): string[] {
  const k = rng.int(0, 3);
  const deep = new Set<number>(); // lines already holding deep nesting are not parsed again
  for (let i = 0; i < k; i++) {
    const at = rng.int(0, lines.length - 1);
    if (deep.has(at)) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(lines[at]!);
    } catch {
      continue;
    }
    const label = mutateJson(parsed, rng, { hugeBytes: lim.hugeBytes(), nonce });
    if (!label) continue;
    if (label === "deep-nesting") deep.add(at);
    mutations.push(`${label} (line ${at + 1})`);
    lines[at] = stringifyWithDeep(parsed, rng, lim.depth());
  }
  if (rng.chance(0.35)) {
    const r = mutateLines(lines, rng);
    lines = r.lines;
    mutations.push(r.label);
  }
  return lines;
}

function corpusCase(
  rng: Rng,
  lim: Limits,
  nonce: () => string,
  mutations: string[],
): { origin: string; fileName: string; text: string } {
  const file = rng.pick(corpus());
  const fileName = basename(file.rel);
  if (!file.rel.endsWith(".jsonl")) {
    // A JSON document (SWE-agent .traj): a window of its history.
    const doc = JSON.parse(file.text) as { history?: unknown[] };
    const h = Array.isArray(doc.history) ? doc.history : [];
    const w = Math.min(h.length, lim.window());
    const a = rng.int(0, Math.max(0, h.length - w));
    doc.history = [...h.slice(0, Math.min(a, 2)), ...h.slice(Math.max(a, 2), a + w)];
    const k = rng.int(0, 3);
    for (let i = 0; i < k; i++) {
      const label = mutateJson(doc.history, rng, { hugeBytes: lim.hugeBytes(), nonce });
      if (label) mutations.push(label);
    }
    return {
      origin: `corpus ${file.rel} history ${a}..${a + w}`,
      fileName,
      text: stringifyWithDeep(doc, rng, lim.depth()),
    };
  }
  const all = file.text.split("\n");
  if (all[all.length - 1] === "") all.pop();
  const w = Math.min(all.length, lim.window());
  const a = rng.int(0, all.length - w);
  let lines = all.slice(a, a + w);
  if (a > 0 && rng.chance(0.8)) lines.unshift(all[0]!); // keep the session header line
  lines = mutateJsonl(lines, rng, lim, nonce, mutations);
  return { origin: `corpus ${file.rel} lines ${a + 1}..${a + w}`, fileName, text: lines.join("\n") + "\n" };
}

function arbitraryCase(
  seed: number,
  rng: Rng,
  lim: Limits,
  nonce: () => string,
  mutations: string[],
): { origin: string; fileName: string; text: string } {
  const ms = clone(fc.sample(history, { seed, numRuns: 1 })[0]!);
  for (let k = rng.int(0, 3); k > 0; k--) mutations.push(mutateMessages(ms, rng, lim, nonce));
  const as = rng.int(0, 9);
  if (as < 5) {
    let text = journalText(ms, `s${seed}`);
    if (rng.chance(0.4)) {
      const lines = text.split("\n");
      lines.pop();
      text = mutateJsonl(lines, rng, lim, nonce, mutations).join("\n") + "\n";
    }
    return { origin: "arbitrary → journal", fileName: "session.jsonl", text };
  }
  // A message the mutators broke (a text block without text, say) cannot go through an exporter,
  // which validates first: such histories are written as canonical blocks instead.
  const exported = (f: () => unknown): string | undefined => {
    try {
      return JSON.stringify(f());
    } catch {
      return undefined;
    }
  };
  const anthropic = as >= 6 && as < 8 ? exported(() => toAnthropicRequest(ms)) : undefined;
  const openai = as >= 8 ? exported(() => toOpenAIRequest(ms)) : undefined;
  if (as < 6 || (anthropic === undefined && openai === undefined))
    return {
      origin: "arbitrary → { messages } (canonical blocks)",
      fileName: "messages.json",
      text: JSON.stringify({ messages: ms }),
    };
  if (anthropic !== undefined)
    return {
      origin: "arbitrary → Anthropic request",
      fileName: "anthropic.json",
      text: anthropic!,
    };
  return {
    origin: "arbitrary → OpenAI request",
    fileName: "openai.json",
    text: openai!,
  };
}

/** Case `index` of the campaign `seed`. */
export function makeCase(seed: number, index: number, profile: Profile): FuzzCase {
  const s = caseSeed(seed, index);
  const rng = mulberry32(s);
  const lim = limits(profile, rng);
  let planted = 0;
  const nonce = () => `${PLANTED_TAG}${s}-${planted++}`;
  const mutations: string[] = [];
  // Without the corpus, the cases it would have started are generated ones too (same draws otherwise).
  const src =
    rng.chance(0.5) || corpusMissing
      ? arbitraryCase(s, rng, lim, nonce, mutations)
      : corpusCase(rng, lim, nonce, mutations);
  let bytes: Buffer = Buffer.from(src.text, "utf8");
  if (rng.chance(0.08)) {
    const r = mutateBytes(bytes, rng);
    bytes = r.bytes;
    mutations.push(r.label);
  }
  return {
    seed,
    index,
    origin: src.origin,
    mutations,
    fileName: src.fileName,
    bytes,
    anchors: rng.chance(0.25)
      ? rng.pick([
          "Never push to main.",
          "Use pnpm, not npm.\nKeep the API stable.",
          `Rule ${controlString(rng)} end`,
        ])
      : "",
    target: rng.chance(0.2) ? rng.pick([1, 50, 500, 5000]) : undefined,
    pruneOnly: rng.chance(0.1),
  };
}
