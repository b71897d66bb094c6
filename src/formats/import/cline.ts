/**
 * Cline / Roo Code `api_conversation_history.json`: Anthropic messages in
 * which a tool's result is written as user TEXT, not as a `tool_result`
 * block: a block `[read_file for 'x'] Result:` (or `[attempt_completion]
 * Result:`), then the result's own text and image blocks, often followed by an
 * `<environment_details>` block; a second call of one message is answered
 * `Tool [name] was not executed because …`. When the call itself is a real `tool_use`
 * block (native tool calling), such a text result is the call's result: read
 * as text only, the call would look abandoned and get an invented result.
 * `pairTextToolResults` turns each such text result into the `tool_result` of
 * its call (same id; the header and the result's text kept verbatim, joined by
 * newlines). Calls written as XML in the assistant's text (the classic
 * protocol) stay text, with their text results: nothing is a tool call there,
 * so nothing is abandoned either.
 */
import type { Block, Message, ToolResultBlock, ToolUseBlock } from "../../model/index.js";

/** `[read_file for 'app.js'] Result:`: the tool name, at the start of a text block. */
const RESULT_HEADER = /^\[([A-Za-z0-9_.:-]+)(?: for [\s\S]*?)?\] Result:/;

/** Cline's and Roo's answer to a second call in one message: `Tool [write_to_file] was not executed because …`. */
const NOT_EXECUTED = /^Tool \[([A-Za-z0-9_.:-]+)\] was not executed because/;

/** The tool name of a text result's header block, or undefined. */
export function textResultTool(b: Block): string | undefined {
  if (b.type !== "text" || typeof (b as { text?: unknown }).text !== "string") return undefined;
  const t = (b as { text: string }).text;
  return RESULT_HEADER.exec(t)?.[1] ?? NOT_EXECUTED.exec(t)?.[1];
}

const isEnvironmentDetails = (b: Block): boolean =>
  b.type === "text" &&
  String((b as { text?: unknown }).text)
    .trimStart()
    .startsWith("<environment_details>");

const FAILED = /^The tool execution failed\b/;

interface Group {
  tool: string;
  blocks: Block[];
}

/**
 * Pairs text results with the unanswered `tool_use` calls of the assistant
 * message right before them (by tool name; a single leftover result and call
 * pair with each other). Returns a new array and the number of results paired;
 * messages without a text result for an unanswered call are returned as they are.
 */
export function pairTextToolResults<T extends { message: Message }>(
  items: readonly T[],
): { items: T[]; paired: number } {
  const answered = new Set<string>();
  for (const { message } of items)
    for (const b of message.content)
      if (b.type === "tool_result") answered.add((b as ToolResultBlock).tool_use_id);
  let paired = 0;
  const out = items.map((it, i) => {
    const prev = items[i - 1]?.message;
    if (it.message.role !== "user" || !prev || prev.role !== "assistant") return it;
    const calls = prev.content.filter(
      (b): b is ToolUseBlock => b.type === "tool_use" && !answered.has((b as ToolUseBlock).id),
    );
    if (calls.length === 0 || !it.message.content.some((b) => textResultTool(b) !== undefined)) return it;
    // Split the message: text before the first header, result groups, and what follows them.
    const before: Block[] = [];
    const groups: Group[] = [];
    const after: Block[] = [];
    for (const b of it.message.content) {
      const tool = textResultTool(b);
      if (tool !== undefined) groups.push({ tool, blocks: [b] });
      else if (groups.length === 0) before.push(b);
      else if (after.length > 0 || isEnvironmentDetails(b) || b.type === "tool_result") after.push(b);
      else groups[groups.length - 1]!.blocks.push(b);
    }
    const open = [...calls];
    const match = new Map<Group, ToolUseBlock>();
    for (const g of groups) {
      const k = open.findIndex((c) => c.name === g.tool);
      if (k >= 0) match.set(g, open.splice(k, 1)[0]!);
    }
    const left = groups.filter((g) => !match.has(g));
    if (left.length === 1 && open.length === 1) match.set(left[0]!, open[0]!);
    if (match.size === 0) return it;
    const results: Block[] = [];
    const rest: Block[] = [];
    for (const g of groups) {
      const c = match.get(g);
      if (!c) {
        rest.push(...g.blocks);
        continue;
      }
      const texts = g.blocks.filter((b) => b.type === "text").map((b) => (b as { text: string }).text);
      const others = g.blocks.filter((b) => b.type !== "text");
      const r: ToolResultBlock = { type: "tool_result", tool_use_id: c.id, content: texts.join("\n") };
      if (others.length > 0) r.content_blocks = others;
      if (FAILED.test(texts[1] ?? "") || NOT_EXECUTED.test(texts[0] ?? "")) r.is_error = true;
      results.push(r);
      answered.add(c.id);
      paired++;
    }
    // tool_result blocks first (the API wants them before any text of the message).
    return { ...it, message: { ...it.message, content: [...results, ...before, ...rest, ...after] } };
  });
  return { items: out, paired };
}
