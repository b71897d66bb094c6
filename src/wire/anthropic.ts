/**
 * Anthropic Messages (`POST /v1/messages`) and the project's messages, both
 * ways: content blocks to canonical blocks and back (images as `data:` URLs,
 * tool-result content, server-side compaction kept whole), a request's
 * messages, the block types the API takes, the split of a user message at a
 * checkpoint an exporter merged into it, and a response's compaction block.
 * The importers (Claude Code, Cline, `anthropic`), the exporter, the
 * write-backs, the guard's Messages reader and the native summarizer read and
 * write through it.
 */
import type { Block, ImageUrlBlock, Message, ToolResultBlock } from "../model/index.js";
import { DATA_URL, isRecord } from "./common.js";
import {
  ALL_BRANCH_SUMMARY_MARKERS,
  ALL_CHECKPOINT_MARKERS,
  GUARD_TEXT_PREFIX,
} from "../contract/markers.js";
import {
  fromAnthropicCompaction,
  isProviderCompaction,
  nativeOf,
  refuseForeignCompaction,
} from "../model/index.js";

/** An Anthropic image source as a canonical `image_url` block (base64 becomes a `data:` URL). */
export function imageFromAnthropic(block: Record<string, unknown>): Block {
  const source = block.source;
  if (isRecord(source)) {
    if (
      source.type === "base64" &&
      typeof source.data === "string" &&
      typeof source.media_type === "string"
    ) {
      return { type: "image_url", image_url: { url: `data:${source.media_type};base64,${source.data}` } };
    }
    if (source.type === "url" && typeof source.url === "string") {
      return { type: "image_url", image_url: { url: source.url } };
    }
  }
  return { ...block } as Block;
}

/** A canonical `image_url` block as an Anthropic `image` block. */
export function imageToAnthropic(block: ImageUrlBlock): Record<string, unknown> {
  const url = block.image_url.url;
  const m = DATA_URL.exec(url);
  if (m) return { type: "image", source: { type: "base64", media_type: m[1], data: m[2] } };
  return { type: "image", source: { type: "url", url } };
}

/** Tool-result content (string or block array): text parts joined into `content`, other parts kept as blocks. */
export function toolResultContent(content: unknown): { content: string; content_blocks?: Block[] } {
  if (typeof content === "string") return { content };
  if (content === undefined || content === null) return { content: "" };
  if (!Array.isArray(content)) return { content: JSON.stringify(content) };
  const texts: string[] = [];
  const others: Block[] = [];
  for (const part of content) {
    if (isRecord(part) && part.type === "text" && typeof part.text === "string") texts.push(part.text);
    else if (isRecord(part) && part.type === "image") others.push(imageFromAnthropic(part));
    else if (isRecord(part) && typeof part.type === "string") others.push({ ...part } as Block);
    else texts.push(JSON.stringify(part));
  }
  return others.length > 0
    ? { content: texts.join("\n"), content_blocks: others }
    : { content: texts.join("\n") };
}

/** Anthropic message content (a string or content blocks) as canonical blocks. */
export function fromAnthropicContent(content: unknown): Block[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) return [];
  const out: Block[] = [];
  for (const raw of content) {
    if (!isRecord(raw) || typeof raw.type !== "string") {
      out.push({ type: "text", text: typeof raw === "string" ? raw : JSON.stringify(raw) });
      continue;
    }
    switch (raw.type) {
      case "image":
        out.push(imageFromAnthropic(raw));
        break;
      case "compaction": // server-side compaction: kept whole, written back as it is
        out.push(fromAnthropicCompaction({ ...raw }));
        break;
      case "tool_result": {
        const b: ToolResultBlock = {
          type: "tool_result",
          tool_use_id: String(raw.tool_use_id ?? ""),
          ...toolResultContent(raw.content),
        };
        if (typeof raw.is_error === "boolean") b.is_error = raw.is_error;
        out.push(b);
        break;
      }
      default:
        out.push({ ...raw } as Block);
    }
  }
  return out;
}

/** A canonical block as an Anthropic API block (only the fields the API takes). */
export function blockToAnthropic(b: Block): Record<string, unknown> {
  switch (b.type) {
    case "text": {
      const t = b as { text: string; cache_control?: unknown };
      return t.cache_control !== undefined
        ? { type: "text", text: t.text, cache_control: t.cache_control }
        : { type: "text", text: t.text };
    }
    case "thinking": {
      const t = b as { thinking: string; signature?: string };
      return { type: "thinking", thinking: t.thinking, signature: t.signature };
    }
    case "redacted_thinking":
      return { type: "redacted_thinking", data: (b as { data: string }).data };
    case "tool_use": {
      const t = b as { id: string; name: string; input: unknown };
      return { type: "tool_use", id: t.id, name: t.name, input: t.input };
    }
    case "tool_result": {
      const t = b as ToolResultBlock;
      let content: unknown = t.content;
      if (t.content_blocks && t.content_blocks.length > 0) {
        const parts: unknown[] = [];
        if (t.content.length > 0) parts.push({ type: "text", text: t.content });
        for (const nb of t.content_blocks) parts.push(blockToAnthropic(nb));
        content = parts;
      }
      const out: Record<string, unknown> = { type: "tool_result", tool_use_id: t.tool_use_id, content };
      if (t.is_error !== undefined) out.is_error = t.is_error;
      return out;
    }
    case "image_url":
      return imageToAnthropic(b as ImageUrlBlock);
    default:
      // A provider compaction goes back as the provider wrote it (the exporters refuse another provider's first).
      if (!isProviderCompaction(b)) return { ...b };
      if (b.provider !== "anthropic")
        refuseForeignCompaction([{ role: "assistant", content: [b] }], "anthropic");
      return nativeOf(b);
  }
}

/** A Messages API request's `messages`. */
export type AnthropicMessage = { role: "user" | "assistant"; content: Record<string, unknown>[] };

/**
 * Messages as Messages API messages, as they are (the exporter repairs them
 * first, see prepare.ts, and sends system messages as the `system` blocks):
 * every role but `user` is the assistant's.
 */
export function toAnthropicMessages(messages: readonly Message[]): AnthropicMessage[] {
  return messages.map((m) => ({
    role: m.role === "user" ? "user" : "assistant",
    content: m.content.map(blockToAnthropic),
  }));
}

/** Block types the Anthropic Messages API takes besides the canonical ones (server tools, documents). */
export function isAnthropicBlockType(type: string): boolean {
  return (
    [
      "text",
      "image",
      "document",
      "search_result",
      "thinking",
      "redacted_thinking",
      "tool_use",
      "tool_result",
      "server_tool_use",
      "mcp_tool_use",
      "mcp_tool_result",
      "container_upload",
    ].includes(type) || /^[a-z_]+_tool_result$/.test(type)
  );
}

const ANTHROPIC_BLOCKS = new Set([
  "tool_use",
  "tool_result",
  "thinking",
  "redacted_thinking",
  "image",
  "document",
  "compaction",
]);

/** True when some message of the list has a content block only the Messages API writes. */
export function looksAnthropic(messages: unknown[]): boolean {
  return messages.some(
    (m) =>
      isRecord(m) &&
      Array.isArray(m.content) &&
      m.content.some((b) => isRecord(b) && typeof b.type === "string" && ANTHROPIC_BLOCKS.has(b.type)),
  );
}

/**
 * The Anthropic API wants roles to alternate, so an exporter merges
 * consecutive user messages, and a checkpoint or branch summary kept after
 * other user text is no longer a message whose FIRST text block opens with its
 * marker. On import, each text block of a user message that opens with a
 * checkpoint or branch-summary marker is split out into a message of its own
 * (the blocks before and after it stay in their own user messages, in order),
 * so that the contract recognises it again; the guard's restatement right
 * after it (text opening with `GUARD_TEXT_PREFIX`) stays on it, as further
 * content of the checkpoint. Nothing else changes.
 */
export function splitAtMarkers(m: Message): Message[] {
  if (m.role !== "user" || m.content.length < 2 || !m.content.some(opensWithMarker)) return [m];
  const out: Message[] = [];
  let current: Block[] = [];
  const flush = (): void => {
    if (current.length > 0) out.push({ ...m, content: current });
    current = [];
  };
  // compact-safe's restatement right after a checkpoint's block is part of that checkpoint (the guard's repair).
  let checkpoint: Block[] | undefined;
  for (const b of m.content) {
    if (opensWithMarker(b)) {
      flush();
      checkpoint = [b];
      out.push({ ...m, content: checkpoint });
    } else if (checkpoint !== undefined && current.length === 0 && isGuardText(b)) checkpoint.push(b);
    else {
      checkpoint = undefined;
      current.push(b);
    }
  }
  flush();
  return out;
}

const MARKERS: readonly string[] = [...ALL_CHECKPOINT_MARKERS, ...ALL_BRANCH_SUMMARY_MARKERS];

const isGuardText = (b: Block): boolean =>
  b.type === "text" && String((b as { text?: unknown }).text).startsWith(GUARD_TEXT_PREFIX);

function opensWithMarker(b: Block): boolean {
  return (
    b.type === "text" &&
    typeof (b as { text?: unknown }).text === "string" &&
    MARKERS.some((mk) => (b as { text: string }).text.trimStart().startsWith(mk))
  );
}

/**
 * The `compaction` content block of a response, as the Messages API documents
 * it (what the native summarizer reads; a history's compaction block is the
 * model's `provider_compaction`).
 */
export interface AnthropicCompactionBlock {
  type: "compaction";
  /** The summary; null when the compaction failed to produce one. */
  content: string | null;
  encrypted_content?: string | null;
  signature?: string | null;
}

/** The last `compaction` block of a response's content, if any. */
export function lastCompactionBlock(content: unknown): AnthropicCompactionBlock | undefined {
  const blocks: unknown[] = Array.isArray(content) ? content : [];
  return blocks.filter((b): b is AnthropicCompactionBlock => isRecord(b) && b.type === "compaction").at(-1);
}
