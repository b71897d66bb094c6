import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  AnchorsError,
  BackgroundFileError,
  clearAnchors,
  readAnchors,
  readBackgroundFile,
  readLiveState,
  writeAnchors,
} from "./workspace.js";

const tmp = () => mkdtempSync(join(tmpdir(), "cs-ws-"));

function hasGit(): boolean {
  try {
    execFileSync("git", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

test("anchors: missing → null; write, read back, clear", async () => {
  const ws = tmp();
  assert.equal(await readAnchors(ws), null);
  const file = await writeAnchors(ws, "Never push to main.");
  assert.equal(file, join(ws, ".codewhale", "anchors.md"));
  const got = await readAnchors(ws);
  assert.deepEqual(got, { text: "Never push to main.\n", file });
  assert.deepEqual(await clearAnchors(ws), [file]);
  assert.equal(await readAnchors(ws), null);
  assert.deepEqual(await clearAnchors(ws), []);
});

test("anchors: the legacy .deepseek file is read when .codewhale is absent, and .codewhale wins", async () => {
  const ws = tmp();
  mkdirSync(join(ws, ".deepseek"));
  writeFileSync(join(ws, ".deepseek", "anchors.md"), "legacy rule");
  assert.deepEqual(await readAnchors(ws), { text: "legacy rule", file: join(ws, ".deepseek", "anchors.md") });
  await writeAnchors(ws, "new rule\n");
  assert.equal((await readAnchors(ws))?.text, "new rule\n");
});

test("anchors: a symbolic link is refused for reading and writing, naming the path", async () => {
  const ws = tmp();
  const target = join(ws, "elsewhere.md");
  writeFileSync(target, "secret");
  mkdirSync(join(ws, ".codewhale"));
  const link = join(ws, ".codewhale", "anchors.md");
  symlinkSync(target, link);
  await assert.rejects(
    readAnchors(ws),
    (e: unknown) => e instanceof AnchorsError && e.message.startsWith(`${link}: is a symbolic link`),
  );
  await assert.rejects(
    writeAnchors(ws, "x"),
    (e: unknown) => e instanceof AnchorsError && e.message.includes(link),
  );
  await assert.rejects(clearAnchors(ws), AnchorsError);
  assert.equal(readFileSync(target, "utf8"), "secret", "the link target is untouched");

  const ws2 = tmp();
  const realDir = join(ws2, "real");
  mkdirSync(realDir);
  symlinkSync(realDir, join(ws2, ".codewhale"));
  await assert.rejects(
    writeAnchors(ws2, "x"),
    (e: unknown) => e instanceof AnchorsError && e.message.includes(join(ws2, ".codewhale")),
  );
  assert.equal(existsSync(join(realDir, "anchors.md")), false);
});

test("live state: nothing outside a git repository, background handles passed through", async () => {
  const ws = tmp();
  const bg = [{ id: "job-1", kind: "shell", command: "npm test", status: "running" }];
  const s = await readLiveState(ws, bg);
  if (!existsSync("/.git")) {
    assert.equal(s.gitBranch, undefined);
    assert.equal(s.head, undefined);
  }
  assert.deepEqual(s.background, bg);
});

test(
  "live state: branch, worktree and HEAD of a git repository; detached HEAD",
  { skip: !hasGit() },
  async () => {
    const ws = tmp();
    const g = (...args: string[]) =>
      execFileSync("git", ["-C", ws, "-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
        encoding: "utf8",
      }).trim();
    g("init", "-q", "-b", "feature/x");
    writeFileSync(join(ws, "a.txt"), "a");
    g("add", "a.txt");
    g("commit", "-q", "-m", "one");
    const head = g("rev-parse", "HEAD");
    const s = await readLiveState(join(ws));
    assert.equal(s.gitBranch, "feature/x");
    assert.equal(s.head, head);
    assert.equal(s.worktree, g("rev-parse", "--show-toplevel"));
    assert.equal(s.background, undefined);
    g("checkout", "-q", "--detach");
    assert.equal((await readLiveState(ws)).gitBranch, "HEAD (detached)");
  },
);

test("background file: valid list, and errors naming the file and JSON path", async () => {
  const dir = tmp();
  const f = join(dir, "background.json");
  writeFileSync(
    f,
    JSON.stringify([
      { id: "a", kind: "shell", command: "make", status: "running" },
      { id: "b", kind: "agent" },
    ]),
  );
  assert.deepEqual(await readBackgroundFile(f), [
    { id: "a", kind: "shell", command: "make", status: "running" },
    { id: "b", kind: "agent" },
  ]);
  writeFileSync(f, JSON.stringify([{ id: "a", kind: "x" }, { id: "b", kind: "x" }, { kind: "x" }]));
  await assert.rejects(
    readBackgroundFile(f),
    (e: unknown) => e instanceof BackgroundFileError && e.message === `${f}: [2]: missing "id"`,
  );
  writeFileSync(f, JSON.stringify([{ id: "a", kind: 3 }]));
  await assert.rejects(
    readBackgroundFile(f),
    (e: unknown) =>
      e instanceof BackgroundFileError && e.message.startsWith(`${f}: [0].kind: expected string`),
  );
  writeFileSync(f, "{ nope");
  await assert.rejects(
    readBackgroundFile(f),
    (e: unknown) => e instanceof BackgroundFileError && e.message.startsWith(`${f}: not JSON`),
  );
  writeFileSync(f, "{}");
  await assert.rejects(readBackgroundFile(f), /expected a JSON array/);
  await assert.rejects(readBackgroundFile(join(dir, "none.json")), /none\.json: no such file/);
});
