/**
 * The pi adapter's conversions, typed with pi's own types
 * (`@mariozechner/pi-coding-agent` 0.73, pi-ai 0.73): pi's agent messages and
 * compact-safe's messages, both ways, with nothing lost.
 *
 * The reading and writing are `src/wire/pi.ts`'s (see its comment for the
 * mapping), the one pi reader the session importer uses too. pi →
 * compact-safe keeps what has no canonical field in `meta.pi`; compact-safe →
 * pi rebuilds a message that came from pi from its blocks and `meta.pi`, and
 * writes any other as what pi sends the model the same way (a `system`
 * message as a `compact-safe-system` custom message, a user message's results
 * as one `toolResult` each); what pi cannot carry natively travels in the pi
 * message's `compactSafe` field, which pi keeps in its session file and does
 * not send.
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
