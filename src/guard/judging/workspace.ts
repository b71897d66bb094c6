/**
 * Where the agent works: the folder a request names as its working
 * directory, so that the anchors and the live state the guard restates after
 * a compaction are the agent's, not those of the folder the guard was
 * started in. Claude Code names it in its environment text (`Primary working
 * directory: …`, older `Working directory: …`: in its system prompt, or in a
 * `role: "system"` element inside `messages`), Codex in its
 * `<environment_context>` (`<cwd>…</cwd>`), pi in its system prompt
 * (`Current working directory: …`). The folder must exist: a path that does
 * not (another machine's, a typo in a prompt) is not taken.
 */
import { stat } from "node:fs/promises";
import { isAbsolute } from "node:path";
import { isText } from "../../model/blocks.js";
import type { WireHistory } from "../reading/history.js";

const LINE =
  /^[ \t-]*(?:Primary working directory|Working directory|Current working directory):[ \t]*(\S.*?)[ \t]*$/gm;
const CWD_TAG = /<cwd>([^<\n]+)<\/cwd>/g;

/** The working directories a text names, in order. */
export function namedFolders(text: string): string[] {
  const out: { at: number; path: string }[] = [];
  for (const m of text.matchAll(LINE)) out.push({ at: m.index, path: m[1]! });
  for (const m of text.matchAll(CWD_TAG)) out.push({ at: m.index, path: m[1]!.trim() });
  return out.sort((a, b) => a.at - b.at).map((x) => x.path);
}

/** How many conversation messages from the start are searched (Codex's environment context opens the history). */
const LEADING_MESSAGES = 4;

/** The texts where an agent names its working directory: the system prompt, system elements, the first messages. */
function environmentTexts(h: WireHistory): string[] {
  const texts: string[] = [];
  let leading = 0;
  for (const it of h.items) {
    if (it.message.role !== "system" && leading++ >= LEADING_MESSAGES) break;
    for (const b of it.message.content) if (isText(b)) texts.push(b.text);
  }
  // Elements the reader keeps opaque (Claude Code's `role: "system"` elements inside `messages`).
  for (const el of h.list) {
    if (typeof el !== "object" || el === null) continue;
    const r = el as { role?: unknown; content?: unknown };
    if (r.role !== "system" || h.wire !== "anthropic-messages") continue;
    if (typeof r.content === "string") texts.push(r.content);
    else if (Array.isArray(r.content))
      for (const b of r.content as { type?: unknown; text?: unknown }[])
        if (b?.type === "text" && typeof b.text === "string") texts.push(b.text);
  }
  return texts;
}

/**
 * The folder the request names as the agent's working directory (the last
 * one named, an environment update coming after the first), when it is an
 * absolute path to a folder on this machine; undefined otherwise.
 */
export async function requestWorkspace(h: WireHistory): Promise<string | undefined> {
  const named = environmentTexts(h).flatMap(namedFolders);
  for (let i = named.length - 1; i >= 0; i--) {
    const path = named[i]!;
    if (!isAbsolute(path)) continue;
    try {
      if ((await stat(path)).isDirectory()) return path;
    } catch {
      // not a folder here
    }
  }
  return undefined;
}
