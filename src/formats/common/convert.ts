/**
 * Conversions shared by importers and exporters: Anthropic content blocks to
 * canonical blocks and back, images as `data:` URLs, tool-result content.
 */
import type { Block, ImageUrlBlock, ToolResultBlock } from "../../model/index.js";
import {
  fromAnthropicCompaction,
  isProviderCompaction,
  nativeOf,
  refuseForeignCompaction,
} from "../../model/index.js";
import { isRecord } from "./lines.js";

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

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

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

/** The text of a message's text blocks joined by newlines. */
export function textOf(blocks: readonly Block[]): string {
  return blocks
    .filter((b) => b.type === "text" && typeof (b as { text?: unknown }).text === "string")
    .map((b) => (b as { text: string }).text)
    .join("\n");
}
