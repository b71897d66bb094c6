/**
 * The three libraries of `npm run bench:peers`, each set up for one
 * compaction of the same messages with the same instant stand-in summarizer
 * (`STAND_IN_NOTE`) and the same budget B (see peers-core.ts):
 *
 * - compact-safe: `compactMessagesSafe(messages, { keepRecentTokens: B,
 *   target: B + CONSTANTS.summaryMaxTokens, summarizer })` (`compactSafeOptions`):
 *   the newest B tokens kept verbatim, as pi and LangChain keep theirs, and a
 *   target that holds them and the note at its cap (their results are the
 *   kept B plus their summary); the summarizer a stand-in that builds what the
 *   LLM summarizers send (`SYSTEM_PROMPT` and `buildUserPrompt(request)`) and
 *   answers at once.
 * - pi (`@mariozechner/pi-coding-agent`): the messages converted with
 *   `toPiMessages`, appended to pi's own in-memory `SessionManager` (one
 *   message entry each); the timed call is what pi's `/compact` runs
 *   (`AgentSession.compact`): `prepareCompaction(branch, settings)` then
 *   `compact(preparation, model, apiKey)`, with settings `{ enabled: true,
 *   reserveTokens: 16384 (pi's default), keepRecentTokens: B }` and pi-ai's
 *   own faux provider (`registerFauxProvider`) as the model. pi exports
 *   neither `prepareCompaction` nor its compaction module, so the module is
 *   imported by its file next to pi's entry point. The new context
 *   (`buildSessionContext` with the compaction entry, as pi reloads it) is
 *   built after the timer, for the check.
 * - LangChain (`langchain`): the messages converted with
 *   `toLangChainMessages`, each given an id as LangGraph's messages reducer
 *   gives every message of an agent's state; the timed call is
 *   `summarizationMiddleware({ model, trigger: { tokens: B }, keep: { tokens:
 *   B } })`'s own `beforeModel` hook on `{ messages }`; the model is
 *   `FakeListChatModel` from `@langchain/core/utils/testing`.
 *
 * `setupLib` loads a library and sets it up once per process (its modules,
 * pi's faux provider, LangChain's middleware and model); its `prepare(messages)`
 * converts one copy of the messages into the library's own types (untimed, a
 * fresh copy for every cold call); `run()` is the timed call; `check()`
 * (untimed, after) converts the result back to compact-safe messages and runs
 * `validateSurvivalContract(original, result)`.
 */
import { randomUUID } from "node:crypto";
import type { Message } from "../src/model/index.js";
import { compactMessagesSafe, type CompactOptions } from "../src/engine/compact.js";
import { CONSTANTS } from "../src/model/constants.js";
import { fastEstimator } from "../src/engine/tokens.js";
import { validateSurvivalContract } from "../src/contract/validate.js";
import { buildUserPrompt, SYSTEM_PROMPT } from "../src/summarizers/prompt.js";
import type { Summarizer } from "../src/summarizers/types.js";
import { fromPiMessages, toPiMessages, type PiAgentMessage } from "../src/adapters/pi-convert.js";
import {
  firstDifference,
  langChainInputTexts,
  piRequestTexts,
  STAND_IN_NOTE,
  type ContractVerdict,
  type Lib,
} from "./peers-core.js";

/** What the stand-in summarizer was sent, as texts per call (sized after the timer). */
export class Recorder {
  calls: string[][] = [];
  reset(): void {
    this.calls = [];
  }
  size(): { calls: number; chars: number; tokens: number } {
    let chars = 0;
    let tokens = 0;
    for (const texts of this.calls)
      for (const t of texts) {
        chars += t.length;
        tokens += fastEstimator.text(t);
      }
    return { calls: this.calls.length, chars, tokens };
  }
}

export interface RunOutcome {
  /** `summary`, `prune-only`, or why no new history was made. */
  outcome: string;
  compacted: boolean;
}

export interface Prepared {
  /** The timed call: one compaction through the library's own entry point. */
  run(): Promise<RunOutcome>;
  /** After the timer: the last run's result as compact-safe messages, checked against the contract. */
  check(): { result_messages: number | null; contract: ContractVerdict | null };
}

function verdict(original: readonly Message[], back: () => Message[], path: "summary" | "prune-only") {
  let result: Message[];
  try {
    result = back();
  } catch (e) {
    return {
      result_messages: null,
      contract: {
        valid: false,
        reason: `the result does not convert back: ${e instanceof Error ? e.message : String(e)}`,
      },
    };
  }
  const v = validateSurvivalContract(original, result, { path });
  return { result_messages: result.length, contract: { valid: v.valid, reason: v.reason } };
}

// ---------------------------------------------------------------------------------------------
// compact-safe

/**
 * compact-safe's options for budget B: keep the newest B tokens verbatim (the protected round with
 * them), as pi's `keepRecentTokens` and LangChain's `keep` do, with a target that holds them and the
 * note at its cap, so that the three summarize the same older span.
 */
export function compactSafeOptions(budget: number, summarizer: Summarizer): CompactOptions {
  return { keepRecentTokens: budget, target: budget + CONSTANTS.summaryMaxTokens, summarizer };
}

function setupCompactSafe(budget: number, rec: Recorder): LibRunner {
  const summarizer: Summarizer = {
    name: "stand-in",
    model: "stand-in",
    async summarize(request) {
      rec.calls.push([SYSTEM_PROMPT, buildUserPrompt(request)]);
      return { text: STAND_IN_NOTE, model: "stand-in" };
    },
  };
  return { prepare: (messages) => prepareCompactSafe(messages, budget, summarizer) };
}

function prepareCompactSafe(messages: Message[], budget: number, summarizer: Summarizer): Prepared {
  let last: Awaited<ReturnType<typeof compactMessagesSafe>> | undefined;
  return {
    async run() {
      last = await compactMessagesSafe(messages, compactSafeOptions(budget, summarizer));
      return last.ok
        ? { outcome: last.path, compacted: true }
        : { outcome: `${last.error.kind}: ${last.error.message}`, compacted: false };
    },
    check() {
      const r = last;
      if (!r || !r.ok) return { result_messages: null, contract: null };
      return verdict(messages, () => r.replacement, r.path);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// pi

type PiCompaction = typeof import("@mariozechner/pi-coding-agent");
type PiSettings = { enabled: boolean; reserveTokens: number; keepRecentTokens: number };
type PiEntry = import("@mariozechner/pi-coding-agent").SessionEntry;
type PiPreparation = Parameters<PiCompaction["compact"]>[0];

async function piModules() {
  const entry = import.meta.resolve("@mariozechner/pi-coding-agent");
  const compaction = (await import(new URL("./core/compaction/compaction.js", entry).href)) as {
    prepareCompaction(entries: PiEntry[], settings: PiSettings): PiPreparation | undefined;
    compact: PiCompaction["compact"];
    DEFAULT_COMPACTION_SETTINGS: PiSettings;
  };
  const sessions = (await import(new URL("./core/session-manager.js", entry).href)) as Pick<
    PiCompaction,
    "SessionManager" | "buildSessionContext"
  >;
  const ai = await import("@mariozechner/pi-ai");
  return { compaction, sessions, ai };
}

async function setupPi(budget: number, rec: Recorder): Promise<LibRunner> {
  const { compaction, sessions, ai } = await piModules();
  const faux = ai.registerFauxProvider();
  const model = faux.getModel();
  const settings: PiSettings = {
    enabled: true,
    reserveTokens: compaction.DEFAULT_COMPACTION_SETTINGS.reserveTokens,
    keepRecentTokens: budget,
  };
  const answer = (context: unknown) => {
    rec.calls.push(piRequestTexts(context));
    return ai.fauxAssistantMessage(STAND_IN_NOTE);
  };
  return {
    prepare(messages) {
      const manager = sessions.SessionManager.inMemory();
      for (const m of toPiMessages(messages)) manager.appendMessage(m as never);
      return preparePi(messages, manager.getBranch());
    },
  };

  function preparePi(messages: Message[], branch: PiEntry[]): Prepared {
    let last: Awaited<ReturnType<PiCompaction["compact"]>> | undefined;
    return {
      async run() {
        last = undefined;
        // pi asks once, or twice when the cut splits a turn (history and turn prefix).
        faux.setResponses([answer, answer]);
        const preparation = compaction.prepareCompaction(branch, settings);
        if (!preparation) return { outcome: "nothing to compact (prepareCompaction)", compacted: false };
        last = await compaction.compact(preparation, model, "faux-key");
        return { outcome: "summary", compacted: true };
      },
      check() {
        const r = last;
        if (!r) return { result_messages: null, contract: null };
        const leaf = branch[branch.length - 1]!;
        const entry = {
          type: "compaction",
          id: "bench-peers-compaction",
          parentId: leaf.id,
          timestamp: new Date().toISOString(),
          summary: r.summary,
          firstKeptEntryId: r.firstKeptEntryId,
          tokensBefore: r.tokensBefore,
          details: r.details,
        } as unknown as PiEntry;
        const context = sessions.buildSessionContext([...branch, entry]);
        return verdict(messages, () => fromPiMessages(context.messages as PiAgentMessage[]), "summary");
      },
    };
  }
}

// ---------------------------------------------------------------------------------------------
// LangChain

async function setupLangChain(budget: number, rec: Recorder): Promise<LibRunner> {
  // Imported here, so that the other libraries' children do not load LangChain.
  const { fromLangChainMessages, toLangChainMessages } = await import("../src/adapters/langchain.js");
  const { summarizationMiddleware } = await import("langchain");
  const { FakeListChatModel } = await import("@langchain/core/utils/testing");
  type BaseMessage = import("@langchain/core/messages").BaseMessage;
  type Generate = import("@langchain/core/utils/testing").FakeListChatModel["_generate"];
  class RecordingFakeModel extends FakeListChatModel {
    override async _generate(
      input: Parameters<Generate>[0],
      options?: Parameters<Generate>[1],
      runManager?: Parameters<Generate>[2],
    ) {
      rec.calls.push(langChainInputTexts(input));
      return super._generate(input, options, runManager);
    }
  }
  const mw = summarizationMiddleware({
    model: new RecordingFakeModel({ responses: [STAND_IN_NOTE] }),
    trigger: { tokens: budget },
    keep: { tokens: budget },
  });
  const hook = mw.beforeModel as unknown as (
    s: { messages: BaseMessage[] },
    runtime: { context: object },
  ) => Promise<{ messages: BaseMessage[] } | undefined>;
  return {
    prepare(messages) {
      const state = toLangChainMessages(messages);
      for (const m of state) if (!m.id) m.id = randomUUID();
      let last: { messages: BaseMessage[] } | undefined;
      return {
        async run() {
          last = await hook({ messages: state }, { context: {} });
          return last
            ? { outcome: "summary", compacted: true }
            : { outcome: "not compacted (the hook returned no update)", compacted: false };
        },
        check() {
          const r = last;
          if (!r) return { result_messages: null, contract: null };
          // The first message of the update is LangGraph's RemoveMessage of all messages.
          return verdict(messages, () => fromLangChainMessages(r.messages.slice(1)), "summary");
        },
      };
    },
  };
}

/** A library loaded and set up for the budget; `prepare` converts one copy of the messages (untimed). */
export interface LibRunner {
  prepare(messages: Message[]): Prepared;
}

/** Loads the library and sets it up once for this process (untimed). */
export async function setupLib(lib: Lib, budget: number, rec: Recorder): Promise<LibRunner> {
  switch (lib) {
    case "compact-safe":
      return setupCompactSafe(budget, rec);
    case "pi":
      return setupPi(budget, rec);
    case "langchain":
      return setupLangChain(budget, rec);
  }
}

/** `setupLib`, then `prepare(messages)`: one library ready for one compaction of these messages. */
export async function prepareLib(
  lib: Lib,
  messages: Message[],
  budget: number,
  rec: Recorder,
): Promise<Prepared> {
  return (await setupLib(lib, budget, rec)).prepare(messages);
}

/** Whether the library's converter gives the compact-safe messages back (null for compact-safe). */
export async function roundTrip(
  lib: Lib,
  messages: Message[],
): Promise<{ ok: boolean; detail: string | null } | null> {
  let back: Message[];
  try {
    if (lib === "pi") back = fromPiMessages(toPiMessages(messages));
    else if (lib === "langchain") {
      const { fromLangChainMessages, toLangChainMessages } = await import("../src/adapters/langchain.js");
      back = fromLangChainMessages(toLangChainMessages(messages));
    } else return null;
  } catch (e) {
    return { ok: false, detail: `conversion threw: ${e instanceof Error ? e.message : String(e)}` };
  }
  const detail = firstDifference(messages, back);
  return { ok: detail === null, detail };
}
