/**
 * A real pi 0.73.1 agent session for the pi adapter's tests, made through
 * pi's own SDK (`createAgentSession`) with pi's own extension loading
 * (`DefaultResourceLoader`, extension factories) and pi-ai's `faux` provider
 * standing in for the model. Everything lives in a temporary folder (HOME,
 * agent dir, cwd, sessions); PI_OFFLINE is set, and `fetch` throws, so that
 * nothing reaches the network; jiti's file cache is off, so that nothing is
 * left in the system temp folder.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentSession, ExtensionFactory } from "@mariozechner/pi-coding-agent";
import type { AssistantMessage, FauxProviderRegistration } from "@mariozechner/pi-ai";

process.env.PI_OFFLINE = "1";
// pi loads extension files through jiti, whose transform cache would otherwise stay in the system temp folder.
process.env.JITI_FS_CACHE = "false";
process.env.PI_SKIP_VERSION_CHECK = "1";
globalThis.fetch = ((input: unknown) => {
  throw new Error(`the pi tests must stay offline (fetch ${String(input)})`);
}) as typeof fetch;

export const pi = await import("@mariozechner/pi-coding-agent");
export const piAi = await import("@mariozechner/pi-ai");

export interface PiTestSession {
  session: AgentSession;
  faux: FauxProviderRegistration;
  dir: string;
  cwd: string;
  sessionFile: string;
  cleanup: () => void;
}

export interface PiTestSessionOptions {
  extensions?: ExtensionFactory[];
  /** Extension files pi loads itself (its `-e` paths). */
  extensionPaths?: string[];
  /** pi's compaction settings (auto-compaction is off unless set). */
  compaction?: { enabled?: boolean; keepRecentTokens?: number; reserveTokens?: number };
  /** The faux model's context window (pi-ai's default: 128,000). */
  contextWindow?: number;
  /** Files to write in the cwd. */
  files?: Record<string, string>;
}

/** A pi session in a fresh temporary HOME, with the faux model and the `read` and `bash` tools. */
export async function piTestSession(o: PiTestSessionOptions = {}): Promise<PiTestSession> {
  const dir = mkdtempSync(join(tmpdir(), "compact-safe-pi-"));
  process.env.HOME = dir;
  const cwd = join(dir, "work");
  const agentDir = join(dir, ".pi", "agent");
  mkdirSync(cwd, { recursive: true });
  mkdirSync(agentDir, { recursive: true });
  for (const [name, text] of Object.entries(o.files ?? {})) {
    mkdirSync(join(cwd, name, ".."), { recursive: true });
    writeFileSync(join(cwd, name), text);
  }
  const faux = piAi.registerFauxProvider(
    o.contextWindow ? { models: [{ id: "faux-small", contextWindow: o.contextWindow }] } : {},
  );
  const model = faux.getModel();
  const authStorage = pi.AuthStorage.inMemory();
  authStorage.setRuntimeApiKey(model.provider, "faux-key");
  const modelRegistry = pi.ModelRegistry.create(authStorage, join(agentDir, "models.json"));
  const settingsManager = pi.SettingsManager.inMemory({ compaction: { enabled: false, ...o.compaction } });
  const resourceLoader = new pi.DefaultResourceLoader({
    cwd,
    agentDir,
    settingsManager,
    extensionFactories: o.extensions ?? [],
    additionalExtensionPaths: o.extensionPaths ?? [],
    noSkills: true,
    noPromptTemplates: true,
    noThemes: true,
    noContextFiles: true,
  });
  await resourceLoader.reload();
  const sessionManager = pi.SessionManager.create(cwd, join(agentDir, "sessions"));
  const { session } = await pi.createAgentSession({
    cwd,
    agentDir,
    authStorage,
    modelRegistry,
    model,
    settingsManager,
    resourceLoader,
    sessionManager,
    tools: ["read", "bash"],
  });
  return {
    session,
    faux,
    dir,
    cwd,
    sessionFile: session.sessionFile!,
    cleanup: () => {
      session.dispose();
      faux.unregister();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The faux model's answers for `rounds` rounds from `from`: each reads a file and runs a command, in parallel, then replies. */
export function roundResponses(from: number, rounds: number): AssistantMessage[] {
  const { fauxAssistantMessage, fauxThinking, fauxToolCall } = piAi;
  const out: AssistantMessage[] = [];
  for (let r = from; r < from + rounds; r++) {
    out.push(
      fauxAssistantMessage(
        [
          fauxThinking(`Round ${r}: read the notes, then echo.`),
          fauxToolCall("read", { path: "notes.txt" }, { id: `call_r${r}a` }),
          fauxToolCall("bash", { command: `echo round ${r}` }, { id: `call_r${r}b` }),
        ],
        { stopReason: "toolUse" },
      ),
    );
    out.push(fauxAssistantMessage(`Round ${r} done.`));
  }
  return out;
}

/**
 * Runs `rounds` rounds of work from round `from` (one prompt each). With `settle`, each prompt waits
 * for the automatic compaction pi may start when the previous one ended (pi runs it in its `agent_end`
 * handler, which `prompt()` does not wait for; a prompt sent at once would race it).
 */
export async function runRounds(
  t: PiTestSession,
  from: number,
  rounds: number,
  settle = false,
): Promise<void> {
  t.faux.appendResponses(roundResponses(from, rounds));
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  for (let r = from; r < from + rounds; r++) {
    await t.session.prompt(`Round ${r}: read notes.txt and echo ${r}.`);
    if (!settle) continue;
    await sleep(20);
    while (t.session.isCompacting) await sleep(10);
  }
}
