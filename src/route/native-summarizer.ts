/**
 * The provider-native summarizer with the exporter it converts the span with:
 * the summarizers layer holds the request, the call and the reading of the
 * answer; the conversion of canonical messages to the Messages API is the
 * formats layer's `toAnthropicRequest`, the same one `export --to anthropic`
 * writes, so the leading messages are the ones a host sending that export sent.
 */
import type { Summarizer } from "../summarizers/types.js";
import {
  anthropicNativeSummarizerWith,
  type AnthropicNativeOptions,
} from "../summarizers/anthropic-native.js";
import { toAnthropicRequest } from "../formats/export/anthropic.js";

export type { AnthropicNativeOptions } from "../summarizers/anthropic-native.js";

/**
 * A summarizer that asks the Anthropic Messages API's own compaction for the
 * summary of the span, on a request with the session's system, tools and
 * leading messages: on demand (the `compaction` parameter, beta
 * `compact-2026-09-04`, any span size) by default, or with `mode: "threshold"`
 * the older `compact_20260112` edit (beta `compact-2026-01-12`, spans of at
 * least 50,000 input tokens).
 */
export function anthropicNativeSummarizer(options: AnthropicNativeOptions): Summarizer {
  return anthropicNativeSummarizerWith(options, toAnthropicRequest);
}
