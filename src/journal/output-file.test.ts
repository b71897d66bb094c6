/** The one rule for written files (output-file.ts), and createJournal, which goes through it. */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkOutput, OutputExistsError, OutputIsInputError, writeOutputFile } from "./output-file.js";
import { createJournal, headerEntry, JournalExistsError } from "./write.js";

function withTemp<R>(fn: (dir: string) => Promise<R>): Promise<R> {
  const dir = mkdtempSync(join(tmpdir(), "cs-out-"));
  return fn(dir).finally(() => rmSync(dir, { recursive: true, force: true }));
}

test("a new target is written whole, and no temporary file is left beside it", () =>
  withTemp(async (dir) => {
    const f = join(dir, "out.json");
    assert.deepEqual(await writeOutputFile(f, "hello\n"), {});
    assert.equal(readFileSync(f, "utf8"), "hello\n");
    assert.deepEqual(readdirSync(dir), ["out.json"]);
  }));

test("an existing file is refused without force, and replaced with it (backed up when asked)", () =>
  withTemp(async (dir) => {
    const f = join(dir, "out.json");
    writeFileSync(f, "old");
    await assert.rejects(writeOutputFile(f, "new"), (e: unknown) => {
      assert.ok(e instanceof OutputExistsError);
      assert.equal(e.code, "output_exists");
      assert.equal(e.message, `${f}: already exists (pass force to replace it)`);
      return true;
    });
    assert.equal(readFileSync(f, "utf8"), "old");
    const r = await writeOutputFile(f, "new", { force: true, backup: true });
    assert.equal(readFileSync(f, "utf8"), "new");
    assert.ok(r.backup !== undefined);
    assert.equal(readFileSync(r.backup, "utf8"), "old");
    await writeOutputFile(f, "newer", { force: true });
    assert.equal(readFileSync(f, "utf8"), "newer");
  }));

test("a symbolic link at the target, dangling or not, is refused without force and replaced (never written through) with it", () =>
  withTemp(async (dir) => {
    const dangling = join(dir, "dangling");
    symlinkSync("nowhere.json", dangling);
    await assert.rejects(writeOutputFile(dangling, "x"), OutputExistsError);
    assert.equal(readlinkSync(dangling), "nowhere.json");
    assert.equal(existsSync(join(dir, "nowhere.json")), false);
    await writeOutputFile(dangling, "x", { force: true });
    assert.ok(lstatSync(dangling).isFile());
    assert.equal(existsSync(join(dir, "nowhere.json")), false, "not written through the link");

    const other = join(dir, "other.txt");
    writeFileSync(other, "keep me");
    const link = join(dir, "link");
    symlinkSync("other.txt", link);
    await assert.rejects(writeOutputFile(link, "y"), OutputExistsError);
    await writeOutputFile(link, "y", { force: true, backup: true });
    assert.equal(readFileSync(other, "utf8"), "keep me");
    assert.ok(lstatSync(link).isFile());
    assert.equal(readFileSync(link, "utf8"), "y");
  }));

test("the target is never an input: same path, a symbolic link to it, a hard link, another spelling; even with force", () =>
  withTemp(async (dir) => {
    const input = join(dir, "in.jsonl");
    writeFileSync(input, "the session");
    const symlink = join(dir, "sym");
    symlinkSync("in.jsonl", symlink);
    const hard = join(dir, "hard");
    linkSync(input, hard);
    mkdirSync(join(dir, "sub"));
    for (const target of [input, symlink, hard, join(dir, "sub", "..", "in.jsonl")]) {
      for (const force of [false, true]) {
        await assert.rejects(
          writeOutputFile(target, "clobbered", { force, inputs: [input] }),
          (e: unknown) => {
            assert.ok(e instanceof OutputIsInputError, `${target} force=${force}`);
            assert.equal(e.code, "output_is_input");
            return true;
          },
        );
      }
    }
    // The input named through a link is the same file too.
    await assert.rejects(writeOutputFile(input, "x", { force: true, inputs: [symlink] }), OutputIsInputError);
    assert.equal(readFileSync(input, "utf8"), "the session");
    assert.equal(statSync(input).nlink, 2);
  }));

test("a folder or a FIFO at the target is refused, even with force", () =>
  withTemp(async (dir) => {
    mkdirSync(join(dir, "d"));
    await assert.rejects(checkOutput(join(dir, "d"), { force: true }), /refusing to write to it/);
    const fifo = join(dir, "fifo");
    if (spawnSync("mkfifo", [fifo]).status === 0) {
      await assert.rejects(writeOutputFile(fifo, "x", { force: true }), /refusing to write to it/);
      assert.ok(lstatSync(fifo).isFIFO());
    }
  }));

test("createJournal follows the rule: an existing journal or link refused, never over its input, a backup when forced", () =>
  withTemp(async (dir) => {
    const header = headerEntry(
      {
        session_id: "s",
        created_at: "2025-01-01T00:00:00.000Z",
        schema_version: 2,
        source_format: "journal",
      },
      "h",
    );
    const j = join(dir, "j.jsonl");
    await createJournal(j, header, []);
    const link = join(dir, "link.jsonl");
    symlinkSync("missing.jsonl", link);
    await assert.rejects(createJournal(link, header, []), JournalExistsError);
    await assert.rejects(createJournal(j, header, [], { overwrite: true, inputs: [j] }), OutputIsInputError);
    const r = await createJournal(j, header, [], { overwrite: true, inputs: [join(dir, "elsewhere")] });
    assert.ok(r.backup !== undefined && existsSync(r.backup));
  }));
