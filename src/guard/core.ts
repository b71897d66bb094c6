/**
 * The guard's core (placeholder until the wire readers land: every request
 * passes through unchanged).
 */
import type { GuardCore, GuardCoreOptions, GuardOutcome, WireRequest } from "./types.js";

export function createGuardCore(_options: GuardCoreOptions = {}): GuardCore {
  return {
    async handle(request: WireRequest): Promise<GuardOutcome> {
      return { body: request.body, changed: false };
    },
    async close(): Promise<void> {},
  };
}
