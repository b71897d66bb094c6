/**
 * The Node versions a benchmark runs under: the machine's own, then the pinned Node 22 and 24 that
 * users run (scripts/node-version.mjs installs each once into a cache folder outside the tree).
 * `--node this` on the command line: the machine's alone. A Node that cannot be installed (no
 * registry) is named in one line and left out.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The Node versions users run beside the machine's own (scripts/node-version.mjs pins them). */
export const USER_NODES = ["22", "24"];

export interface NodeBinary {
  bin: string;
  /** As `node --version` prints it (`v24.22.3`). */
  version: string;
}

const repoRoot = join(fileURLToPath(import.meta.url), "..", "..", "..");

export function nodesToMeasure(
  argv: readonly string[],
  say: (line: string) => void = (line) => console.log(line),
): NodeBinary[] {
  const nodes = [{ bin: process.execPath, version: process.version }];
  if (argv.includes("--node") && argv[argv.indexOf("--node") + 1] === "this") return nodes;
  const script = join(repoRoot, "scripts", "node-version.mjs");
  for (const major of USER_NODES) {
    let bin: string;
    try {
      bin = execFileSync(process.execPath, [script, major], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      }).trim();
    } catch (e) {
      const why = (e as { stderr?: string }).stderr?.trim() || (e as Error).message.split("\n")[0];
      say(`  Node ${major}: not measured (${why})`);
      continue;
    }
    const version = execFileSync(bin, ["--version"], { encoding: "utf8" }).trim();
    if (!nodes.some((n) => n.version === version)) nodes.push({ bin, version });
  }
  return nodes;
}
