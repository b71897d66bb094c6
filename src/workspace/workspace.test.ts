import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { gitRepo, hasGit } from "../../test/git-repo.js";
import { scratchDir } from "../../test/scratch.js";
import {
  AnchorsError,
  BackgroundFileError,
  clearAnchors,
  readAnchors,
  readBackgroundFile,
  readLiveState,
  writeAnchors,
} from "./index.js";

const tmp = () => scratchDir("cs-ws-");

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

test("anchors: control characters come back escaped (ESC sequences, C0, DEL, C1, lone CR, bidi); tab, newline, CRLF kept", async () => {
  const ws = tmp();
  mkdirSync(join(ws, ".codewhale"));
  writeFileSync(
    join(ws, ".codewhale", "anchors.md"),
    "keep\tthis\r\n\x1b[31mred\x1b[0m \x07\x00\x7f\u009b2J ok\rhidden \u202eevil\n",
  );
  const got = await readAnchors(ws);
  assert.equal(
    got?.text,
    "keep\tthis\r\n\\x1b[31mred\\x1b[0m \\x07\\x00\\x7f\\x9b2J ok\\x0dhidden \\u202eevil\n",
  );
  assert.equal(got?.escaped, 8);
  // eslint-disable-next-line no-control-regex
  assert.doesNotMatch(got!.text, /[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\u202e]/);
  assert.equal((await readAnchors(ws)) !== null && (await readAnchors(ws))!.text, got!.text, "stable");
});

test("anchors: a file over 64 KiB, or that is not a regular file (a FIFO), is refused naming the file", async () => {
  const ws = tmp();
  mkdirSync(join(ws, ".codewhale"));
  const file = join(ws, ".codewhale", "anchors.md");
  writeFileSync(file, "a".repeat(64 * 1024));
  assert.equal((await readAnchors(ws))?.text.length, 64 * 1024);
  writeFileSync(file, "a".repeat(64 * 1024 + 1));
  await assert.rejects(
    readAnchors(ws),
    (e: unknown) =>
      e instanceof AnchorsError &&
      e.message === `${file}: is larger than the 64 KiB limit for anchors (65537 bytes); shorten it`,
  );
  await assert.rejects(writeAnchors(ws, "b".repeat(70_000)), (e: unknown) => e instanceof AnchorsError);
  assert.equal(readFileSync(file, "utf8").length, 64 * 1024 + 1, "a refused write leaves the file alone");
  if (process.platform !== "win32") {
    const fifoWs = tmp();
    mkdirSync(join(fifoWs, ".codewhale"));
    const fifo = join(fifoWs, ".codewhale", "anchors.md");
    execFileSync("mkfifo", [fifo]);
    await assert.rejects(
      readAnchors(fifoWs),
      (e: unknown) => e instanceof AnchorsError && e.message === `${fifo}: is not a regular file`,
    );
  }
});

test("anchors: a symbolic link swapped in while reading is never followed (3,000 reads against a swapping child)", async () => {
  const ws = tmp();
  mkdirSync(join(ws, ".codewhale"));
  const secret = join(ws, "secret.txt");
  writeFileSync(secret, "SECRET-TARGET");
  const file = join(ws, ".codewhale", "anchors.md");
  writeFileSync(file, "plain anchors");
  // A child swaps, by atomic rename, a regular file and a symbolic link to the secret at the anchors path.
  const swapper = spawn(
    process.execPath,
    [
      "-e",
      `const fs = require("fs");
       const [file, secret] = process.argv.slice(1);
       for (let i = 0; ; i++) {
         const tmp = file + ".swap" + (i % 2);
         try { fs.unlinkSync(tmp); } catch {}
         if (i % 2) fs.writeFileSync(tmp, "plain anchors"); else fs.symlinkSync(secret, tmp);
         fs.renameSync(tmp, file);
       }`,
      file,
      secret,
    ],
    { stdio: "ignore" },
  );
  try {
    const seen = { plain: 0, refused: 0, target: 0 };
    for (let i = 0; i < 3000; i++) {
      try {
        const a = await readAnchors(ws);
        if (a?.text.includes("SECRET")) seen.target++;
        else seen.plain++;
      } catch (e) {
        assert.ok(e instanceof AnchorsError, String(e));
        assert.match(e.message, /is a symbolic link; refusing/);
        seen.refused++;
      }
    }
    assert.equal(seen.target, 0, `read the link target ${seen.target} times (${JSON.stringify(seen)})`);
    assert.ok(seen.plain > 0 && seen.refused > 0, `the swap raced the reads: ${JSON.stringify(seen)}`);
  } finally {
    swapper.kill("SIGKILL");
  }
});

test("anchors: the .codewhale folder swapped for a link to another folder is never read through (Linux)", async (t) => {
  if (process.platform !== "linux") return t.skip("the folder is opened through /proc/self/fd on Linux only");
  const ws = tmp();
  const elsewhere = join(ws, "elsewhere");
  mkdirSync(elsewhere);
  writeFileSync(join(elsewhere, "anchors.md"), "SECRET-TARGET");
  mkdirSync(join(ws, ".codewhale"));
  writeFileSync(join(ws, ".codewhale", "anchors.md"), "plain anchors");
  const folder = join(ws, ".codewhale");
  // A child swaps, by atomic rename, the real folder and a link to another folder.
  const swapper = spawn(
    process.execPath,
    [
      "-e",
      `const fs = require("fs");
       const [folder, elsewhere] = process.argv.slice(1);
       const real = folder + ".real", link = folder + ".link";
       fs.symlinkSync(elsewhere, link);
       for (;;) {
         fs.renameSync(folder, real);
         fs.renameSync(link, folder);
         fs.renameSync(folder, link);
         fs.renameSync(real, folder);
       }`,
      folder,
      elsewhere,
    ],
    { stdio: "ignore" },
  );
  try {
    const seen = { plain: 0, refused: 0, none: 0, target: 0 };
    for (let i = 0; i < 2000; i++) {
      try {
        const a = await readAnchors(ws);
        if (a === null) seen.none++;
        else if (a.text.includes("SECRET")) seen.target++;
        else seen.plain++;
      } catch (e) {
        assert.ok(e instanceof AnchorsError, String(e));
        seen.refused++;
      }
    }
    assert.equal(
      seen.target,
      0,
      `read through the swapped folder ${seen.target} times (${JSON.stringify(seen)})`,
    );
    assert.ok(seen.plain > 0 && seen.refused > 0, `the swap raced the reads: ${JSON.stringify(seen)}`);
  } finally {
    swapper.kill("SIGKILL");
  }
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
    const g = gitRepo(ws);
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
