/**
 * The adapter examples of docs/ADAPTERS.md as runnable modules: each ```js
 * block right after a `<!-- example: NAME -->` comment, between
 * `test/docs/examples/NAME.before.mjs` (the host's fakes) and
 * `NAME.after.mjs` (assertions on what the block made). Used by
 * readme-adapters.test.ts (on the suite's Node) and by the real-client tests
 * (`pi-1`: pi 1.x needs Node 22 and is installed in the clients cache).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Examples run by `npm run test:clients` instead of the unit suite, and why. */
export const CLIENT_EXAMPLES: Readonly<Record<string, string>> = {
  "pi-1": "pi 1.x needs Node >= 22.19 and is installed in the clients cache: npm run test:clients runs it",
};

/** The marked examples of `text`, by name. */
export function readmeExamples(text: string): Map<string, string> {
  const out = new Map<string, string>();
  const re = /<!-- example: ([a-z0-9-]+) -->\s*\n```js\n([\s\S]*?)\n```/g;
  for (const m of text.matchAll(re)) {
    if (out.has(m[1])) throw new Error(`README: two examples named ${m[1]}`);
    out.set(m[1], m[2]);
  }
  return out;
}

/** The ES module that runs example `name` of the repository at `root` (before, the block, after). */
export function exampleModule(root: string, name: string, body: string): string {
  const part = (which: string): string => {
    const f = join(root, "test", "docs", "examples", `${name}.${which}.mjs`);
    return existsSync(f) ? readFileSync(f, "utf8") : "";
  };
  return `${part("before")}\n// --- README ---\n${body}\n// --- after ---\n${part("after")}\n`;
}
