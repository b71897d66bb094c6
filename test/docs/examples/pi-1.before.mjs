/* eslint-disable @typescript-eslint/no-unused-vars -- its bindings are used by the README block and pi.after.mjs */
// The README's pi 1.x example (pi-1), before the block (run by npm run test:clients on Node 22): pi-ai's faux provider stands in for the model, and every
// folder pi uses (HOME, agent dir, cwd, sessions) is temporary. Nothing reaches the network.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fauxAssistantMessage, fauxToolCall, registerFauxProvider } from "@earendil-works/pi-ai/compat";
import { ModelRuntime, SettingsManager } from "@earendil-works/pi-coding-agent";

process.env.PI_OFFLINE = "1";
globalThis.fetch = (url) => {
  throw new Error(`the example must stay offline (fetch ${url})`);
};
const home = mkdtempSync(join(tmpdir(), "compact-safe-readme-pi-"));
process.env.HOME = home;
process.env.PI_CODING_AGENT_DIR = join(home, ".pi", "agent");
process.on("exit", () => rmSync(home, { recursive: true, force: true }));
const cwd = join(home, "project");
const agentDir = join(home, ".pi", "agent");
mkdirSync(cwd, { recursive: true });
writeFileSync(join(cwd, "notes.txt"), "Release checklist: bump the version, tag, publish.\n".repeat(40));

const faux = registerFauxProvider();
const model = faux.getModel();
const modelRuntime = await ModelRuntime.create({
  authPath: join(agentDir, "auth.json"),
  modelsPath: join(agentDir, "models.json"),
});
// pi 1.x's model runtime knows only the providers registered with it: the faux one, with its key.
modelRuntime.registerProvider(model.provider, {
  api: model.api,
  baseUrl: model.baseUrl,
  apiKey: "faux-key",
  models: faux.models ?? [model],
});
await modelRuntime.setRuntimeApiKey(model.provider, "faux-key");
// pi 1.x refuses to compact a session smaller than keepRecentTokens (default 20,000): the example's is small.
const settingsManager = SettingsManager.inMemory({ compaction: { enabled: false, keepRecentTokens: 200 } });
const setup = { cwd, agentDir, settingsManager, model, modelRuntime };
// Each task: the model reads notes.txt and runs a command (two calls in parallel), then replies.
faux.setResponses(
  [1, 2, 3].flatMap((n) => [
    fauxAssistantMessage(
      [
        fauxToolCall("read", { path: "notes.txt" }, { id: `call_${n}a` }),
        fauxToolCall("bash", { command: `echo step ${n}` }, { id: `call_${n}b` }),
      ],
      { stopReason: "toolUse" },
    ),
    fauxAssistantMessage(`Step ${n} done.`),
  ]),
);
