/**
 * The README's adapter examples, run as they are printed. Each example is a
 * ```js block right after a `<!-- example: NAME -->` comment in the README. It
 * runs as one ES module: `test/docs/examples/NAME.before.mjs` (the host's own
 * fakes standing in for a real model: a mock language model, a fake chat
 * model, pi's faux provider), then the block, then
 * `test/docs/examples/NAME.after.mjs` (assertions on what the block made).
 * The module is written under `dist/` so that `compact-safe/NAME` resolves
 * through the package's own `exports`, as it does for a user.
 *
 * Every adapter subpath in package.json `exports` must have its example.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join, resolve } from "node:path";
import { adapterExamples, CLIENT_EXAMPLES, exampleModule } from "./readme-examples.js";

const root = resolve(import.meta.dirname, "..", "..", "..");
const examples = adapterExamples();
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  exports: Record<string, unknown>;
};
const adapters = Object.entries(pkg.exports)
  .filter(([, v]) => JSON.stringify(v).includes("/adapters/"))
  .map(([k]) => k.slice(2));

test("every adapter subpath export has a README example", () => {
  for (const name of adapters) {
    if (!existsSync(join(root, "dist", "src", "adapters", `${name}.js`))) continue; // not built in this tree
    assert.ok(examples.has(name), `README: no <!-- example: ${name} --> block for compact-safe/${name}`);
  }
});

for (const [name, body] of examples) {
  const skip = CLIENT_EXAMPLES[name];
  test(`README example ${name} runs as printed`, { skip }, () => {
    const dir = join(root, "dist", "test", "docs", "readme-examples");
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${name}.mjs`);
    writeFileSync(file, exampleModule(name, body));
    const r = spawnSync(process.execPath, [file], { cwd: root, encoding: "utf8", timeout: 60_000 });
    assert.equal(r.status, 0, `example ${name} (${file}) exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  });
}
