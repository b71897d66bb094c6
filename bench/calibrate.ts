/**
 * Fits the fast estimator's constants (`FAST_CALIBRATION`) to the prompt
 * sizes billed in the Claude Code sessions of the corpus, and checks the fit
 * by leaving one session out at a time.
 *
 *   npm run build && node dist/bench/calibrate.js [corpus-dir]
 *
 * The estimate is linear in the constants, so each request is reduced once to
 * its features (messages, blocks, images, ASCII characters of prose and of
 * payloads, non-ASCII code units) and the grid search scores every candidate
 * from those. The objective is the mean over sessions of the median absolute percentage
 * error
 * with the per-session overhead calibrated from the first request after
 * each compaction (see `billed.ts`). The chosen constants are then re-checked with the real
 * estimator by `npm run bench`.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { importFile } from "../src/formats/index.js";
import type { Block, Message } from "../src/model/index.js";
import { FAST_CALIBRATION, blockChars, isProseBlock, type FastCalibration } from "../src/engine/tokens.js";
import { billedRequests, type BilledRequest } from "./billed.js";
import { median } from "./harness.js";

interface Features {
  msgs: number;
  blocks: number;
  tools: number;
  images: number;
  prose: number;
  code: number;
  other: number;
}

const zero = (): Features => ({ msgs: 0, blocks: 0, tools: 0, images: 0, prose: 0, code: 0, other: 0 });
function add(a: Features, b: Features, sign = 1): void {
  a.msgs += sign * b.msgs;
  a.blocks += sign * b.blocks;
  a.tools += sign * b.tools;
  a.images += sign * b.images;
  a.prose += sign * b.prose;
  a.code += sign * b.code;
  a.other += sign * b.other;
}

function blockFeatures(b: Block, f: Features): void {
  f.blocks++;
  if (b.type === "image" || b.type === "image_url") {
    f.images++;
    return;
  }
  if (b.type === "tool_use" || b.type === "tool_result") f.tools++;
  // The same counts as the fast estimator's (a tool input counted as JSON, not stringified).
  const { ascii, other } = blockChars(b);
  if (isProseBlock(b)) f.prose += ascii;
  else f.code += ascii;
  f.other += other;
  if (b.type === "tool_result")
    for (const c of (b as { content_blocks?: Block[] }).content_blocks ?? []) blockFeatures(c, f);
}

const cache = new WeakMap<Message, { all: Features; thinking: Features }>();
function messageFeatures(m: Message): { all: Features; thinking: Features } {
  const hit = cache.get(m);
  if (hit) return hit;
  const all = zero();
  const thinking = zero();
  all.msgs = 1;
  for (const b of m.content) {
    const f = zero();
    blockFeatures(b, f);
    add(all, f);
    if (b.type === "thinking" || b.type === "redacted_thinking") add(thinking, f);
  }
  const out = { all, thinking };
  cache.set(m, out);
  return out;
}

function requestFeatures(r: BilledRequest): Features {
  const f = zero();
  let turn = -1;
  for (let i = r.context.length - 1; i >= 0; i--) {
    const m = r.context[i]!;
    if (m.role === "user" && m.content.some((b) => b.type !== "tool_result")) {
      turn = i;
      break;
    }
  }
  r.context.forEach((m, i) => {
    const mf = messageFeatures(m);
    add(f, mf.all);
    if (r.priorThinking === "drop" && i < turn && m.role !== "user" && m.role !== "system")
      add(f, mf.thinking, -1);
  });
  return f;
}

const estimate = (f: Features, c: FastCalibration): number =>
  f.msgs * c.perMessage +
  f.blocks * c.perBlock +
  f.tools * c.perToolBlock +
  f.images * c.perImage +
  f.prose / c.proseCharsPerToken +
  f.code / c.codeCharsPerToken +
  f.other * c.nonAsciiTokensPerChar;

interface Session {
  file: string;
  billed: number[];
  segment: number[];
  features: Features[];
}

function sessionApes(s: Session, c: FastCalibration): number[] {
  const est = s.features.map((f) => estimate(f, c));
  const out: number[] = [];
  let overhead = 0;
  for (let i = 0; i < est.length; i++) {
    if (i === 0 || s.segment[i] !== s.segment[i - 1]) overhead = Math.max(0, s.billed[i]! - est[i]!);
    else out.push(Math.abs(est[i]! + overhead - s.billed[i]!) / s.billed[i]!);
  }
  return out;
}

function pooled(sessions: readonly Session[], c: FastCalibration): number {
  return median(sessions.flatMap((s) => sessionApes(s, c)));
}

function range(from: number, to: number, step: number): number[] {
  const out: number[] = [];
  for (let v = from; v <= to + 1e-9; v += step) out.push(Math.round(v * 1000) / 1000);
  return out;
}

/** The objective: the mean of the per-session medians (so that short sessions weigh as much as long ones). */
function objective(sessions: readonly Session[], c: FastCalibration): number {
  let sum = 0;
  for (const s of sessions) sum += median(sessionApes(s, c));
  return sum / sessions.length;
}

function fit(sessions: readonly Session[]): { c: FastCalibration; score: number } {
  let best = { c: FAST_CALIBRATION, score: objective(sessions, FAST_CALIBRATION) };
  for (const prose of range(3.0, 5.0, 0.2))
    for (const code of range(2.6, 3.6, 0.1))
      for (const perBlock of [0, 3, 6])
        for (const perToolBlock of range(0, 80, 8))
          for (const perMessage of [0, 4, 8])
            for (const nonAscii of [0.5, 0.9]) {
              const c: FastCalibration = {
                ...FAST_CALIBRATION,
                proseCharsPerToken: prose,
                codeCharsPerToken: code,
                perBlock,
                perToolBlock,
                perMessage,
                nonAsciiTokensPerChar: nonAscii,
              };
              const score = objective(sessions, c);
              if (score < best.score) best = { c, score };
            }
  return best;
}

const pct = (x: number): string => `${(100 * x).toFixed(1)} %`;

async function main(): Promise<void> {
  const dir = process.argv[2] ?? new URL("../../../shared/corpus/claude-code/", import.meta.url).pathname;
  const sessions: Session[] = [];
  for (const name of readdirSync(dir)
    .filter((f) => f.endsWith(".jsonl"))
    .sort()) {
    const { entries } = await importFile(join(dir, name));
    const reqs = billedRequests(entries);
    sessions.push({
      file: name,
      billed: reqs.map((r) => r.billed),
      segment: reqs.map((r) => r.compactions),
      features: reqs.map(requestFeatures),
    });
  }
  const cur = FAST_CALIBRATION;
  console.log(
    `current FAST_CALIBRATION: pooled median APE ${pct(pooled(sessions, cur))}, mean of per-session medians ${pct(objective(sessions, cur))}`,
  );
  for (const s of sessions) console.log(`  ${s.file.padEnd(36)} ${pct(median(sessionApes(s, cur)))}`);
  const all = fit(sessions);
  console.log(
    `best fit on all sessions: mean of per-session medians ${pct(all.score)}, pooled ${pct(pooled(sessions, all.c))}`,
    JSON.stringify(all.c),
  );
  for (const s of sessions) console.log(`  ${s.file.padEnd(36)} ${pct(median(sessionApes(s, all.c)))}`);
  console.log("leave-one-session-out (fit on the others, score the one left out):");
  const held: number[] = [];
  for (const s of sessions) {
    const rest = sessions.filter((x) => x !== s);
    const f = fit(rest);
    const apes = sessionApes(s, f.c);
    held.push(...apes);
    console.log(
      `  ${s.file.padEnd(36)} ${pct(median(apes))}  (prose ${f.c.proseCharsPerToken}, code ${f.c.codeCharsPerToken}, block ${f.c.perBlock}, tool ${f.c.perToolBlock}, msg ${f.c.perMessage}, nonascii ${f.c.nonAsciiTokensPerChar})`,
    );
  }
  console.log(`leave-one-session-out pooled median APE: ${pct(median(held))}`);
}

await main();
