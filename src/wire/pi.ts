/**
 * pi's agent messages (`@mariozechner/pi-coding-agent` 0.73 and 1.x, pi-ai)
 * and the project's messages, both ways: the one reader of a pi message (the
 * `pi` and `pi-messages` importers and the pi adapter read through it) and
 * the writers (the pi adapter's, and the fork's session file).
 *
 * Reading (`readPiMessage`, one message each):
 * - `user` → `user`; `assistant` → `assistant` (`assistant_interrupted` when
 *   `stopReason` is `aborted`), its `usage` as canonical usage (the fields
 *   pi recorded); `toolResult` → a `user` message with one `tool_result`
 *   (plain text parts joined by newlines, every other part in
 *   `content_blocks`); `bashExecution`, `branchSummary`, `compactionSummary`
 *   → a `user` message with the text pi sends the model (pi's own framings,
 *   so pi's summaries read as a checkpoint and a branch summary); `custom` →
 *   a `user` message of its content; `system` (pi 1.x's prompt and tool
 *   declarations) → `system`; a role pi may add later → a `user` message of
 *   its content.
 * - Blocks: `text` → `text`; `thinking` → `thinking` (`thinkingSignature` →
 *   `signature`; an empty signature is no signature, as pi-ai sends it: the
 *   provider would refuse an empty one), a `redacted` thinking →
 *   `redacted_thinking` (`data` = the opaque signature); `toolCall` →
 *   `tool_use` (`arguments` → `input`, absent arguments `{}` as pi-ai sends
 *   them; `thoughtSignature` → `thought_signature`); `image` → `image_url` (a
 *   data URL). Fields with no canonical name (`textSignature`, …) stay on the
 *   block under pi's name; a block that is not one of these, or lacks what
 *   pi requires of it, is kept whole as `{ type: "pi_block", block }`.
 * - What pi does not send the model is said (`outside`): a `bashExecution`
 *   with `excludeFromContext` (a `!!` command), a `system` message (sent as
 *   the system prompt, not as conversation), a role the reader does not know.
 *   The session importer leaves those out of the history; the adapter, which
 *   must give pi back every message it was handed, keeps them.
 *
 * Writing: `toPiBlock` is the one block writer (undefined for a block pi has
 * no content for). Two message writers use it, for two destinations: the
 * adapter's (`rebuildPi`, `nativeToPi`: back to the pi process that handed the
 * messages over, exact through `meta.pi`) and the fork's (`toPiSessionMessages`:
 * a new session file pi loads, with zero usage and no importer-closed calls).
 */
import { isDeepStrictEqual } from "node:util";
import type { Block, Message, Usage } from "../model/types.js";
import { ModelError, parseMessages } from "../model/schema.js";
import { checkPlainData } from "../model/plain.js";
import { DATA_URL, isRecord } from "./common.js";

type Rec = Record<string, unknown>;

/** pi's framing of a compaction summary (coding-agent `messages.ts`). */
export const PI_COMPACTION_PREFIX =
  "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
export const PI_COMPACTION_SUFFIX = "\n</summary>";
export const PI_BRANCH_SUMMARY_PREFIX =
  "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
export const PI_BRANCH_SUMMARY_SUFFIX = "</summary>";

/** The `customType` of the custom message a `system` message becomes. */
export const PI_SYSTEM_CUSTOM_TYPE = "compact-safe-system";

/** The roles of the messages whose content a pi 1.x `context_edit` may replace. */
export const PI_EDITABLE_ROLES: ReadonlySet<string> = new Set(["user", "assistant", "toolResult", "custom"]);

/** The roles whose messages carry calls or results (a `context_edit` of one may unpair the other). */
export const PI_CALL_ROLES: ReadonlySet<string> = new Set(["assistant", "toolResult"]);

/** Roles only pi's agent messages have. */
const PI_ROLES = new Set(["toolResult", "bashExecution", "custom", "branchSummary", "compactionSummary"]);
/** Content part types only pi writes. */
const PI_PARTS = new Set(["toolCall"]);

/** The text that marks a pi tool result in a session file's bytes (for the tail reader's scan). */
export const PI_RESULT_MARKER = '"toolResult"';

/** The messages of a document: an array, or `{ messages }`. */
export function piMessagesOf(doc: unknown): unknown[] | undefined {
  if (Array.isArray(doc)) return doc;
  if (isRecord(doc) && Array.isArray(doc.messages)) return doc.messages;
  return undefined;
}

/** True for a list of pi agent messages: every item has a role, one of them a pi-only role or part. */
export function looksLikePiMessages(doc: unknown): boolean {
  const list = piMessagesOf(doc);
  if (!list || list.length === 0) return false;
  if (!list.every((m) => isRecord(m) && typeof m.role === "string")) return false;
  return list.some(
    (m) =>
      isRecord(m) &&
      (PI_ROLES.has(String(m.role)) ||
        (Array.isArray(m.content) &&
          m.content.some((p) => isRecord(p) && typeof p.type === "string" && PI_PARTS.has(p.type)))),
  );
}

/** pi's text for a user-run shell command (what its `convertToLlm` sends). */
export function bashExecutionText(m: Record<string, unknown>): string {
  let text = `Ran \`${String(m.command ?? "")}\`\n`;
  const output = typeof m.output === "string" ? m.output : "";
  text += output ? `\`\`\`\n${output}\n\`\`\`` : "(no output)";
  if (m.cancelled === true) text += "\n\n(command cancelled)";
  else if (typeof m.exitCode === "number" && m.exitCode !== 0)
    text += `\n\nCommand exited with code ${m.exitCode}`;
  if (m.truncated === true && typeof m.fullOutputPath === "string")
    text += `\n\n[Output truncated. Full output: ${m.fullOutputPath}]`;
  return text;
}

// ---------------------------------------------------------------- blocks

/** The text pi-ai records for Anthropic's redacted thinking. */
const REDACTED_PLACEHOLDER = "[Reasoning redacted]";

function thinkingFromPi(rest: Rec): Block | undefined {
  const { thinking, thinkingSignature, redacted, ...extra } = rest;
  if (typeof thinking !== "string") return undefined;
  if (redacted === true && typeof thinkingSignature === "string")
    // pi-ai's placeholder text is implied (the writer puts it back); another text is kept.
    return {
      type: "redacted_thinking",
      data: thinkingSignature,
      ...(thinking === REDACTED_PLACEHOLDER ? {} : { thinking }),
      ...extra,
    } as Block;
  if (redacted !== undefined) return undefined;
  return {
    type: "thinking",
    thinking,
    ...(typeof thinkingSignature === "string" && thinkingSignature !== ""
      ? { signature: thinkingSignature }
      : {}),
    ...extra,
  } as Block;
}

/** One pi content block as the project's (see the module comment). */
export function fromPiBlock(b: unknown): Block {
  if (!isRecord(b)) return { type: "pi_block", block: b } as Block;
  const { type, ...rest } = b;
  switch (type) {
    case "text":
      if (typeof rest.text === "string") return { type: "text", ...rest, text: rest.text };
      break;
    case "thinking": {
      const t = thinkingFromPi(rest);
      if (t) return t;
      break;
    }
    case "toolCall": {
      const { id, name, arguments: args, thoughtSignature, ...extra } = rest;
      if (typeof id !== "string" || typeof name !== "string") break;
      return {
        type: "tool_use",
        id,
        name,
        input: args ?? {},
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

/** One block as pi content, or undefined when pi has no content for it. */
export function toPiBlock(b: Block): unknown {
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
      // As pi-ai records Anthropic's redacted thinking: the payload in the signature, a placeholder text.
      const { data, thinking, ...extra } = rest;
      return {
        type: "thinking",
        thinking: thinking ?? REDACTED_PLACEHOLDER,
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
      const m =
        isRecord(image_url) && typeof image_url.url === "string" ? DATA_URL.exec(image_url.url) : null;
      if (m && Object.keys(image_url as Rec).length === 1)
        return { type: "image", data: m[2], mimeType: m[1], ...extra };
      return undefined;
    }
  }
  return undefined;
}

/** pi content (a string, or blocks) as the project's blocks. */
export function piContent(content: unknown): Block[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? content.map(fromPiBlock) : [];
}

// ---------------------------------------------------------------- reading a message

function piUsage(u: unknown): Usage | undefined {
  if (!isRecord(u)) return undefined;
  const out: Usage = {};
  if (typeof u.input === "number") out.input_tokens = u.input;
  if (typeof u.output === "number") out.output_tokens = u.output;
  if (typeof u.cacheRead === "number") out.cache_read_input_tokens = u.cacheRead;
  if (typeof u.cacheWrite === "number") out.cache_creation_input_tokens = u.cacheWrite;
  out.scope = "parent";
  return out;
}

const framed = (summary: unknown, prefix: string, suffix: string): Block[] => [
  { type: "text", text: prefix + String(summary ?? "") + suffix },
];

/** What pi does not send the model as conversation (see the module comment). */
export interface PiOutside {
  reason: string;
  /** True when pi leaves it out on purpose (false: a role the reader does not know). */
  byDesign: boolean;
}

/** One pi message read: the project's message (no `meta`: the caller adds its own), and whether pi leaves it out. */
export interface PiReading {
  message: Message;
  outside?: PiOutside;
}

function toolResultFromPi(m: Rec): Message {
  const blocks = piContent(m.content);
  const texts = blocks.filter((b) => b.type === "text" && Object.keys(b).length === 2);
  const others = blocks.filter((b) => !texts.includes(b));
  const r: Rec = {
    type: "tool_result",
    tool_use_id: String(m.toolCallId ?? ""),
    content: texts.map((b) => (b as { text: string }).text).join("\n"),
  };
  if (typeof m.isError === "boolean") r.is_error = m.isError;
  if (others.length > 0) r.content_blocks = others;
  return { role: "user", content: [r as Block] };
}

const KNOWN_ROLES = new Set([
  "user",
  "custom",
  "assistant",
  "toolResult",
  "bashExecution",
  "branchSummary",
  "compactionSummary",
  "system",
]);

/** Whether pi leaves a message out of the conversation it sends the model, and why (see the module comment). */
export function piOutside(m: Rec): PiOutside | undefined {
  if (m.role === "bashExecution" && m.excludeFromContext === true)
    return { reason: "bashExecution excluded from the model's context (!! command)", byDesign: true };
  // pi 1.x persists its system prompt and tool declarations as system messages (sent as the system
  // prompt, not as conversation): like the other agents' prompts, outside the history compacted.
  if (m.role === "system")
    return { reason: "system message (pi 1.x's prompt and tool declarations)", byDesign: true };
  if (!KNOWN_ROLES.has(m.role as string))
    return { reason: `message with unknown role ${JSON.stringify(m.role)}`, byDesign: false };
  return undefined;
}

function messageFromPi(m: Rec): Message {
  switch (m.role) {
    case "assistant": {
      const message: Message = {
        role: m.stopReason === "aborted" ? "assistant_interrupted" : "assistant",
        content: piContent(m.content),
      };
      const usage = piUsage(m.usage);
      if (usage) message.usage = usage;
      return message;
    }
    case "toolResult":
      return toolResultFromPi(m);
    case "bashExecution":
      return { role: "user", content: [{ type: "text", text: bashExecutionText(m) }] };
    case "branchSummary":
      return { role: "user", content: framed(m.summary, PI_BRANCH_SUMMARY_PREFIX, PI_BRANCH_SUMMARY_SUFFIX) };
    case "compactionSummary":
      return { role: "user", content: framed(m.summary, PI_COMPACTION_PREFIX, PI_COMPACTION_SUFFIX) };
    case "system":
      return { role: "system", content: piContent(m.content) };
    default:
      // user, custom, and any role pi may add later: its content as user content.
      return { role: "user", content: piContent(m.content) };
  }
}

/** One pi message as the project's (see the module comment). */
export function readPiMessage(m: Rec): PiReading {
  const message = messageFromPi(m);
  const outside = piOutside(m);
  return outside ? { message, outside } : { message };
}

const ASSISTANT_PROVENANCE: Record<string, string> = {
  model: "model",
  provider: "provider",
  api: "api",
  stopReason: "stop_reason",
  errorMessage: "error_message",
  responseId: "responseId",
};

/**
 * What a session importer keeps of a pi message besides its content, in
 * `meta`: an assistant's model, provider, api, stop reason, error and
 * response id; a tool result's tool name; a shell command and its exit code;
 * a custom message's type.
 */
export function piProvenance(m: Rec): Rec {
  const out: Rec = {};
  switch (m.role) {
    case "assistant":
      for (const [k, name] of Object.entries(ASSISTANT_PROVENANCE)) if (m[k] !== undefined) out[name] = m[k];
      break;
    case "toolResult":
      if (typeof m.toolName === "string") out.tool_name = m.toolName;
      break;
    case "bashExecution":
      out.bash_execution = { command: m.command, exit_code: m.exitCode };
      break;
    case "custom":
      out.custom_type = m.customType;
      break;
  }
  return out;
}

// ---------------------------------------------------------------- a session's entries as pi's context

/**
 * The agent message a pi session entry puts in pi's context (as pi 0.73.1's
 * `buildSessionContext` makes it), or undefined for an entry that puts none;
 * `timestamp` is the entry's, in milliseconds.
 */
export function piEntryMessage(e: Rec, timestamp: number): Rec | undefined {
  if (e.type === "message") return isRecord(e.message) ? e.message : undefined;
  if (e.type === "custom_message")
    return {
      role: "custom",
      customType: e.customType,
      content: e.content,
      display: e.display,
      details: e.details,
      timestamp,
    };
  if (e.type === "branch_summary" && e.summary)
    return { role: "branchSummary", summary: e.summary, fromId: e.fromId, timestamp };
  return undefined;
}

/** The message pi's context opens with after a `compaction` entry (its summary). */
export function piCompactionSummaryMessage(c: Rec, timestamp: number): Rec {
  return { role: "compactionSummary", summary: c.summary, tokensBefore: c.tokensBefore, timestamp };
}

/** True for the message a compaction's summary opens pi's context with. */
export const isPiCompactionSummary = (m: Rec): boolean => m.role === "compactionSummary";

/** True when pi sends the message to the model as conversation (not a `!!` command, not pi 1.x's system prompt). */
export const piSendsAsConversation = (m: Rec): boolean => piOutside(m)?.byDesign !== true;

// ---------------------------------------------------------------- the adapter: pi messages and back, exactly

/** What a pi message carries for compact-safe (its `compactSafe` field). */
interface Carrier {
  /** The message as compact-safe had it (on the first piece). */
  message?: Message;
  /** This piece's index and the number of pieces of a message split for pi. */
  part?: number;
  parts?: number;
}

/** One pi message as the adapter reads it: `readPiMessage`, with everything else of pi's in `meta.pi`. */
function nativeFromPi(m: Rec): Message {
  const { role, content: _content, ...rest } = m;
  const msg = messageFromPi(m);
  msg.meta = { pi: { role, ...rest } };
  return msg;
}

/** The pi content a compact-safe message's blocks give back (as pi would store it for `role`). */
function piContentFrom(msg: Message, role: unknown, wasString: boolean): unknown {
  if (role === "toolResult") {
    const r = msg.content[0] as Rec | undefined;
    if (!r || r.type !== "tool_result") return [];
    const out: unknown[] = [];
    if (typeof r.content === "string" && r.content !== "") out.push({ type: "text", text: r.content });
    for (const b of (r.content_blocks as Block[] | undefined) ?? []) out.push(toPiBlock(b));
    return out;
  }
  if (wasString && msg.content.length === 1 && msg.content[0]!.type === "text")
    return (msg.content[0] as { text: string }).text;
  return msg.content.map(toPiBlock);
}

/** A pi message from one that came from pi (`meta.pi`), rebuilt from its blocks. */
function rebuildPi(msg: Message): Rec | undefined {
  const pi = msg.meta?.pi;
  if (!isRecord(pi) || typeof pi.role !== "string") return undefined;
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
    if (!isRecord(m)) throw new ModelError(`${path}[${i}]`, "expected a pi message (an object)");
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
export function fromPiMessage(message: Rec, options: { carrier?: boolean } = {}): Message {
  if (!isRecord(message)) throw new ModelError("message", "expected a pi message (an object)");
  checkPlainData(message, "message"); // a cycle, a BigInt, a throwing getter…: a ModelError naming the place
  return readChecked(message, options);
}

/** `fromPiMessage` on a message already checked (a whole array, or one this module built). */
function readChecked(m: Rec, options: { carrier?: boolean } = {}): Message {
  const carrier = isRecord(m.compactSafe) ? (m.compactSafe as Carrier) : undefined;
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
export function fromPiMessages(messages: readonly Rec[]): Message[] {
  checkPlainData(messages, "messages"); // a hole, a cycle, a BigInt, a throwing getter…: a ModelError naming the place
  checkPiMessages(messages, "messages");
  const out: Message[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const c = isRecord(m.compactSafe) ? (m.compactSafe as Carrier) : undefined;
    if (c?.part === 0 && typeof c.parts === "number" && c.message) {
      let n = 1;
      while (
        n < c.parts &&
        i + n < messages.length &&
        (messages[i + n] as { compactSafe?: Carrier }).compactSafe?.part === n
      )
        n++;
      if (n === c.parts) {
        out.push(structuredClone(c.message));
        i += n - 1;
        continue;
      }
    }
    out.push(readChecked(m));
  }
  return out;
}

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
    const p = toPiBlock(b) as Rec | undefined;
    if (p && typeof p.type === "string" && allowed.includes(p.type)) out.push(p);
  }
  return out;
}

function resultsToPi(msg: Message, toolNames: ReadonlyMap<string, string>, timestamp: number): Rec[] {
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
  return resultsToPi(msg, toolNames, timestamp);
}

/**
 * compact-safe messages as pi agent messages (see the module comment): what
 * pi sends the model from them is what compact-safe's exporters would send,
 * and `fromPiMessages` gives the compact-safe messages back exactly.
 */
export function toPiMessages(messages: readonly Message[]): Rec[] {
  checkPlainData(messages, "messages");
  parseMessages(messages, "messages");
  const toolNames = new Map<string, string>();
  const out: Rec[] = [];
  for (const msg of messages) {
    for (const b of msg.content)
      if (b.type === "tool_use") toolNames.set(String((b as Rec).id), String((b as Rec).name));
    const raw = msg.meta?.pi_message;
    if (isRecord(raw) && isDeepStrictEqual(readChecked(raw), msg)) {
      out.push(structuredClone(raw));
      continue;
    }
    const rebuilt = rebuildPi(msg);
    if (rebuilt) {
      if (isDeepStrictEqual(readChecked(rebuilt), msg)) {
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
    const back = fromPiMessages(pieces);
    const exact = back.length === 1 && isDeepStrictEqual(back[0], msg);
    pieces.forEach((p, i) => {
      if (pieces.length > 1) p.compactSafe = { part: i, parts: pieces.length } satisfies Carrier;
      if (i === 0 && !exact)
        p.compactSafe = { ...(p.compactSafe as Carrier | undefined), message: structuredClone(msg) };
    });
    out.push(...pieces);
  }
  return out;
}

// ---------------------------------------------------------------- the fork: a session file pi loads

/** A block as pi content in a session file: as `toPiBlock` writes it, else as given. */
const sessionPart = (b: Block): unknown => toPiBlock(b) ?? { ...b };

const ZERO_USAGE = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

function sessionAssistant(m: Message, timestamp: number): Rec {
  const meta = (m.meta ?? {}) as Record<string, unknown>;
  const hasCalls = m.content.some((b) => b.type === "tool_use");
  const stopReason =
    m.role === "assistant_interrupted"
      ? "aborted"
      : typeof meta.stop_reason === "string"
        ? meta.stop_reason
        : hasCalls
          ? "toolUse"
          : "stop";
  return {
    role: "assistant",
    content: m.content.map(sessionPart),
    api: typeof meta.api === "string" ? meta.api : "unknown",
    provider: typeof meta.provider === "string" ? meta.provider : "unknown",
    model: typeof meta.model === "string" ? meta.model : "unknown",
    ...(typeof meta.responseId === "string" ? { responseId: meta.responseId } : {}),
    // The replacement carries no billed usage (a rewrite clears it): pi gets zeros.
    usage: ZERO_USAGE,
    stopReason,
    ...(typeof meta.error_message === "string" ? { errorMessage: meta.error_message } : {}),
    timestamp,
  };
}

/**
 * The pi messages (`AgentMessage`s) of a session file for one message. A
 * user message splits at its tool results: each `tool_result` becomes a
 * `toolResult` message, the blocks between them a `user` message, in order.
 * Synthetic results (an importer's closing of an abandoned call) are left
 * out: pi closes such calls itself when it sends them.
 */
export function toPiSessionMessages(
  m: Message,
  timestamp: number,
  toolNames: ReadonlyMap<string, string>,
): unknown[] {
  if (m.role === "assistant" || m.role === "assistant_interrupted") return [sessionAssistant(m, timestamp)];
  const meta = (m.meta ?? {}) as Record<string, unknown>;
  const out: unknown[] = [];
  let pending: unknown[] = [];
  const flush = () => {
    if (pending.length > 0) out.push({ role: "user", content: pending, timestamp });
    pending = [];
  };
  for (const b of m.content) {
    if (b.type !== "tool_result") {
      pending.push(sessionPart(b));
      continue;
    }
    const r = b as {
      tool_use_id: string;
      content: string;
      is_error?: boolean;
      content_blocks?: Block[];
      synthetic?: boolean;
    };
    if (r.synthetic === true) continue;
    flush();
    const content: unknown[] = [];
    if (r.content !== "") content.push({ type: "text", text: r.content });
    for (const c of r.content_blocks ?? []) content.push(sessionPart(c));
    out.push({
      role: "toolResult",
      toolCallId: r.tool_use_id,
      toolName:
        typeof meta.tool_name === "string" ? meta.tool_name : (toolNames.get(r.tool_use_id) ?? "unknown"),
      content,
      isError: r.is_error === true,
      timestamp,
    });
  }
  flush();
  return out;
}
