/** Option parsers shared by the commands (each throws a one-line usage error). */
import { MAX_TIMEOUT_MS } from "../summarizers/llm-common.js";
import { usageError } from "./errors.js";

/** A parser of a whole number of at least `min` (1: "a positive whole number", 0: "a whole number (0 or more)"). */
function wholeAtLeast(name: string, min: 0 | 1) {
  const expected = min === 1 ? "a positive whole number" : "a whole number (0 or more)";
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min)
      throw usageError(`${name}: expected ${expected}, got ${JSON.stringify(value)}`);
    return n;
  };
}

export const positiveInt = (name: string) => wholeAtLeast(name, 1);
export const wholeNumber = (name: string) => wholeAtLeast(name, 0);

export function percent(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n <= 0 || n > 100)
    throw usageError(`--threshold: expected a percentage in (0, 100], got ${JSON.stringify(value)}`);
  return n;
}

/** The longest `--timeout`: Node's longest timer (about 24.8 days). */
const MAX_TIMEOUT_SECONDS = Math.floor(MAX_TIMEOUT_MS / 1000);

/** `--timeout SECONDS`: a positive number of seconds (fractions allowed, at least 1 ms), returned in ms. */
export function timeoutSeconds(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0.001 || n > MAX_TIMEOUT_SECONDS)
    throw usageError(
      `--timeout: expected a positive number of seconds (0.001 to ${MAX_TIMEOUT_SECONDS}), got ${JSON.stringify(value)}`,
    );
  return Math.round(n * 1000);
}
