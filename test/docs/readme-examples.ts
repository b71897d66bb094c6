/**
 * The adapter examples of docs/ADAPTERS.md (the README points there): each is
 * a ```js block right after a `<!-- example: NAME -->` comment. As a module
 * it runs as `test/docs/examples/NAME.before.mjs` (the host's own fakes),
 * then the block as printed, then `NAME.after.mjs` (assertions on what the
 * block made). Used by readme-adapters.test.ts and by the checks of the
 * Responses example against each openai major (responses-consumer.ts),
 * and by the real-client tests (`pi-1`: pi 1.x needs Node 22 and is installed
 * in the clients cache).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "../support.js";

/** Examples run by `npm run test:clients` instead of the unit suite, and why. */
export const CLIENT_EXAMPLES: Readonly<Record<string, string>> = {
  "pi-1": "pi 1.x needs Node >= 22.19 and is installed in the clients cache: npm run test:clients runs it",
};

/** The marked examples of a document, by name. */
export function readmeExamples(text: string): Map<string, string> {
  const out = new Map<string, string>();
  const re = /<!-- example: ([a-z0-9-]+) -->\s*\n```js\n([\s\S]*?)\n```/g;
  for (const m of text.matchAll(re)) {
    if (out.has(m[1])) throw new Error(`README: two examples named ${m[1]}`);
    out.set(m[1], m[2]);
  }
  return out;
}

/** The examples of docs/ADAPTERS.md, by name. */
export function adapterExamples(): Map<string, string> {
  return readmeExamples(readFileSync(join(repoRoot, "docs", "ADAPTERS.md"), "utf8"));
}

/** The example `name` as one ES module: its before-file, the block as printed, its after-file. */
export function exampleModule(name: string, body: string): string {
  const part = (which: string): string => {
    const f = join(repoRoot, "test", "docs", "examples", `${name}.${which}.mjs`);
    return existsSync(f) ? readFileSync(f, "utf8") : "";
  };
  return `${part("before")}\n// --- README ---\n${body}\n// --- after ---\n${part("after")}\n`;
}
