#!/usr/bin/env node
/**
 * Installs a pinned Node.js of a given major version (22 or 24) from the npm registry (the
 * `node-<platform>-<arch>` package, which carries the official binary) into a cache folder outside
 * the tree, and prints the path of its `node` binary. Used by `.ci/run` to run the suite on Node 22
 * and 24 beside the machine's own Node (20), and by the real-client tests for hosts that want
 * Node ≥ 22.19 (pi 1.x).
 *
 * Folder: `$COMPACT_SAFE_NODE_DIR`, else `$XDG_CACHE_HOME/compact-safe/node`,
 * else `~/.cache/compact-safe/node`; one subfolder per version, reused once its
 * binary answers `--version` with that version.
 *
 * Usage: `node scripts/node-version.mjs 24` → prints `/…/bin/node`; exit 1 with a
 * one-line reason when the install fails, 2 for a major version without a pin.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** The version pinned for each major version. */
export const NODE_VERSIONS = { 22: "22.23.3", 24: "24.22.3" };
export const NODE22_VERSION = NODE_VERSIONS[22];

function root() {
  return (
    process.env.COMPACT_SAFE_NODE_DIR ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "compact-safe", "node")
  );
}

function answers(bin, version) {
  try {
    return execFileSync(bin, ["--version"], { encoding: "utf8" }).trim() === `v${version}`;
  } catch {
    return false;
  }
}

/** Installs (once) and returns the path of the Node binary of `version` (a full version, e.g. 24.22.3). */
export function ensureNode(version) {
  const pkg = `node-${process.platform}-${process.arch}`;
  const dir = join(root(), version);
  const bin = join(dir, "node_modules", pkg, "bin", process.platform === "win32" ? "node.exe" : "node");
  if (existsSync(bin) && answers(bin, version)) return bin;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ private: true, description: `compact-safe: Node ${version}` }),
  );
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  execFileSync(npm, ["install", "--no-audit", "--no-fund", "--loglevel=error", `${pkg}@${version}`], {
    cwd: dir,
    stdio: ["ignore", "ignore", "inherit"],
  });
  if (!answers(bin, version)) throw new Error(`${bin} does not answer --version with v${version}`);
  return bin;
}

/** Installs (once) and returns the path of the pinned Node 22 binary. */
export function ensureNode22() {
  return ensureNode(NODE22_VERSION);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const major = process.argv[2] ?? "22";
  const version = NODE_VERSIONS[major];
  if (version === undefined) {
    process.stderr.write(
      `node-version: no pinned Node ${major} (pinned: ${Object.keys(NODE_VERSIONS).join(", ")})\n`,
    );
    process.exit(2);
  }
  try {
    process.stdout.write(`${ensureNode(version)}\n`);
  } catch (error) {
    process.stderr.write(
      `node-version: could not install Node ${version}: ${error.message.split("\n")[0]}\n`,
    );
    process.exit(1);
  }
}
