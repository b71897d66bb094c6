/**
 * The host step every adapter runs once it has converted the host's messages
 * in and decided to compact (with the engine's `shouldCompact`): compact with
 * the engine, convert the replacement out to the host's type, read that back
 * and validate it with the contract, so what the host receives is what was
 * judged. A refusal has one shape for every adapter, `{ ok: false, error:
 * { kind, message, attempts } }`, and the host's history is left as it was.
 * Each adapter keeps only its conversions and the host's hook.
 */
import type { Message } from "../model/types.js";
import { validateSurvivalContract } from "../contract/validate.js";
import { compactMessagesSafe } from "../engine/compact.js";
import type { CompactError, CompactOptions, CompactSuccess } from "../engine/result.js";
import type { CompactDecision } from "../engine/pressure.js";

/** Why nothing was done: the history is under the pressure that asks for a compaction. */
export interface BelowThreshold {
  kind: "below_threshold";
  /** One line: the tokens and the threshold. */
  message: string;
  attempts: 0;
}

/**
 * Why a host step returned nothing to commit: the engine's refusal (`CompactError`: the summarizer
 * failed, an unusable summary, a contract violation, nothing to compact, or the replacement as the
 * host's messages did not validate), or the pressure check's (`BelowThreshold`).
 */
export type HostRefusal = CompactError | BelowThreshold;

export type HostStepResult<Out> =
  { ok: true; out: Out; result: CompactSuccess } | { ok: false; error: CompactError };

/** How a host's messages convert: out to the host's type, and back to check what the host will receive. */
export interface HostConversion<Out> {
  /** What the host's messages are called in a refusal ("LangChain messages"). */
  name: string;
  toHost(replacement: Message[]): Out;
  fromHost(out: Out): Message[];
}

/** Compacts `messages`, converts the replacement to the host's type and validates it as the host will send it. */
export async function compactHostStep<Out>(
  messages: readonly Message[],
  options: CompactOptions,
  conversion: HostConversion<Out>,
): Promise<HostStepResult<Out>> {
  const result = await compactMessagesSafe(messages, options);
  if (!result.ok) return result;
  let out: Out | undefined;
  let problem: string | undefined;
  try {
    out = conversion.toHost(result.replacement);
    const verdict = validateSurvivalContract(messages, conversion.fromHost(out), {
      anchors: options.anchors?.trim() ?? "",
      path: result.path,
    });
    if (!verdict.valid) problem = verdict.reason ?? "the survival contract failed";
  } catch (e) {
    problem = (e as Error).message;
  }
  if (problem !== undefined)
    return {
      ok: false,
      error: {
        kind: "contract_violation",
        message: `the replacement as ${conversion.name} does not validate: ${problem}`,
        attempts: result.attempts,
      },
    };
  return { ok: true, out: out as Out, result };
}

/** The refusal of a step under the threshold. */
export function belowThreshold(decision: CompactDecision): BelowThreshold {
  return {
    kind: "below_threshold",
    message: `${decision.tokens} tokens, under the threshold of ${decision.thresholdTokens}`,
    attempts: 0,
  };
}
