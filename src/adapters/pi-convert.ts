/**
 * The pi adapter's conversion, typed with pi's own types: pi's agent messages (`@mariozechner/pi-coding-agent` 0.73, pi-ai 0.73) and
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

 *
 * The reading and writing themselves are `src/wire/pi.ts`'s, the one pi
 * reader the session importer uses too.
 */
import type { Message } from "../model/types.js";
import * as wire from "../wire/pi.js";
import type { SessionBeforeCompactEvent } from "@mariozechner/pi-coding-agent";

export { PI_SYSTEM_CUSTOM_TYPE } from "../wire/pi.js";

/** pi's agent message (pi-ai's messages and pi-coding-agent's own: `bashExecution`, `custom`, `branchSummary`, `compactionSummary`). */
export type PiAgentMessage = SessionBeforeCompactEvent["preparation"]["messagesToSummarize"][number];

type Rec = Record<string, unknown>;

/**
 * One pi message as compact-safe's: the native mapping, with pi's content
 * kept where it does not come back. A message `toPiMessages` wrote gives back
 * the compact-safe message it came from, unless `carrier` is false: then it
 * is read as pi reads it (what pi sends the model), one message per piece.
 */
export function fromPiMessage(message: PiAgentMessage, options: { carrier?: boolean } = {}): Message {
  return wire.fromPiMessage(message as unknown as Rec, options);
}

/**
 * pi's agent messages as compact-safe messages. Pieces of one compact-safe
 * message that `toPiMessages` split (a user message with several tool
 * results) are joined back into it; every other pi message gives exactly one.
 */
export function fromPiMessages(messages: readonly PiAgentMessage[]): Message[] {
  return wire.fromPiMessages(messages as unknown as readonly Rec[]);
}

/**
 * compact-safe messages as pi agent messages: what pi sends the model from
 * them is what compact-safe's exporters would send, and `fromPiMessages`
 * gives the compact-safe messages back exactly.
 */
export function toPiMessages(messages: readonly Message[]): PiAgentMessage[] {
  return wire.toPiMessages(messages) as unknown as PiAgentMessage[];
}
