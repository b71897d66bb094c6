/** `compact-safe anchor show|set TEXT|clear`: the user's pinned anchors, restated verbatim in every checkpoint. */
import type { Command } from "commander";
import { clearAnchors, readAnchors, writeAnchors } from "../../workspace/index.js";
import { err, out, printJson, printJsonData, writeData } from "../output.js";

interface AnchorOptions {
  workspace?: string;
  json?: boolean;
}

export function register(program: Command): void {
  const anchor = program
    .command("anchor")
    .summary("show, set or clear the pinned anchors of a workspace")
    .description(
      "Anchors are text the user pins (rules, decisions) that every checkpoint restates verbatim. " +
        "They live in WORKSPACE/.codewhale/anchors.md; the legacy .deepseek/anchors.md is read when " +
        "that file is absent. A symbolic link, anything but a regular file, or a file over 64 KiB is " +
        "refused. Control characters (escape sequences included) are shown escaped, e.g. \\x1b, " +
        "and restated so in checkpoints.\n\n" +
        "Exit codes: 0 ok; 2 usage or input error (e.g. a symbolic link).",
    );
  anchor
    .command("show")
    .description("print the pinned anchors (nothing pinned: a note on stderr, exit 0)")
    .option("--workspace <dir>", "the workspace (default: the current folder)")
    .option("--json", "print { file, text } (both null when nothing is pinned)")
    .action(async (o: AnchorOptions) => {
      const a = await readAnchors(o.workspace ?? process.cwd());
      // The user's own pinned text is data (checkpoints restate it verbatim): printed as it is, not redacted.
      if (o.json) printJsonData({ file: a?.file ?? null, text: a?.text ?? null });
      else if (a === null) err(`compact-safe: no anchors pinned in ${o.workspace ?? process.cwd()}`);
      else {
        // The user's own pinned text, data (not redacted): its control characters are escaped (`\x1b`) as it is
        // read, so printed as is it cannot drive the terminal.
        writeData(a.text.endsWith("\n") ? a.text : `${a.text}\n`);
        if (a.escaped)
          err(
            `compact-safe: ${a.escaped} control character${a.escaped === 1 ? "" : "s"} shown escaped (checkpoints restate them so)`,
          );
      }
    });
  anchor
    .command("set")
    .description("pin TEXT as the anchors (replaces .codewhale/anchors.md)")
    .argument("<text>", "the anchors, verbatim")
    .option("--workspace <dir>", "the workspace (default: the current folder)")
    .option("--json", "print { file }")
    .action(async (text: string, o: AnchorOptions) => {
      const file = await writeAnchors(o.workspace ?? process.cwd(), text);
      if (o.json) printJson({ file });
      else out(`anchors pinned in ${file}`);
    });
  anchor
    .command("clear")
    .description("remove the pinned anchors (.codewhale/anchors.md and the legacy .deepseek/anchors.md)")
    .option("--workspace <dir>", "the workspace (default: the current folder)")
    .option("--json", "print { removed: [files] }")
    .action(async (o: AnchorOptions) => {
      const removed = await clearAnchors(o.workspace ?? process.cwd());
      if (o.json) printJson({ removed });
      else out(removed.length === 0 ? "no anchors were pinned" : `removed ${removed.join(", ")}`);
    });
}
