import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { repoRoot } from "../../test/support.js";
import { scratchDir } from "../../test/scratch.js";
import { CompactSafeError } from "./errors.js";
import {
  importOptional,
  MissingPackageError,
  OPTIONAL_PACKAGES,
  type OptionalPackage,
} from "./optional-package.js";

/** A module, outside any node_modules tree, that imports `specifier`: Node's own "not found" for it. */
function importerOf(specifier: string): () => Promise<unknown> {
  const dir = scratchDir("cs-optional-");
  const file = join(dir, "importer.mjs");
  writeFileSync(file, `export * from ${JSON.stringify(specifier)};\n`);
  return () => import(pathToFileURL(file).href);
}

test("a missing optional package is one line naming it and how to install it", async () => {
  const err = await importOptional(
    "gpt-tokenizer",
    "exactEstimator()",
    importerOf("gpt-tokenizer/encoding/o200k_base"),
  ).then(
    () => assert.fail("the import should fail"),
    (e: unknown) => e,
  );
  assert.ok(err instanceof MissingPackageError);
  assert.ok(err instanceof CompactSafeError);
  assert.equal(err.code, "missing_package");
  assert.equal(err.packageName, "gpt-tokenizer");
  assert.equal(
    err.message,
    "exactEstimator() needs the package gpt-tokenizer, which is not installed (npm install gpt-tokenizer@4)",
  );
});

test("another missing package (one the optional package imports) is not reported as the optional one", async () => {
  // "openai-x" is not "openai": the error is Node's own, not a MissingPackageError for openai.
  await assert.rejects(
    importOptional("openai", "the openai-compatible summarizer", importerOf("openai-x")),
    (e: unknown) =>
      !(e instanceof MissingPackageError) && (e as { code?: string }).code === "ERR_MODULE_NOT_FOUND",
  );
});

test("an installed optional package loads", async () => {
  const mod = await importOptional(
    "gpt-tokenizer",
    "exactEstimator()",
    () => import("gpt-tokenizer/encoding/o200k_base"),
  );
  assert.equal(typeof mod.countTokens, "function");
});

test("each optional package is an optional peer dependency whose newest major is the one the error names", () => {
  const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as Record<
    string,
    Record<string, unknown>
  >;
  for (const [name, install] of Object.entries(OPTIONAL_PACKAGES) as [OptionalPackage, string][]) {
    assert.equal(pkg.dependencies?.[name], undefined, `${name} is not a hard dependency`);
    assert.deepEqual(pkg.peerDependenciesMeta?.[name], { optional: true }, name);
    const range = String(pkg.peerDependencies?.[name]);
    const major = install.slice(install.lastIndexOf("@") + 1);
    // The range may cover several majors (openai: 6 and 7); the error names the newest, the one built against.
    const m = /^>=(\d+)\.\d+\.\d+ <(\d+)$/.exec(range);
    assert.ok(m, `${name}: ${range}`);
    assert.ok(
      Number(m[1]) <= Number(major) && Number(m[2]) === Number(major) + 1,
      `${name}: ${range} vs ${install}`,
    );
    assert.match(
      String(pkg.devDependencies?.[name]),
      new RegExp(`^${major}\\.\\d+\\.\\d+$`),
      `${name} pinned for the tests`,
    );
  }
});
