/**
 * Issue 44: every command works on a session that holds a provider's own compaction, through the
 * built binary. Three sessions shaped as the providers and Codex write them
 * (test/fixtures/provider-compaction): an Anthropic Messages body that opens with the `compaction`
 * block the API returned (as the SDK sends it back, with its system prompt), an OpenAI Responses
 * request body with `instructions` and a `compaction` item in its input, and a Codex 0.169 rollout
 * after a remote compaction (the `compacted` line whose `replacement_history` is Codex's initial
 * context and the opaque `compaction` item). Each goes through `context`, `audit`, `report` with its
 * preview, `export`, `import`, `compact` (a new journal, again in place, `restore`, and for Codex
 * `--fork`) and the journal each writes is read back: the system prompt is kept, the provider's
 * compaction is the first thing of the conversation after it, and nothing is a false violation.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "../support.js";
import { run, tempDir } from "./helpers.js";
import { CHECKPOINT_MARKER } from "../../src/contract/markers.js";

type Json = Record<string, unknown>;
const fixture = (name: string): string => join(repoRoot, "test", "fixtures", "provider-compaction", name);
const readJson = (file: string): Json => JSON.parse(readFileSync(file, "utf8")) as Json;

async function ok(args: string[]): Promise<string> {
  const r = await run(args);
  assert.equal(r.code, 0, `compact-safe ${args.join(" ")}: exit ${r.code}\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

const texts = (content: unknown): string =>
  (Array.isArray(content) ? content : [])
    .map((b) => (typeof (b as Json).text === "string" ? ((b as Json).text as string) : ""))
    .join("\n");

/** The receipt of `compact --json`. */
interface Receipt {
  path: string;
  provider_compactions: { kept: number; folded: number };
}

test("an Anthropic body that opens with a compaction block: every command, system kept, the block first", async () => {
  const file = fixture("anthropic-opens-with-compaction.json");
  const original = readJson(file);
  const block = (original.messages as Json[])[0]!.content as Json[];
  const { dir, cleanup } = tempDir();
  try {
    await ok(["context", file, "--json"]);

    // Nothing before the block in the file: not judgeable, in the line and in the JSON alike.
    const audit = await run(["audit", file]);
    assert.equal(audit.code, 0, audit.stdout + audit.stderr);
    assert.match(audit.stdout, /not judgeable: no history before it in the file/);
    assert.doesNotMatch(audit.stdout, /VIOLATION/);
    const aj = JSON.parse(await ok(["audit", file, "--json"])) as {
      compactions: { judgeable: boolean; kept: boolean | null; reason: string | null }[];
      kept: number;
      not_judgeable: number;
      unrepaired: number;
    };
    assert.deepEqual(
      aj.compactions.map((c) => [c.judgeable, c.kept, c.reason]),
      [[false, null, null]],
    );
    assert.deepEqual([aj.kept, aj.not_judgeable, aj.unrepaired], [0, 1, 0]);

    // export: the system prompt, then the block as the first block of the conversation.
    const body = JSON.parse(await ok(["export", file, "--to", "anthropic"])) as Json;
    assert.deepEqual(body.system, original.system);
    const first = (body.messages as Json[])[0]!;
    assert.equal(first.role, "assistant");
    assert.deepEqual((first.content as Json[])[0], block[0]);

    // report, with its preview.
    const model = JSON.parse(await ok(["report", file, "--json"])) as {
      preview_note: string | null;
      views: { preview: boolean; verdict: { kept: boolean | null } }[];
    };
    assert.equal(model.preview_note, null);
    assert.equal(model.views.find((v) => v.preview)?.verdict.kept, true);
    await ok(["report", file, "--out", join(dir, "page.html")]);
    await ok(["import", file, "--out", join(dir, "imported.jsonl")]);

    // compact: a new journal whose live context keeps the system prompt and the block first.
    const journal = join(dir, "c.jsonl");
    const receipt = JSON.parse(
      await ok(["compact", file, "--out", journal, "--target", "1500", "--json"]),
    ) as Receipt;
    assert.equal(receipt.path, "summary");
    assert.deepEqual(receipt.provider_compactions, { kept: 1, folded: 0 });
    const checkExport = async (): Promise<Json[]> => {
      const b = JSON.parse(await ok(["export", journal, "--to", "anthropic"])) as Json;
      assert.deepEqual(b.system, original.system);
      const ms = b.messages as Json[];
      assert.equal(ms[0]!.role, "assistant");
      assert.deepEqual((ms[0]!.content as Json[])[0], block[0]);
      return ms;
    };
    const after = await checkExport();
    assert.ok(after.some((m) => texts(m.content).includes(CHECKPOINT_MARKER)));
    assert.match(
      texts(after.find((m) => texts(m.content).includes(CHECKPOINT_MARKER))!.content),
      /kept first/,
    );

    // Again in place (the block stays first; the checkpoint is folded, not stacked), then restored.
    await ok(["compact", journal, "--target", "1200"]);
    await checkExport();
    const ja = JSON.parse((await run(["audit", journal, "--json"])).stdout) as {
      compactions: { source: string; judgeable: boolean; kept: boolean | null }[];
    };
    for (const c of ja.compactions.filter((x) => x.source === "compact-safe")) assert.equal(c.kept, true);
    await ok(["restore", journal]);
    await checkExport();
    await ok(["context", journal]);

    // Forced away: the checkpoint names the provider's summary, the receipt counts it, and the
    // result can go to another provider.
    const folded = join(dir, "folded.jsonl");
    const r2 = JSON.parse(
      await ok(["compact", file, "--out", folded, "--fold-provider-compaction", "--json"]),
    ) as Receipt;
    assert.deepEqual(r2.provider_compactions, { kept: 0, folded: 1 });
    const openai = JSON.parse(await ok(["export", folded, "--to", "openai"])) as { messages: Json[] };
    assert.equal(openai.messages[0]!.role, "system");
    assert.ok(
      openai.messages.some(
        (m) => typeof m.content === "string" && /an anthropic provider summary stood here/.test(m.content),
      ),
    );
  } finally {
    cleanup();
  }
});

test("an OpenAI Responses body with instructions and a compaction item: every command, the item kept where it stood", async () => {
  const file = fixture("responses-compaction-body.json");
  const original = readJson(file);
  const input = original.input as Json[];
  const item = input.find((i) => i.type === "compaction")!;
  const { dir, cleanup } = tempDir();
  try {
    await ok(["context", file, "--json"]);
    const audit = await run(["audit", file]);
    // A real loss (the provider's compaction dropped the user's instruction), never a false one.
    assert.equal(audit.code, 1);
    assert.doesNotMatch(audit.stdout, /system text/);

    // export: the instructions and the developer message first, then the item, then what followed it.
    const body = JSON.parse(await ok(["export", file, "--to", "responses"])) as { input: Json[] };
    const at = input.indexOf(item);
    assert.deepEqual(body.input.slice(2), input.slice(at));
    assert.equal(texts(body.input[0]!.content), original.instructions);
    assert.deepEqual(body.input[1], input[0]);

    const model = JSON.parse(await ok(["report", file, "--json"])) as {
      preview_note: string | null;
      views: { preview: boolean; verdict: { kept: boolean | null } }[];
    };
    assert.equal(model.preview_note, null);
    assert.equal(model.views.find((v) => v.preview)?.verdict.kept, true);
    await ok(["import", file, "--out", join(dir, "imported.jsonl")]);

    const journal = join(dir, "c.jsonl");
    const receipt = JSON.parse(
      await ok(["compact", file, "--out", journal, "--target", "1500", "--json"]),
    ) as Receipt;
    assert.deepEqual(receipt.provider_compactions, { kept: 1, folded: 0 });
    const checkExport = async (): Promise<Json[]> => {
      const b = JSON.parse(await ok(["export", journal, "--to", "responses"])) as { input: Json[] };
      assert.equal(texts(b.input[0]!.content), original.instructions);
      assert.deepEqual(b.input[1], input[0]);
      // The item is the prefix of the replacement: right after the system items, before the checkpoint.
      assert.deepEqual(b.input[2], item);
      return b.input;
    };
    const after = await checkExport();
    const cp = after.findIndex((i) => texts(i.content).includes(CHECKPOINT_MARKER));
    assert.ok(cp > 2, "the checkpoint follows the provider's item");
    await ok(["compact", journal, "--target", "1200"]);
    await checkExport();
    await ok(["restore", journal]);
    await checkExport();
  } finally {
    cleanup();
  }
});

test("a Codex rollout after a remote compaction: compact, --fork, report, export and audit", async () => {
  const file = fixture("codex-remote-compacted.jsonl");
  const lines = readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Json);
  const compacted = lines.find((l) => l.type === "compacted")!.payload as { replacement_history: Json[] };
  const [developer, , item] = compacted.replacement_history;
  const { dir, cleanup } = tempDir();
  try {
    await ok(["context", file, "--json"]);
    const audit = await run(["audit", file]);
    assert.equal(audit.code, 1, audit.stderr); // Codex's remote compaction dropped the user's instruction
    assert.doesNotMatch(audit.stdout, /system text/);

    // The replacement history as Codex recorded it (the developer message as a system item: the
    // Responses exporter writes canonical system messages so; the API takes both).
    const body = JSON.parse(await ok(["export", file, "--to", "responses"])) as { input: Json[] };
    assert.deepEqual({ ...body.input[0], role: "developer" }, developer);
    assert.deepEqual(body.input.slice(1, 3), compacted.replacement_history.slice(1));

    const model = JSON.parse(await ok(["report", file, "--json"])) as {
      preview_note: string | null;
      views: { preview: boolean; verdict: { kept: boolean | null } }[];
    };
    assert.equal(model.preview_note, null);
    assert.equal(model.views.find((v) => v.preview)?.verdict.kept, true);
    await ok(["report", file, "--out", join(dir, "page.html")]);

    const journal = join(dir, "c.jsonl");
    const receipt = JSON.parse(
      await ok(["compact", file, "--out", journal, "--target", "1500", "--json"]),
    ) as Receipt;
    assert.deepEqual(receipt.provider_compactions, { kept: 1, folded: 0 });
    const exported = JSON.parse(await ok(["export", journal, "--to", "responses"])) as { input: Json[] };
    assert.deepEqual({ ...exported.input[0], role: "developer" }, developer);
    assert.deepEqual(exported.input[1], item);
    await ok(["restore", journal]);

    // The fork: Codex's shape, the item as the prefix of its replacement history.
    const forkFile = join(dir, "fork.jsonl");
    const forkReceipt = JSON.parse(
      await ok(["compact", file, "--fork", "--out", forkFile, "--target", "1500", "--json"]),
    ) as Receipt & { fork: { path: string } };
    assert.equal(forkReceipt.fork.path, forkFile);
    const fork = readFileSync(forkFile, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Json);
    const history = (fork.find((l) => l.type === "compacted")!.payload as { replacement_history: Json[] })
      .replacement_history;
    assert.deepEqual(history[0], developer);
    assert.deepEqual(history[1], item);
    const cp = history.findIndex((i) => texts(i.content).includes(CHECKPOINT_MARKER));
    assert.ok(cp > 1, "the checkpoint follows the provider's item");
    await ok(["context", forkFile]);
    const forkAudit = await run(["audit", forkFile]);
    assert.doesNotMatch(forkAudit.stdout, /system text/);
  } finally {
    cleanup();
  }
});

test("the small provider-compaction sessions: compact and report exit 0, export --to anthropic keeps system and opens with the block", async () => {
  const { dir, cleanup } = tempDir();
  try {
    for (const name of [
      "anthropic-body.json",
      "responses-items.json",
      "codex-remote-v1.jsonl",
      "codex-remote-v2.jsonl",
    ]) {
      await ok(["compact", fixture(name), "--out", join(dir, `${name}.jsonl`)]);
      await ok(["report", fixture(name), "--out", join(dir, `${name}.html`)]);
    }
    const original = readJson(fixture("anthropic-body.json"));
    const body = JSON.parse(
      await ok(["export", fixture("anthropic-body.json"), "--to", "anthropic"]),
    ) as Json;
    assert.deepEqual(body.system, [{ type: "text", text: original.system }]);
    assert.equal(((body.messages as Json[])[0]!.content as Json[])[0]!.type, "compaction");
  } finally {
    cleanup();
  }
});

test("the rollout the real Codex 0.169.0 recorded after a remote compaction: every command", async () => {
  const file = join(repoRoot, "test", "fixtures", "codex", "codex-0.169.0-remote-compaction.jsonl");
  const { dir, cleanup } = tempDir();
  try {
    await ok(["context", file, "--json"]);
    // Codex's own compaction lost the round (the calls and results before it): a real loss, said as such.
    const audit = await run(["audit", file, "--json"]);
    assert.equal(audit.code, 1, audit.stderr);
    const aj = JSON.parse(audit.stdout) as { compactions: { judgeable: boolean; reason: string | null }[] };
    assert.equal(aj.compactions.length, 1);
    assert.equal(aj.compactions[0]!.judgeable, true);
    assert.doesNotMatch(aj.compactions[0]!.reason ?? "", /system text/);
    const body = JSON.parse(await ok(["export", file, "--to", "responses"])) as { input: Json[] };
    assert.ok(
      body.input.some((i) => i.type === "compaction"),
      "the provider's item is exported where it stood",
    );
    // Anthropic cannot carry an OpenAI item: refused on one line, naming the export that can.
    const refused = await run(["export", file, "--to", "anthropic"]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /^compact-safe: .*export to responses instead\n$/);
    await ok(["report", file, "--json"]);
    await ok(["report", file, "--out", join(dir, "page.html")]);
    for (const extra of [[], ["--fork"]]) {
      const r = JSON.parse(
        await ok(["compact", file, ...extra, "--out", join(dir, `c${extra.length}.jsonl`), "--json"]),
      ) as { compacted: boolean; reason?: string };
      // A short session: nothing to compact is an answer, not an error.
      if (!r.compacted) assert.match(r.reason ?? "", /^nothing to compact/);
    }
  } finally {
    cleanup();
  }
});
