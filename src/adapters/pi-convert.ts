/**
 * pi's agent messages (`@mariozechner/pi-coding-agent` 0.73, pi-ai 0.73) and
 * compact-safe's messages, both ways, with nothing lost.
 *
 * pi → compact-safe (`fromPiMessages`, one message each, in order):
 * - `user` → `user`; `assistant` → `assistant` (`assistant_interrupted` when
 *   `stopReason` is `aborted`), its `usage` also as canonical usage;
 *   `toolResult` → a `user` message with one `tool_result` (text parts joined
 *   by newlines, images in `content_blocks`); `bashExecution`, `custom`,
 *   `branchSummary`, `compactionSummary` → a `user` message with the text pi
 *   sends the model (pi's own framings, so pi's summaries read as a checkpoint
 *   and a branch summary).
 * - Blocks: `text` → `text`, `thinking` → `thinking` (`thinkingSignature` →
 *   `signature`), a `redacted` thinking → `redacted_thinking` (`data` = the
 *   opaque signature), `toolCall` → `tool_use` (`arguments` → `input`,
 *   `thoughtSignature` → `thought_signature`), `image` → `image_url` (a data
 *   URL). Fields with no canonical name (`textSignature`, …) stay on the block
 *   under pi's name.
 * - Everything else of the message (`timestamp`, `api`, `provider`, `model`,
 *   `usage` as pi wrote it, `stopReason`, `responseId`, `toolName`,
 *   `details`, …) is kept in `meta.pi`; in the rare case where the blocks do
 *   not give pi's content back exactly, pi's content is kept too
 *   (`meta.pi_content`).
 *
 * compact-safe → pi (`toPiMessages`): a message that came from pi is rebuilt
 * from its blocks and `meta.pi`. Any other message becomes what pi sends the
 * model the same way: `assistant` (and `assistant_interrupted`, stop reason
 * `aborted`) → an assistant message; a `user` message → one `toolResult` per
 * `tool_result` block (the tool's name looked up from its call) followed by a
 * `user` message with the rest; `system` → a `custom` message
 * (`customType: "compact-safe-system"`, sent to the model as user text).
 * Whatever pi cannot carry natively travels in the pi message's `compactSafe`
 * field (pi keeps unknown fields in its session file and sends only the
 * fields it knows): the original message whenever pi's fields alone would not
 * give it back, and `{ part, parts }` on the pieces of a split message.
 */
import { isDeepStrictEqual } from "node:util";
import type { Block, Message, Usage } from "../model/types.js";
import { ModelError, parseMessages } from "../model/schema.js";
import { checkPlainData } from "../model/plain.js";
import {
  bashExecutionText,
  PI_BRANCH_SUMMARY_PREFIX,
  PI_BRANCH_SUMMARY_SUFFIX,
  PI_COMPACTION_PREFIX,
  PI_COMPACTION_SUFFIX,
} from "../formats/import/pi.js";
import type { SessionBeforeCompactEvent } from "@mariozechner/pi-coding-agent";

/** pi's agent message (pi-ai's messages and pi-coding-agent's own: `bashExecution`, `custom`, `branchSummary`, `compactionSummary`). */
export type PiAgentMessage = SessionBeforeCompactEvent["preparation"]["messagesToSummarize"][number];

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === "object" && v !== null && !Array.isArray(v);

/** The `customType` of the custom message a `system` message becomes. */
export const PI_SYSTEM_CUSTOM_TYPE = "compact-safe-system";

/** What a pi message carries for compact-safe (its `compactSafe` field). */
interface Carrier {
  /** The message as compact-safe had it (on the first piece). */
  message?: Message;
  /** This piece's index and the number of pieces of a message split for pi. */
  part?: number;
  parts?: number;
}

// ---------------------------------------------------------------- blocks

const DATA_URL = /^data:([^;,]+);base64,([\s\S]*)$/;

function piBlockToOurs(b: unknown): Block {
  if (!isRec(b)) return { type: "pi_block", block: b } as Block;
  const { type, ...rest } = b;
  switch (type) {
    case "text":
      if (typeof rest.text === "string") return { type: "text", ...rest, text: rest.text };
      break;
    case "thinking": {
      const { thinking, thinkingSignature, redacted, ...extra } = rest;
      if (typeof thinking !== "string") break;
      if (redacted === true && typeof thinkingSignature === "string")
        return { type: "redacted_thinking", data: thinkingSignature, thinking, ...extra } as Block;
      if (redacted !== undefined) break;
      return {
        type: "thinking",
        thinking,
        ...(typeof thinkingSignature === "string" ? { signature: thinkingSignature } : {}),
        ...extra,
      } as Block;
    }
    case "toolCall": {
      const { id, name, arguments: args, thoughtSignature, ...extra } = rest;
      if (typeof id !== "string" || typeof name !== "string") break;
      return {
        type: "tool_use",
        id,
        name,
        input: args,
        ...(typeof thoughtSignature === "string" ? { thought_signature: thoughtSignature } : {}),
        ...extra,
      } as Block;
    }
    case "image": {
      const { data, mimeType, ...extra } = rest;
      if (typeof data !== "string" || typeof mimeType !== "string") break;
      return { type: "image_url", image_url: { url: `data:${mimeType};base64,${data}` }, ...extra } as Block;
    }
  }
  // Anything else is kept whole, never dropped.
  return { type: "pi_block", block: b } as Block;
}

function ourBlockToPi(b: Block): unknown {
  const { type, ...rest } = b as Rec;
  switch (type) {
    case "pi_block":
      return rest.block;
    case "text":
      return { type: "text", ...rest };
    case "thinking": {
      const { thinking, signature, ...extra } = rest;
      return {
        type: "thinking",
        thinking,
        ...(signature !== undefined ? { thinkingSignature: signature } : {}),
        ...extra,
      };
    }
    case "redacted_thinking": {
      const { data, thinking, ...extra } = rest;
      return {
        type: "thinking",
        thinking: thinking ?? "",
        thinkingSignature: data,
        redacted: true,
        ...extra,
      };
    }
    case "tool_use": {
      const { id, name, input, thought_signature, ...extra } = rest;
      return {
        type: "toolCall",
        id,
        name,
        arguments: input,
        ...(thought_signature !== undefined ? { thoughtSignature: thought_signature } : {}),
        ...extra,
      };
    }
    case "image_url": {
      const { image_url, ...extra } = rest;
      const m = isRec(image_url) && typeof image_url.url === "string" ? DATA_URL.exec(image_url.url) : null;
      if (m && Object.keys(image_url as Rec).length === 1)
        return { type: "image", data: m[2], mimeType: m[1], ...extra };
      return undefined;
    }
  }
  return undefined;
}

/** pi content (a string, or blocks) as compact-safe blocks. */
function piContent(content: unknown): Block[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? content.map(piBlockToOurs) : [];
}

// ---------------------------------------------------------------- pi → compact-safe

function piUsage(u: unknown): Usage | undefined {
  if (!isRec(u)) return undefined;
  const out: Usage = {};
  if (typeof u.input === "number") out.input_tokens = u.input;
  if (typeof u.output === "number") out.output_tokens = u.output;
  if (typeof u.cacheRead === "number") out.cache_read_input_tokens = u.cacheRead;
  if (typeof u.cacheWrite === "number") out.cache_creation_input_tokens = u.cacheWrite;
  out.scope = "parent";
  return out;
}

function textOf(summary: unknown, prefix: string, suffix: string): Block[] {
  return [{ type: "text", text: prefix + String(summary ?? "") + suffix }];
}

/** One pi message as compact-safe's, by the native mapping only (no fallback). */
function nativeFromPi(m: Rec): Message {
  const { role, content, ...rest } = m;
  const meta: Rec = { pi: { role, ...rest } };
  switch (role) {
    case "assistant": {
      const msg: Message = {
        role: m.stopReason === "aborted" ? "assistant_interrupted" : "assistant",
        content: piContent(content),
        meta,
      };
      const usage = piUsage(m.usage);
      if (usage) msg.usage = usage;
      return msg;
    }
    case "toolResult": {
      const blocks = piContent(content);
      const texts = blocks.filter((b) => b.type === "text" && Object.keys(b).length === 2);
      const others = blocks.filter((b) => !texts.includes(b));
      const r: Rec = {
        type: "tool_result",
        tool_use_id: String(m.toolCallId ?? ""),
        content: texts.map((b) => (b as { text: string }).text).join("\n"),
      };
      if (typeof m.isError === "boolean") r.is_error = m.isError;
      if (others.length > 0) r.content_blocks = others;
      return { role: "user", content: [r as Block], meta };
    }
    case "bashExecution":
      return { role: "user", content: [{ type: "text", text: bashExecutionText(m) }], meta };
    case "branchSummary":
      return {
        role: "user",
        content: textOf(m.summary, PI_BRANCH_SUMMARY_PREFIX, PI_BRANCH_SUMMARY_SUFFIX),
        meta,
      };
    case "compactionSummary":
      return { role: "user", content: textOf(m.summary, PI_COMPACTION_PREFIX, PI_COMPACTION_SUFFIX), meta };
    default:
      // user, custom, and any role pi may add later: its content as user content.
      return { role: "user", content: piContent(content), meta };
  }
}

/** The pi content a compact-safe message's blocks give back (as pi would store it for `role`). */
function piContentFrom(msg: Message, role: unknown, wasString: boolean): unknown {
  if (role === "toolResult") {
    const r = msg.content[0] as Rec | undefined;
    if (!r || r.type !== "tool_result") return [];
    const out: unknown[] = [];
    if (typeof r.content === "string" && r.content !== "") out.push({ type: "text", text: r.content });
    for (const b of (r.content_blocks as Block[] | undefined) ?? []) out.push(ourBlockToPi(b));
    return out;
  }
  if (wasString && msg.content.length === 1 && msg.content[0]!.type === "text")
    return (msg.content[0] as { text: string }).text;
  return msg.content.map(ourBlockToPi);
}

/** A pi message from one that came from pi (`meta.pi`), rebuilt from its blocks. */
function rebuildPi(msg: Message): Rec | undefined {
  const pi = msg.meta?.pi;
  if (!isRec(pi) || typeof pi.role !== "string") return undefined;
  const out: Rec = { ...pi };
  const role = pi.role;
  if (role === "bashExecution" || role === "branchSummary" || role === "compactionSummary") return out;
  const wasString = msg.meta?.pi_content_string === true;
  out.content =
    msg.meta && "pi_content" in msg.meta ? msg.meta.pi_content : piContentFrom(msg, role, wasString);
  if (role === "toolResult") {
    const r = msg.content[0] as Rec | undefined;
    if (r?.type === "tool_result") {
      out.toolCallId = r.tool_use_id;
      if (typeof r.is_error === "boolean") out.isError = r.is_error;
    }
  }
  // pi's field order: role first, then content.
  const { role: _r, content: c, ...others } = out;
  return { role, content: c, ...others };
}

/** Refuses what is not a list of pi messages, naming the first bad one by its path. */
function checkPiMessages(messages: unknown, path: string): void {
  if (!Array.isArray(messages)) throw new ModelError(path, "expected an array of pi messages");
  messages.forEach((m, i) => {
    if (!isRec(m)) throw new ModelError(`${path}[${i}]`, "expected a pi message (an object)");
    if (typeof m.role !== "string") throw new ModelError(`${path}[${i}].role`, "expected a string");
    if (m.content !== undefined && typeof m.content !== "string" && !Array.isArray(m.content))
      throw new ModelError(`${path}[${i}].content`, "expected a string or an array of blocks");
  });
}

/**
 * One pi message as compact-safe's: the native mapping, with pi's content
 * kept where it does not come back. A message `toPiMessages` wrote gives back
 * the compact-safe message it came from, unless `carrier` is false: then it
 * is read as pi reads it (what pi sends the model), one message per piece.
 */
export function fromPiMessage(message: PiAgentMessage, options: { carrier?: boolean } = {}): Message {
  if (!isRec(message)) throw new ModelError("message", "expected a pi message (an object)");
  checkPlainData(message, "message"); // a cycle, a BigInt, a throwing getter…: a ModelError naming the place
  return readPiMessage(message, options);
}

/** `fromPiMessage` on a message already checked (a whole array, or one this module built). */
function readPiMessage(message: PiAgentMessage, options: { carrier?: boolean } = {}): Message {
  const m = message as unknown as Rec;
  const carrier = isRec(m.compactSafe) ? (m.compactSafe as Carrier) : undefined;
  if (carrier?.message && options.carrier !== false) return structuredClone(carrier.message);
  const msg = nativeFromPi(m);
  if (typeof m.content === "string" && msg.meta) msg.meta.pi_content_string = true;
  if (!isDeepStrictEqual(rebuildPi(msg), m)) {
    // The blocks do not give pi's content back exactly (e.g. a tool result's text parts): keep it.
    msg.meta!.pi_content = m.content;
    if (!isDeepStrictEqual(rebuildPi(msg), m)) msg.meta!.pi_message = structuredClone(m);
  }
  return msg;
}

/**
 * pi's agent messages as compact-safe messages. Pieces of one compact-safe
 * message that `toPiMessages` split (a user message with several tool
 * results) are joined back into it; every other pi message gives exactly one.
 */
export function fromPiMessages(messages: readonly PiAgentMessage[]): Message[] {
  checkPlainData(messages, "messages"); // a hole, a cycle, a BigInt, a throwing getter…: a ModelError naming the place
  checkPiMessages(messages, "messages");
  const out: Message[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as unknown as Rec;
    const c = isRec(m.compactSafe) ? (m.compactSafe as Carrier) : undefined;
    if (c?.part === 0 && typeof c.parts === "number" && c.message) {
      let n = 1;
      while (
        n < c.parts &&
        i + n < messages.length &&
        (messages[i + n] as unknown as { compactSafe?: Carrier }).compactSafe?.part === n
      )
        n++;
      if (n === c.parts) {
        out.push(structuredClone(c.message));
        i += n - 1;
        continue;
      }
    }
    out.push(readPiMessage(messages[i]!));
  }
  return out;
}

// ---------------------------------------------------------------- compact-safe → pi

const ZERO_COST = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };

function ourUsageToPi(u: Usage | undefined): Rec {
  const input = u?.input_tokens ?? 0;
  const output = u?.output_tokens ?? 0;
  const cacheRead = u?.cache_read_input_tokens ?? 0;
  const cacheWrite = u?.cache_creation_input_tokens ?? 0;
  return {
    input,
    output,
    cacheRead,
    cacheWrite,
    totalTokens: input + output + cacheRead + cacheWrite,
    cost: { ...ZERO_COST },
  };
}

function timestampOf(msg: Message): number {
  const t = msg.meta?.timestamp;
  if (typeof t === "number") return t;
  if (typeof t === "string" && !Number.isNaN(Date.parse(t))) return Date.parse(t);
  return 0;
}

/** Blocks pi can carry in `kind` content; the others are left to the carrier. */
function piBlocks(blocks: readonly Block[], allowed: readonly string[]): unknown[] {
  const out: unknown[] = [];
  for (const b of blocks) {
    const p = ourBlockToPi(b) as Rec | undefined;
    if (p && typeof p.type === "string" && allowed.includes(p.type)) out.push(p);
  }
  return out;
}

/** A compact-safe message that did not come from pi, as the pi messages that send the model the same. */
function nativeToPi(msg: Message, toolNames: ReadonlyMap<string, string>): Rec[] {
  const timestamp = timestampOf(msg);
  if (msg.role === "assistant" || msg.role === "assistant_interrupted") {
    const meta = msg.meta ?? {};
    const hasCalls = msg.content.some((b) => b.type === "tool_use");
    return [
      {
        role: "assistant",
        content: piBlocks(msg.content, ["text", "thinking", "toolCall"]),
        api: typeof meta.api === "string" ? meta.api : "compact-safe",
        provider: typeof meta.provider === "string" ? meta.provider : "compact-safe",
        model: typeof meta.model === "string" ? meta.model : "unknown",
        usage: ourUsageToPi(msg.usage),
        stopReason: msg.role === "assistant_interrupted" ? "aborted" : hasCalls ? "toolUse" : "stop",
        timestamp,
      },
    ];
  }
  if (msg.role === "system") {
    return [
      {
        role: "custom",
        customType: PI_SYSTEM_CUSTOM_TYPE,
        content: piBlocks(msg.content, ["text", "image"]),
        display: false,
        timestamp,
      },
    ];
  }
  const out: Rec[] = [];
  const rest: Block[] = [];
  for (const b of msg.content) {
    if (b.type !== "tool_result") {
      rest.push(b);
      continue;
    }
    const r = b as Rec;
    const id = String(r.tool_use_id ?? "");
    const content: unknown[] = [];
    if (typeof r.content === "string" && r.content !== "") content.push({ type: "text", text: r.content });
    if (Array.isArray(r.content_blocks)) content.push(...piBlocks(r.content_blocks as Block[], ["image"]));
    out.push({
      role: "toolResult",
      toolCallId: id,
      toolName: toolNames.get(id) ?? "",
      content,
      isError: r.is_error === true,
      timestamp,
    });
  }
  if (rest.length > 0 || out.length === 0)
    out.push({ role: "user", content: piBlocks(rest, ["text", "image"]), timestamp });
  return out;
}

/**
 * compact-safe messages as pi agent messages (see the module comment): what
 * pi sends the model from them is what compact-safe's exporters would send,
 * and `fromPiMessages` gives the compact-safe messages back exactly.
 */
export function toPiMessages(messages: readonly Message[]): PiAgentMessage[] {
  checkPlainData(messages, "messages");
  parseMessages(messages, "messages");
  const toolNames = new Map<string, string>();
  const out: Rec[] = [];
  for (const msg of messages) {
    for (const b of msg.content)
      if (b.type === "tool_use") toolNames.set(String((b as Rec).id), String((b as Rec).name));
    const raw = msg.meta?.pi_message;
    if (isRec(raw) && isDeepStrictEqual(readPiMessage(raw as unknown as PiAgentMessage), msg)) {
      out.push(structuredClone(raw));
      continue;
    }
    const rebuilt = rebuildPi(msg);
    if (rebuilt) {
      if (isDeepStrictEqual(readPiMessage(rebuilt as unknown as PiAgentMessage), msg)) {
        out.push(rebuilt);
        continue;
      }
      // Changed on compact-safe's side (e.g. billed usage cleared by a rewrite): pi's fields, what changed,
      // and the message itself in the carrier.
      if (rebuilt.role === "assistant" && msg.usage === undefined) rebuilt.usage = ourUsageToPi(undefined);
      rebuilt.compactSafe = { message: structuredClone(msg) } satisfies Carrier;
      out.push(rebuilt);
      continue;
    }
    const pieces = nativeToPi(msg, toolNames);
    const back = fromPiMessages(pieces as unknown as PiAgentMessage[]);
    const exact = back.length === 1 && isDeepStrictEqual(back[0], msg);
    pieces.forEach((p, i) => {
      if (pieces.length > 1) p.compactSafe = { part: i, parts: pieces.length } satisfies Carrier;
      if (i === 0 && !exact)
        p.compactSafe = { ...(p.compactSafe as Carrier | undefined), message: structuredClone(msg) };
    });
    out.push(...pieces);
  }
  return out as unknown as PiAgentMessage[];
}
