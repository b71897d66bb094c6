/** Paths and helpers shared by the test suites. */
import { existsSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root (tests run from dist/, two or three levels down). */
export const repoRoot = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json"))) {
    const up = dirname(dir);
    if (up === dir) throw new Error("repository root not found");
    dir = up;
  }
  return dir;
})();

/** The shared folder beside the repository (corpus, peers, spec); override with COMPACT_SAFE_SHARED. */
export const sharedDir = resolve(process.env.COMPACT_SAFE_SHARED ?? join(repoRoot, "..", "shared"));
if (!existsSync(join(sharedDir, "corpus"))) {
  throw new Error(
    `the shared corpus is not at ${sharedDir}/corpus: the tests read real sessions from ../shared beside the clone; ` +
      "set COMPACT_SAFE_SHARED to its folder",
  );
}

export const corpusDir = join(sharedDir, "corpus");
export const peerMatrix = join(sharedDir, "peers", "codewhale-matrix.json");
export const projectMatrix = join(repoRoot, "contract", "fixtures", "matrix.json");
export const cliPath = join(repoRoot, "dist", "src", "cli", "main.js");

/** Every session file of the corpus (sidecars and licences excluded), as paths. */
export function corpusFiles(): string[] {
  const out: string[] = [];
  for (const sub of readdirSync(corpusDir, { withFileTypes: true })) {
    if (!sub.isDirectory() || sub.name === "LICENSES") continue;
    for (const f of readdirSync(join(corpusDir, sub.name))) {
      if (f.endsWith(".metadata.json")) continue;
      out.push(join(corpusDir, sub.name, f));
    }
  }
  return out.sort();
}

/** Deep-freezes a value (to prove that a function never mutates its input). */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as object)) deepFreeze(v);
  }
  return value;
}
