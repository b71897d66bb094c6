/**
 * The `@anthropic-ai/sdk` module (an optional peer dependency), loaded once, on
 * first use. Its own module, imported by the Anthropic summarizers at run time
 * only: no public declaration names it, so a consumer without the SDK
 * type-checks.
 */
import { importOptional } from "../model/optional-package.js";

let sdk: Promise<typeof import("@anthropic-ai/sdk")> | undefined;

/** The SDK module; a `MissingPackageError` when it is not installed (and a later call tries again). */
export function loadSdk(): Promise<typeof import("@anthropic-ai/sdk")> {
  sdk ??= importOptional("@anthropic-ai/sdk", "the anthropic summarizer", () => import("@anthropic-ai/sdk"));
  sdk.catch(() => (sdk = undefined));
  return sdk;
}
