/**
 * What each provider receives for a message array, measured: the request
 * bodies that the exporters build, serialized, and estimated in tokens by the
 * caller's text estimator. The engine's `requestSizes` option takes this, so
 * that shrinking is judged on the requests themselves (a replacement the
 * estimate calls smaller can still make a body larger: images, call framing,
 * results carried as text).
 *
 * Only the requests the messages can be sent as are measured: a history that
 * holds a provider's own compaction goes only to that provider (an Anthropic
 * `compaction` block: the Anthropic body; an OpenAI `compaction` item: the
 * Responses body), and the exporters refuse it for any other, so measuring
 * the others would turn a compaction into an error. A history that holds
 * both has no request that carries it whole: none is measured (the engine's
 * own estimate still judges it).
 */
import type { Message } from "../../model/index.js";
import { compactionProvidersIn } from "../../model/provider-compaction.js";
import { toAnthropicRequest } from "./anthropic.js";
import { toOpenAIRequest } from "./openai.js";
import { toResponsesRequest } from "../../wire/responses.js";

/** The requests measured, by name (only those the messages can be sent as; see the module comment). */
export type ProviderRequestTokens = {
  anthropic?: number;
  openai?: number;
  responses?: number;
};

/** Estimated tokens of the request bodies; `textTokens` is a text estimator (e.g. `fastEstimator.text`). */
export function providerRequestTokens(
  messages: readonly Message[],
  textTokens: (text: string) => number,
): Record<string, number> & ProviderRequestTokens {
  const held = compactionProvidersIn(messages);
  const size = (body: unknown): number => textTokens(JSON.stringify(body));
  if (held.size === 0)
    return { anthropic: size(toAnthropicRequest(messages)), openai: size(toOpenAIRequest(messages)) };
  if (held.size > 1) return {};
  return held.has("anthropic")
    ? { anthropic: size(toAnthropicRequest(messages)) }
    : { responses: size(toResponsesRequest(messages)) };
}
