/**
 * What each provider receives for a message array, measured: the Anthropic
 * and the OpenAI request bodies that the exporters build, serialized, and
 * estimated in tokens by the caller's text estimator. The engine's
 * `requestSizes` option takes this, so that shrinking is judged on the
 * requests themselves (a replacement the estimate calls smaller can still
 * make a body larger: images, call framing, results carried as text).
 */
import type { Message } from "../../model/index.js";
import { toAnthropicRequest } from "./anthropic.js";
import { toOpenAIRequest } from "./openai.js";

/** A type, not an interface, so that it is a `Record<string, number>` as the engine's `requestSizes` takes. */
export type ProviderRequestTokens = {
  anthropic: number;
  openai: number;
};

/** Estimated tokens of both request bodies; `textTokens` is a text estimator (e.g. `fastEstimator.text`). */
export function providerRequestTokens(
  messages: readonly Message[],
  textTokens: (text: string) => number,
): ProviderRequestTokens {
  return {
    anthropic: textTokens(JSON.stringify(toAnthropicRequest(messages))),
    openai: textTokens(JSON.stringify(toOpenAIRequest(messages))),
  };
}
