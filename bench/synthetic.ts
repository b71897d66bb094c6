/**
 * Deterministic synthetic coding-agent sessions for the benchmark (never
 * written to disk). A seeded PRNG (mulberry32) drives a session shaped like
 * the real ones in the corpus: a user request, then a tool loop of 1–12
 * exchanges (thinking, short assistant text, one to three parallel calls:
 * Read, Grep, Bash, Edit, Write), tool results whose sizes follow a
 * long-tailed distribution (tens of bytes to ~30 KB), about 6 % errors, and a
 * closing assistant answer. The same (count, seed) always yields the same
 * messages.
 */
import type { Block, Message } from "../src/model/index.js";

export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  "the a to of and in is it that for on with as this be are was by not or from at an can function return value " +
  "error test file path config build module import export const let type interface class async await promise result " +
  "update fix add remove check handle parse read write index cache token message session compact summary round " +
  "user assistant tool call output input line number string array object map set null undefined true false"
).split(" ");
const DIRS = [
  "src",
  "src/engine",
  "src/contract",
  "src/cli",
  "test",
  "lib",
  "internal/strategy",
  "cmd/app",
  "pkg/store",
];
const NAMES = [
  "index",
  "main",
  "util",
  "session",
  "store",
  "parser",
  "writer",
  "reader",
  "config",
  "types",
  "server",
  "client",
];
const EXTS = [".ts", ".go", ".py", ".rs", ".md", ".json"];
const ERRORS = [
  "Error: ENOENT: no such file or directory, open '{path}'",
  "error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'.",
  "FAIL {path}\n  expected 3 to equal 4",
  "Exit code 1\npanic: runtime error: index out of range [{n}] with length {n}",
  "String to replace not found in file.\nString: {word}",
  "Command timed out after 120000ms",
];

export interface SyntheticOptions {
  seed?: number;
}

/** A synthetic session of exactly `count` messages (count >= 2). */
export function syntheticSession(count: number, options: SyntheticOptions = {}): Message[] {
  if (!Number.isInteger(count) || count < 2)
    throw new RangeError(`count must be an integer >= 2, got ${count}`);
  const rand = mulberry32(options.seed ?? 0xc0ffee);
  const int = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const words = (n: number): string => {
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(pick(WORDS));
    return out.join(" ");
  };
  const sentence = (n: number): string => {
    const s = words(n);
    return s.charAt(0).toUpperCase() + s.slice(1) + ".";
  };
  const path = (): string => `${pick(DIRS)}/${pick(NAMES)}${int(0, 40)}${pick(EXTS)}`;
  /** Long-tailed size: most results are small, a few are large. */
  const resultSize = (): number => Math.min(30_000, Math.floor(40 * Math.exp(rand() * 6.5)));
  const codeLines = (bytes: number): string => {
    const lines: string[] = [];
    let size = 0;
    for (let n = 1; size < bytes; n++) {
      const line = `${String(n).padStart(6)}\t${"  ".repeat(int(0, 3))}${words(int(2, 10))}${pick([";", " {", "", ")", ","])}`;
      lines.push(line);
      size += line.length + 1;
    }
    return lines.join("\n");
  };

  const messages: Message[] = [];
  let callId = 0;
  const push = (m: Message): boolean => {
    messages.push(m);
    return messages.length >= count;
  };

  outer: for (let turn = 0; ; turn++) {
    const request = `${sentence(int(6, 30))} Please ${pick(["fix", "update", "refactor", "test", "explain"])} ${path()}${rand() < 0.3 ? `\n\n${sentence(int(10, 60))}` : ""}`;
    if (push({ role: "user", content: [{ type: "text", text: request }] })) break;
    const exchanges = int(1, 12);
    for (let x = 0; x < exchanges; x++) {
      const content: Block[] = [];
      if (rand() < 0.5)
        content.push({
          type: "thinking",
          thinking: sentence(int(10, 120)),
          signature: `sig${turn}x${x}${"A".repeat(int(60, 300))}`,
        });
      if (rand() < 0.4) content.push({ type: "text", text: sentence(int(5, 40)) });
      const calls = rand() < 0.15 ? int(2, 3) : 1;
      const results: Block[] = [];
      for (let c = 0; c < calls; c++) {
        const id = `toolu_${(++callId).toString(36).padStart(8, "0")}`;
        const kind = pick(["Read", "Read", "Read", "Grep", "Bash", "Bash", "Edit", "Edit", "Write"] as const);
        const file = path();
        let input: Record<string, unknown>;
        switch (kind) {
          case "Read":
            input = { file_path: `/repo/${file}` };
            break;
          case "Grep":
            input = { pattern: words(1), path: `/repo/${pick(DIRS)}` };
            break;
          case "Bash":
            input = {
              command: pick([
                "npm test",
                "go test ./...",
                `git diff ${file}`,
                `ls -la ${pick(DIRS)}`,
                "npx tsc -p .",
                "git status",
              ]),
              description: sentence(4),
            };
            break;
          case "Edit":
            input = {
              file_path: `/repo/${file}`,
              old_string: codeLines(int(40, 400)),
              new_string: codeLines(int(40, 600)),
            };
            break;
          case "Write":
            input = { file_path: `/repo/${file}`, content: codeLines(int(200, 4000)) };
            break;
        }
        content.push({ type: "tool_use", id, name: kind, input });
        const isError = rand() < 0.06;
        let text: string;
        if (isError) {
          text = pick(ERRORS)
            .replaceAll("{path}", file)
            .replaceAll("{n}", String(int(1, 99)))
            .replaceAll("{word}", words(3));
          if (rand() < 0.5) text += `\n${codeLines(int(50, 800))}`;
        } else if (kind === "Edit" || kind === "Write") {
          text = `The file /repo/${file} has been ${kind === "Edit" ? "updated" : "created"} successfully.`;
        } else {
          text = codeLines(resultSize());
        }
        results.push({
          type: "tool_result",
          tool_use_id: id,
          content: text,
          ...(isError ? { is_error: true } : {}),
        });
      }
      if (push({ role: "assistant", content })) {
        break outer; // ends with an in-flight call, as a live history can
      }
      if (push({ role: "user", content: results })) break outer;
    }
    if (
      push({
        role: "assistant",
        content: [{ type: "text", text: `${sentence(int(10, 80))}\n\n- ${sentence(8)}\n- ${sentence(8)}` }],
      })
    )
      break;
  }
  return messages;
}
