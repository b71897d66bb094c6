#!/usr/bin/env node
// Keeps N cores busy (a busy loop in each of N worker threads) until stopped, or for --seconds S:
// the `stress`-like load under which `npm test` must pass (issue 26 item 5).
//
//   node scripts/load.mjs [--cores N] [--seconds S]        # N: every core (os.availableParallelism())
//   node scripts/load.mjs --cores 2 -- <command> [args...] # the load while the command runs; exits with its status
//   node scripts/load.mjs --private-tmp -- <command>        # ... with TMPDIR a fresh folder of its own, checked after
//
// `npm run test:loaded` runs `npm test` under it (every core, a private TMPDIR). It prints one line
// when the load starts and one when it ends, with the command's wall-clock time. With
// `--private-tmp` the command's TMPDIR (what os.tmpdir() returns in it and its children) is a
// fresh folder: what the command leaves in it is listed after, the folder removed, and anything
// left makes the exit status 1 (a command that passed otherwise: "leave nothing behind in the
// system temp folder", issue 26 item 5).
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { Worker } from "node:worker_threads";

const argv = process.argv.slice(2);
const dash = argv.indexOf("--");
const opts = dash === -1 ? argv : argv.slice(0, dash);
const command = dash === -1 ? [] : argv.slice(dash + 1);
const num = (name, fallback) => {
  const i = opts.indexOf(name);
  if (i === -1) return fallback;
  const n = Number(opts[i + 1]);
  if (!Number.isFinite(n) || n <= 0) {
    console.error(`load: ${name} needs a positive number`);
    process.exit(2);
  }
  return n;
};
const cores = Math.floor(num("--cores", availableParallelism()));
const seconds = num("--seconds", command.length > 0 ? Infinity : 600);
const privateTmp =
  opts.includes("--private-tmp") && command.length > 0
    ? mkdtempSync(join(tmpdir(), "compact-safe-load-"))
    : null;

const busy = `
  const { parentPort } = require("node:worker_threads");
  let x = 0;
  for (;;) { for (let i = 0; i < 1e7; i++) x = (x * 31 + i) | 0; if (x === 0.5) parentPort.postMessage(x); }
`;
const workers = Array.from({ length: cores }, () => new Worker(busy, { eval: true }));
const started = Date.now();
console.error(
  `load: ${cores} busy thread(s) started${Number.isFinite(seconds) ? ` for at most ${seconds} s` : ""}`,
);

/** What the command left in its private TMPDIR (removed after): 1 when anything, else `code`. */
function checkTmp(code) {
  if (privateTmp === null) return code;
  let left = [];
  try {
    left = readdirSync(privateTmp).sort();
  } catch {
    /* gone */
  }
  rmSync(privateTmp, { recursive: true, force: true });
  if (left.length === 0) {
    console.error("load: the command left nothing in its temp folder");
    return code;
  }
  console.error(
    `load: the command left ${left.length} entr${left.length === 1 ? "y" : "ies"} in its temp folder: ${left.join(", ")}`,
  );
  return code === 0 ? 1 : code;
}

function stop(code) {
  code = checkTmp(code);
  for (const w of workers) void w.terminate();
  console.error(`load: stopped after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.exit(code);
}
if (Number.isFinite(seconds)) setTimeout(() => stop(command.length > 0 ? 124 : 0), seconds * 1000).unref?.();
process.on("SIGINT", () => stop(130));
process.on("SIGTERM", () => stop(143));

if (command.length > 0) {
  const env =
    privateTmp === null
      ? process.env
      : { ...process.env, TMPDIR: privateTmp, TMP: privateTmp, TEMP: privateTmp };
  const child = spawn(command[0], command.slice(1), { stdio: "inherit", env });
  child.on("exit", (code, signal) => {
    console.error(
      `load: ${command.join(" ")} ended (${signal ?? `exit ${code}`}) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    stop(code ?? 1);
  });
  child.on("error", (e) => {
    console.error(`load: cannot run ${command[0]}: ${e.message}`);
    stop(2);
  });
}
