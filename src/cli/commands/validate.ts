/**
 * `compact-safe validate`: the TypeScript validators over fixture matrices
 * (same output and exit codes as `contract/validate_survival_contract.mjs`),
 * or over one compaction given as ORIGINAL and REPLACEMENT message files.
 */
import { readFile } from "node:fs/promises";
import type { Command } from "commander";
import { Option } from "commander";
import {
  parseMatrix,
  runMatrix,
  validateSurvivalContract,
  MatrixError,
  type Matrix,
} from "../../contract/index.js";
import type { CompactionPath } from "../../model/index.js";
import { CliError, EXIT, usageError } from "../errors.js";
import { loadMessageFile, requireFile } from "../io.js";
import { err, out, printJson, style } from "../output.js";
import { readStdin, STDIN_NAME, STDIO } from "../stdin.js";
import { escapeControlCharacters } from "../../workspace/index.js";

interface ValidateOptions {
  matrix?: string[];
  anchors?: string;
  anchorsFile?: string;
  path: CompactionPath;
  json?: boolean;
}

async function loadMatrixFile(file: string): Promise<Matrix> {
  // `-`: the matrix from standard input, as every command reads a session from it.
  if (file === STDIO) return parseMatrix((await readStdin()).toString("utf8"), STDIN_NAME);
  await requireFile(file);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    throw new MatrixError(
      `${file}: cannot read file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
  return parseMatrix(text, file);
}

async function runMatrices(files: string[]): Promise<number> {
  const matrices: [string, Matrix][] = [];
  for (const file of files) {
    // Shown as given, like the .mjs validator.
    try {
      matrices.push([file, await loadMatrixFile(file)]);
    } catch (e) {
      if (e instanceof MatrixError) throw new CliError(e.message, EXIT.USAGE);
      throw e;
    }
  }
  let agreed = 0;
  let disagreed = 0;
  for (const [display, matrix] of matrices) {
    for (const r of runMatrix(matrix)) {
      if (r.agrees) agreed++;
      else {
        disagreed++;
        out(`DISAGREE ${display} ${r.id}: ${r.problem}`);
      }
    }
  }
  out(`ok ${agreed} survival-contract fixtures`);
  return disagreed === 0 ? EXIT.OK : EXIT.VIOLATION;
}

async function runPair(original: string, replacement: string, o: ValidateOptions): Promise<number> {
  if (o.anchors !== undefined && o.anchorsFile !== undefined)
    throw usageError("give --anchors or --anchors-file, not both");
  let anchors = o.anchors;
  if (o.anchorsFile !== undefined) {
    await requireFile(o.anchorsFile);
    try {
      anchors = await readFile(o.anchorsFile, "utf8");
    } catch (e) {
      throw usageError(
        `${o.anchorsFile}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (e as Error).message}`,
      );
    }
  }
  let a = await loadMessageFile(original);
  let b = await loadMessageFile(replacement);
  // Read both sides the same way: a request body exported by `export --to anthropic`
  // on one side means the other side is an Anthropic body too.
  if (a.via === "anthropic" && b.via === "canonical") b = await loadMessageFile(replacement, "anthropic");
  if (b.via === "anthropic" && a.via === "canonical") a = await loadMessageFile(original, "anthropic");
  // Compared as checkpoints restate them: with control characters escaped, as `readAnchors` gives them.
  if (anchors !== undefined) anchors = escapeControlCharacters(anchors).text;
  const verdict = validateSurvivalContract(a.messages, b.messages, { anchors, path: o.path });
  if (o.json) printJson({ valid: verdict.valid, reason: verdict.reason });
  else if (verdict.valid)
    out(`${style.green("valid")}: ${replacement} keeps what must survive of ${original} (path ${o.path})`);
  else err(`compact-safe: contract violation: ${verdict.reason}`);
  return verdict.valid ? EXIT.OK : EXIT.VIOLATION;
}

export function register(program: Command, setExit: (code: number) => void): void {
  program
    .command("validate")
    .summary("check a compaction (or fixture matrices) against the survival contract")
    .description(
      "Check that REPLACEMENT keeps what the survival contract requires of ORIGINAL. " +
        "ORIGINAL and REPLACEMENT are JSON message arrays, { messages }, Anthropic request " +
        "bodies { system, messages } as written by `export --to anthropic`, or Responses request " +
        "bodies { input } as written by `export --to responses`; either one (not both) may be " +
        "- for standard input. " +
        "With --matrix, run the validators over fixture matrices instead (same output and exit " +
        "codes as `node contract/validate_survival_contract.mjs`).\n\n" +
        "Exit codes: 0 valid (every case agrees), 1 violation (a case disagrees), 2 usage or input error.",
    )
    .argument("[original]", "the history before compaction (- for standard input)")
    .argument("[replacement]", "the history after compaction (- for standard input)")
    .option("--matrix <files...>", "fixture matrices (schema version 2) to run")
    .option("--anchors <text>", "pinned anchors that the checkpoint must restate verbatim")
    .option("--anchors-file <file>", "read the anchors from a file")
    .addOption(
      new Option("--path <path>", "compaction path").choices(["summary", "prune-only"]).default("summary"),
    )
    .option("--json", 'print { "valid": bool, "reason": string|null }')
    .action(async (original: string | undefined, replacement: string | undefined, o: ValidateOptions) => {
      if (o.matrix !== undefined) {
        if (original !== undefined)
          throw usageError("give either --matrix FILE... or ORIGINAL REPLACEMENT, not both");
        setExit(await runMatrices(o.matrix));
        return;
      }
      if (original === undefined || replacement === undefined) {
        throw usageError(
          "validate needs ORIGINAL and REPLACEMENT (or --matrix FILE...); see `compact-safe validate --help`",
        );
      }
      if (original === "-" && replacement === "-")
        throw usageError("standard input can be ORIGINAL or REPLACEMENT, not both");
      setExit(await runPair(original, replacement, o));
    });
}
