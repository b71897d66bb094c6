/**
 * Which session, and which branch of it, a request provably continues: the
 * guard repairs a request only with what that session held. See "Sessions"
 * in docs/GUARD_CORE.md for the rules; in short:
 *
 * - a request continues a branch whose last history it extends;
 * - a compaction continues the branch it proves, and only when exactly one
 *   branch is proven: (a) a summary the request carries holds the summary
 *   relayed to (or answered for) that branch's own summarization request;
 *   else (b) the request's history (its summaries aside) carries, in order,
 *   items of that branch's last history, one of them found in no other
 *   candidate branch's last history;
 * - an agent's summarization request is attributed to a branch by its
 *   content (the branch of the session id whose history it carries most of;
 *   for pi, which sends no id, the one session whose history holds its
 *   `<conversation>` messages' texts, in order);
 * - a session id or a system prompt alone proves nothing.
 *
 * A session keeps its other branches (a second client on the same session
 * id, or the history before a rewind) beside its current one, so that a
 * request that extends or proves one of them goes on with it. What a proof
 * needs across a restart (the relayed summaries' fingerprints, the sessions
 * keyed by a hash, and which hash a compacted session is now sent under) is
 * kept in `sessions.index` in the state folder, owner-only.
 */
import { createHash } from "node:crypto";
import { appendFile, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { allText } from "../../contract/classify.js";
import type { Message } from "../../model/types.js";
import type { GuardOutcome, GuardWire } from "../types.js";
import type { HistoryItem, ItemHead, WireHistory } from "../reading/history.js";
import type { SessionIdentity } from "./session.js";
import { itemsOf, type HeldHistory, type Session, type Splice } from "./held-sessions.js";
import {
  commonPrefix,
  conversation,
  hasTools,
  isSummaryItem,
  relation,
  type Relation,
} from "../reading/detect.js";
import { readPiConversation } from "../judging/answer.js";
import {
  fingerprintOf,
  foundIn,
  normalized,
  relayedSummary,
  summaryTextOf,
  type Fingerprint,
} from "../reading/relayed.js";
import type { CoreContext } from "../context.js";

/** Branches a session keeps beside its current one (the oldest let go first). */
export const MAX_OTHER_BRANCHES = 2;
/** Relayed summaries kept per session (a compaction is proven by one of the latest). */
const MAX_RELAYED = 8;
/** Sessions keyed by a hash read back from the state folder, at most, to look for the one a request proves. */
const MAX_DISK_CANDIDATES = 16;

/** One of a session's other branches: what `Session` holds of its current one. */
export interface Branch {
  hist: HeldHistory;
  conv_ids: (string | undefined)[];
  splice?: Splice;
  had_tools: boolean;
  /** The journal entry its next messages go under. */
  leaf?: string;
}

function currentBranch(s: Session): Branch {
  return {
    hist: s.hist,
    conv_ids: s.conv_ids,
    splice: s.splice,
    had_tools: s.had_tools,
    leaf: s.journal?.leafId,
  };
}

/** Keeps the current branch beside the others (the oldest let go beyond MAX_OTHER_BRANCHES). */
export function keepCurrent(s: Session): void {
  s.branches = [...(s.branches ?? []), currentBranch(s)].slice(-MAX_OTHER_BRANCHES);
}

/** Makes the session's other branch `i` its current one, the current one kept beside the others. */
function swapIn(s: Session, i: number): void {
  const b = s.branches![i]!;
  s.branches = [...s.branches!.filter((_, k) => k !== i), currentBranch(s)].slice(-MAX_OTHER_BRANCHES);
  s.hist = b.hist;
  s.conv_ids = b.conv_ids;
  s.splice = b.splice;
  s.had_tools = b.had_tools;
  if (b.leaf !== undefined) s.journal?.moveTo(b.leaf);
  s.fast = undefined;
}

/** An item told by its key's length and digest (what the index keeps of a branch's last item). */
interface ItemMark {
  n: number;
  sha: string;
}

const digest = (s: string): string => createHash("sha256").update(s).digest("hex").slice(0, 32);
const markOf = (it: ItemHead): ItemMark => ({ n: it.key.length, sha: digest(it.key) });
const holds = (items: readonly ItemHead[], m: ItemMark): boolean =>
  items.some((i) => i.message.role !== "system" && i.key.length === m.n && digest(i.key) === m.sha);

/** A branch as the proofs read it: its last history and the summaries relayed to it. */
interface View {
  items: readonly ItemHead[];
  fps: readonly Fingerprint[];
}

/**
 * The session's branches, the current one first, each with the summaries
 * relayed to the session whose summarization request was this branch's (its
 * last item then is in its history).
 */
function viewsOf(ctx: CoreContext, s: Session): View[] {
  const relayed = ctx.index.relayedTo(s.key);
  return [s.hist, ...(s.branches ?? []).map((b) => b.hist)].map(({ heads: items }) => ({
    items,
    fps: relayed.filter((r) => holds(items, r.tail)).map((r) => r.fp),
  }));
}

/**
 * Whether `conv` carries, in order, items of `last` (its summaries aside),
 * one of them in none of `others`.
 */
function runIdentifies(
  conv: readonly HistoryItem[],
  last: readonly ItemHead[],
  others: readonly Set<string>[],
): boolean {
  const at = new Map<string, number[]>();
  last.forEach((it, i) => at.set(it.key, [...(at.get(it.key) ?? []), i]));
  let prev = -1;
  let identifies = false;
  for (const it of conv) {
    if (isSummaryItem(it)) continue;
    const i = at.get(it.key)?.find((x) => x > prev);
    if (i === undefined) {
      if (at.has(it.key)) return false;
      continue;
    }
    prev = i;
    if (!others.some((o) => o.has(it.key))) identifies = true;
  }
  return identifies;
}

/**
 * The branch (index in `views`) that the compaction in `conv` provably
 * continues, or undefined when none, or more than one, is proven: (a) a
 * summary new to the branch holds a summary relayed to it; else (b) the run
 * of `runIdentifies`. Only branches the request carries a new summary for count.
 */
export function provenCompaction(views: readonly View[], conv: readonly HistoryItem[]): number | undefined {
  const lasts = views.map((v) => conversation(v.items));
  const keys = lasts.map((l) => new Set(l.map((i) => i.key)));
  const summaries = keys.map((k) => conv.filter((i) => isSummaryItem(i) && !k.has(i.key)));
  const byRelayed = views.flatMap((v, k) =>
    v.fps.length > 0 && summaries[k]!.some((i) => foundIn(summaryTextOf(i.message), v.fps).size > 0)
      ? [k]
      : [],
  );
  if (byRelayed.length > 0) return byRelayed.length === 1 ? byRelayed[0] : undefined;
  const byRun = views.flatMap((_, k) =>
    summaries[k]!.length > 0 &&
    runIdentifies(
      conv,
      lasts[k]!,
      keys.filter((_, j) => j !== k),
    )
      ? [k]
      : [],
  );
  return byRun.length === 1 ? byRun[0] : undefined;
}

/**
 * What a request read is to its session, its branch chosen (and made the
 * current one): an extension of a branch; a compaction of the one branch it
 * proves (`unproven` when it proves none: a new branch); a rewrite of the
 * branch it shares the most with (the branch before it kept beside); or a
 * side request.
 */
export function chooseBranch(ctx: CoreContext, s: Session, h: WireHistory): Relation | "unproven" {
  const conv = conversation(h.items);
  const tools = hasTools(h.doc);
  const hadTools = [s.had_tools, ...(s.branches ?? []).map((b) => b.had_tools)];
  const views = viewsOf(ctx, s);
  const rels = views.map((v, k) => relation(conversation(v.items), conv, hadTools[k]!, tools));
  const pick = (k: number): Relation => {
    if (k > 0) swapIn(s, k - 1);
    return rels[k]!;
  };
  const ext = rels.findIndex((r) => r.kind === "extension");
  if (ext >= 0) return pick(ext);
  if (rels.some((r) => r.kind === "compaction")) {
    const proven = provenCompaction(views, conv);
    if (proven !== undefined) return pick(proven);
  }
  let best = -1;
  rels.forEach((r, k) => {
    if (r.kind === "rewrite" && (best < 0 || r.common > (rels[best] as { common: number }).common)) best = k;
  });
  if (best >= 0) return pick(best);
  return rels.some((r) => r.kind === "compaction") ? "unproven" : rels[0]!;
}

/** Session keys made of a hash of the first messages (`sessionOf`), which pi's requests get. */
const HASHED = /:h-[0-9a-f]{24}$/;

/** The sessions keyed by a hash on `wire`: those held, then the latest of those in the state folder. */
async function hashedCandidates(ctx: CoreContext, wire: GuardWire): Promise<Session[]> {
  const { held, index } = ctx;
  const out = [...held.sessions.values()].filter((s) => HASHED.test(s.key) && s.wire === wire);
  const onDisk = index
    .hashedOn(wire)
    .filter((k) => !held.sessions.has(k))
    .slice(-MAX_DISK_CANDIDATES);
  for (const key of onDisk) {
    const s = await held.load({ key, agent: "unknown", source: "hash" }, wire);
    if (s) out.push(s);
  }
  return out;
}

/**
 * The session a request keyed by a hash continues: the one its key is known
 * to be sent under (a compaction proven before), its own, or, for a history
 * with a summary under a key not seen before, the one session it proves a
 * compaction of (then its key is known to be sent under that one). Any other
 * id is returned as it is.
 */
export async function resolveHashed(
  ctx: CoreContext,
  h: WireHistory,
  id: SessionIdentity,
): Promise<SessionIdentity> {
  const { index, held } = ctx;
  if (id.source !== "hash") return id;
  const alias = index.aliasOf(id.key);
  if (alias !== undefined) return { ...id, key: alias };
  if (held.sessions.has(id.key) || index.isHashed(id.key)) return id;
  const conv = conversation(h.items);
  if (!conv.some(isSummaryItem)) return id;
  const sessions = await hashedCandidates(ctx, h.wire);
  const views = sessions.flatMap((s) => viewsOf(ctx, s).map((v) => ({ ...v, key: s.key })));
  const k = provenCompaction(views, conv);
  if (k === undefined) return id;
  const key = views[k]!.key;
  index.alias(id.key, key);
  return { ...id, key };
}

/** The branch a summarization request belongs to: its session, and its last item then. */
interface Target {
  key: string;
  tail: ItemMark;
}

/** The texts of a history's user and assistant messages, normalized (those without text left out). */
const textsOf = (messages: readonly Message[]): string[] =>
  messages
    .map((m) => (m.role === "user" || m.role === "assistant" ? normalized(allText(m)) : ""))
    .filter((t) => t !== "");

/** Whether `wanted` occur in `texts`, in order. */
function inOrder(wanted: readonly string[], texts: readonly string[]): boolean {
  let at = 0;
  for (const w of wanted) {
    while (at < texts.length && texts[at] !== w) at++;
    if (at === texts.length) return false;
    at++;
  }
  return true;
}

/**
 * The branch an agent's summarization request belongs to. Claude Code and
 * Codex (a session id): among that session's branches, the one whose last
 * history the request's shares the longest start with, when exactly one
 * does. pi (its request carries the history as text): the one branch whose
 * last history holds the texts of the messages in the request's
 * `<conversation>` (its previous summary aside), in order, among the
 * session's branches when the request has a session id, else among the
 * sessions keyed by a hash; none when no message has text, or when more than
 * one branch qualifies.
 */
async function summarizedBranch(
  ctx: CoreContext,
  h: WireHistory,
  id: SessionIdentity,
  agent: string,
): Promise<Target | undefined> {
  const conv = conversation(h.items);
  // A session keyed by a hash of its start: a summarization request that carries its whole history
  // (a provider's compaction request) has that start, so that key, unless it is pi's (its history as text).
  const own = id.source !== "hash" || agent !== "pi";
  const keyed = own ? await ctx.held.load(id, h.wire) : undefined;
  const sessions = own ? (keyed ? [keyed] : []) : await hashedCandidates(ctx, h.wire);
  const branches = sessions.flatMap((s) =>
    [s.hist, ...(s.branches ?? []).map((b) => b.hist)].map((hist) => ({
      key: s.key,
      hist,
      conv: conversation(hist.heads),
    })),
  );
  const one = (found: typeof branches): Target | undefined => {
    const last = found.length === 1 ? found[0]!.conv.at(-1) : undefined;
    return last ? { key: found[0]!.key, tail: markOf(last) } : undefined;
  };
  if (agent !== "pi") {
    const common = branches.map((b) => commonPrefix(b.conv, conv));
    const most = Math.max(0, ...common);
    return most === 0 ? undefined : one(branches.filter((_, k) => common[k] === most));
  }
  if (conv.length === 0) return undefined;
  const text = allText(conv[conv.length - 1]!.message);
  const read = readPiConversation(text);
  const wanted = textsOf(text.includes("<previous-summary>") ? read.slice(1) : read);
  if (wanted.length === 0) return undefined;
  return one(
    branches.filter((b) => inOrder(wanted, textsOf(conversation(itemsOf(b.hist)).map((i) => i.message)))),
  );
}

/** Records `text`, an answer to the summarization request of `t`, as relayed to that branch. */
function recordRelayed(ctx: CoreContext, t: Target, text: string): void {
  const fp = fingerprintOf(text);
  if (fp) ctx.index.relayed(t.key, { fp, tail: t.tail });
}

/** A summarization request read (see `prepare`): what finding its branch takes. */
export interface Summarizing {
  history: WireHistory;
  id: SessionIdentity;
  agent: string;
  /** The guard's own answer's text (`summarizer: "extractive"`). */
  answered?: string;
}

/**
 * The outcome of an agent's summarization request, with its branch found:
 * the guard's own answer is recorded for it at once; a forwarded request's
 * outcome gets `relayed`, which records the upstream's answer. A request
 * that belongs to no branch records nothing, and its note says so.
 */
export async function summarizationOutcome(
  ctx: CoreContext,
  outcome: GuardOutcome,
  sz: Summarizing,
): Promise<GuardOutcome> {
  const target = await summarizedBranch(ctx, sz.history, sz.id, sz.agent);
  if (!target) return { ...outcome, note: `${outcome.note ?? ""}; it belongs to no session the guard holds` };
  if (sz.answered !== undefined) {
    recordRelayed(ctx, target, sz.answered);
    return outcome;
  }
  return {
    ...outcome,
    relayed: (body, encoding) => recordRelayed(ctx, target, relayedSummary(body, encoding)),
  };
}

const INDEX_FILE = "sessions.index";

/** A summary relayed to a branch's summarization request: its fingerprint, and the branch's last item then. */
interface Relayed {
  fp: Fingerprint;
  tail: ItemMark;
}

/**
 * What the proofs need across a restart, in `sessions.index` in the
 * state folder (owner-only; one JSON object a line, appended): the
 * fingerprints of the summaries relayed per session (`relayed`), the
 * sessions keyed by a hash per wire (`hashed`), and the key a compacted
 * session keyed by a hash is sent under (`alias`). Written off the request
 * path; an unreadable line is skipped.
 */
export class SessionIndex {
  private readonly file: string | undefined;
  /** The summaries relayed per session, the latest last. */
  private readonly relayedBy = new Map<string, Relayed[]>();
  private readonly aliases = new Map<string, string>();
  /** Session keys by wire, the latest last. */
  private readonly hashed = new Map<string, GuardWire>();
  private loaded: Promise<void> | undefined;
  private pending: Promise<void> = Promise.resolve();

  constructor(private readonly dir: string | undefined) {
    this.file = dir === undefined ? undefined : join(dir, INDEX_FILE);
  }

  /** Reads the file once (the guard's earlier runs); later calls wait for the same read. */
  load(): Promise<void> {
    this.loaded ??= (async () => {
      if (this.file === undefined) return;
      let text: string;
      try {
        text = await readFile(this.file, "utf8");
      } catch {
        return;
      }
      for (const line of text.split("\n")) {
        let r: Record<string, unknown>;
        try {
          r = JSON.parse(line) as Record<string, unknown>;
        } catch {
          continue; // a torn last line (a guard killed mid-write)
        }
        const fp = r.fp as Partial<Fingerprint> | undefined;
        const tail = r.tail as Partial<ItemMark> | undefined;
        if (
          typeof r.relayed === "string" &&
          typeof fp?.n === "number" &&
          typeof fp.roll === "number" &&
          typeof fp.sha === "string" &&
          typeof tail?.n === "number" &&
          typeof tail.sha === "string"
        )
          this.remember(r.relayed, {
            fp: { n: fp.n, roll: fp.roll, sha: fp.sha },
            tail: { n: tail.n, sha: tail.sha },
          });
        else if (typeof r.alias === "string" && typeof r.to === "string") this.aliases.set(r.alias, r.to);
        else if (typeof r.hashed === "string" && typeof r.wire === "string") {
          this.hashed.delete(r.hashed);
          this.hashed.set(r.hashed, r.wire as GuardWire);
        }
      }
    })();
    return this.loaded;
  }

  /** The summaries relayed to the session's summarization requests (this run's and the earlier runs'). */
  relayedTo(key: string): readonly Relayed[] {
    return this.relayedBy.get(key) ?? [];
  }

  relayed(key: string, r: Relayed): void {
    this.remember(key, r);
    this.write({ relayed: key, fp: r.fp, tail: r.tail });
  }

  private remember(key: string, r: Relayed): void {
    this.relayedBy.set(key, [...(this.relayedBy.get(key) ?? []), r].slice(-MAX_RELAYED));
  }

  aliasOf(key: string): string | undefined {
    return this.aliases.get(key);
  }

  alias(from: string, to: string): void {
    this.aliases.set(from, to);
    this.write({ alias: from, to });
  }

  isHashed(key: string): boolean {
    return this.hashed.has(key);
  }

  /** The sessions keyed by a hash on `wire`, the latest last. */
  hashedOn(wire: GuardWire): string[] {
    return [...this.hashed].filter(([, w]) => w === wire).map(([k]) => k);
  }

  noteHashed(key: string, wire: GuardWire): void {
    if (this.hashed.has(key)) return;
    this.hashed.set(key, wire);
    this.write({ hashed: key, wire });
  }

  private write(record: Record<string, unknown>): void {
    const { file, dir } = this;
    if (file === undefined || dir === undefined) return;
    const line = `${JSON.stringify(record)}\n`;
    this.pending = this.pending.then(async () => {
      try {
        await mkdir(dir, { recursive: true, mode: 0o700 });
        await appendFile(file, line, { mode: 0o600 });
      } catch {
        // the index serves a restart: a failed write loses only what a restart would prove with it
      }
    });
  }

  flush(): Promise<void> {
    return this.pending;
  }
}
