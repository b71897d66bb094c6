/**
 * pi's extension API as compact-safe's pi extension (extensions/compact-safe.js)
 * uses it, recording what the extension asks for: its default export gets the
 * API and registers a `session_compact` handler, which pi awaits with the
 * event (`compactionEntry`, `fromExtension`) and a context (`sessionManager`,
 * `cwd`, `hasUI`, `ui`). Shared by the hook's tests and `npm run bench:hooks`.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { repoRoot } from "./support.js";

const extensionFile = join(repoRoot, "extensions", "compact-safe.js");

export type Handler = (event: unknown, ctx: unknown) => Promise<void> | void;

export interface FakePi {
  handlers: Map<string, Handler>;
  entries: { customType: string; data: unknown }[];
  messages: { message: { customType: string; content: string; display: boolean }; options: unknown }[];
  notes: { text: string; level: string }[];
  /** Resolves when the extension has recorded its verdict. */
  recorded: Promise<void>;
}

/** The part of pi's extension API the extension uses, recording what it is asked to do. */
export async function loadExtension(options: { stale?: boolean } = {}): Promise<FakePi> {
  let done!: () => void;
  const fake: FakePi = {
    handlers: new Map(),
    entries: [],
    messages: [],
    notes: [],
    recorded: new Promise<void>((r) => (done = r)),
  };
  const api = {
    on: (event: string, handler: Handler) => fake.handlers.set(event, handler),
    appendEntry: (customType: string, data: unknown) => {
      // pi 0.73.1 throws this once the session the extension ran in is gone (print mode has exited).
      if (options.stale) {
        done();
        throw new Error("This extension ctx is stale after session replacement or reload.");
      }
      fake.entries.push({ customType, data });
      done();
    },
    sendMessage: (message: FakePi["messages"][number]["message"], options: unknown) =>
      fake.messages.push({ message, options }),
  };
  const mod = (await import(pathToFileURL(extensionFile).href)) as { default: (pi: unknown) => void };
  mod.default(api);
  return fake;
}

export function context(fake: FakePi, sessionFile: string | undefined, cwd: string) {
  return {
    cwd,
    hasUI: true,
    sessionManager: { getSessionFile: () => sessionFile },
    ui: { notify: (text: string, level: string) => fake.notes.push({ text, level }) },
  };
}

/** The id of the last compaction entry in a pi session's text. */
export function lastCompaction(text: string): Record<string, unknown> {
  const lines = text
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return lines.filter((l) => l.type === "compaction").at(-1)!;
}
