/**
 * The guard's repair of a compaction that lost what the contract protects:
 * the splice (`splice.ts`) placed after the agent's summary, read back from
 * the new body, and checked (the wire's rules, no merging with the messages
 * around it, the survival contract) before it is sent.
 */
import { validateSurvivalContract } from "../../contract/validate.js";
import { messagesOf, type HistoryItem, type WireHistory } from "../reading/history.js";
import { readWire } from "../reading/wires.js";
import { lastSummary } from "../reading/detect.js";
import {
  buildSplice,
  insertAfter,
  restatedText,
  summaryTakesContent,
  userTextElement,
  wireCheck,
  type Restated,
} from "./splice.js";
import type { Splice } from "../sessions/held-sessions.js";

/** A repair sent: the spliced body, the splice, the whole spliced history, and where the splice starts in it. */
export interface Repaired {
  body: Buffer;
  splice: Splice;
  spliced: HistoryItem[];
  from: number;
}

/** The spliced body, checked; or why it is not sent. */
export function repair(
  h: WireHistory,
  before: readonly HistoryItem[],
  after: readonly HistoryItem[],
  newTurns: number,
  restated: Restated,
): Repaired | { refused: string } {
  const at = lastSummary(after);
  if (at < 0) return { refused: "no summary in the request to place the repair after" };
  const round = buildSplice(h.wire, before, after);
  const text = restatedText(restated);
  // The restatement goes on the summary's own message; after an opaque provider summary, in the message right after it.
  const onSummary = text !== undefined && summaryTakesContent(h, at);
  const raw = text !== undefined && !onSummary ? [userTextElement(h.wire, text), ...round] : round;
  if (raw.length === 0 && !onSummary) return { refused: "nothing of the last round left to splice" };
  const parts = { raw, restated: onSummary ? text : undefined };
  const { doc, start } = insertAfter(h, at, parts);
  const list = doc[h.listKey] as unknown[];
  const bad = wireCheck(h.wire, list);
  if (bad) return { refused: bad };
  const h2 = readWire(h.wire, doc);
  // The inserted elements, in the new list.
  const end = start + raw.length;
  const inside = (it: HistoryItem): boolean =>
    it.parts.length > 0 && it.parts.every((p) => p.element >= start && p.element < end);
  const straddles = h2.items.some(
    (it) => it.parts.some((p) => p.element >= start && p.element < end) && !inside(it),
  );
  if (straddles) return { refused: "the repair would merge with the messages around it" };
  // The summary keeps its index (the splice goes after it); what was inserted follows it.
  const from = at + 1;
  const spliceItems = h2.items.filter(inside);
  const spliced = h2.items;
  const judged = messagesOf(spliced.slice(0, spliced.length - newTurns));
  const v = validateSurvivalContract(messagesOf(before), judged, { path: "summary" });
  if (!v.valid)
    return { refused: `the spliced request would not keep the contract: ${v.reason ?? "violation"}` };
  const checkpointKey = after[at]!.key;
  return {
    body: Buffer.from(JSON.stringify(doc), "utf8"),
    splice: {
      checkpointKey,
      raw,
      items: spliceItems,
      ...(parts.restated !== undefined ? { restated: parts.restated } : {}),
      checkpoint: h2.items[at]!,
    },
    spliced,
    from,
  };
}
