/**
 * The optional packages: the provider SDKs of the LLM summarizers and the
 * exact tokenizer are optional peer dependencies, loaded on first use, so the
 * default (offline, extractive) path neither installs nor loads them. A
 * feature whose package is missing fails with one line that names it.
 */
import { CompactSafeError } from "./errors.js";

/**
 * Each optional package with the major version compact-safe is built against:
 * the newest one of package.json's peer range (openai's covers 6 and 7).
 */
export const OPTIONAL_PACKAGES = {
  openai: "openai@7",
  "@anthropic-ai/sdk": "@anthropic-ai/sdk@1",
  "gpt-tokenizer": "gpt-tokenizer@4",
} as const;

export type OptionalPackage = keyof typeof OPTIONAL_PACKAGES;

export class MissingPackageError extends CompactSafeError {
  readonly packageName: OptionalPackage;
  constructor(pkg: OptionalPackage, feature: string, cause?: unknown) {
    super(
      "missing_package",
      `${feature} needs the package ${pkg}, which is not installed (npm install ${OPTIONAL_PACKAGES[pkg]})`,
      { cause },
    );
    this.name = "MissingPackageError";
    this.packageName = pkg;
  }
}

/** Whether `e` is Node's "package not found" for `pkg` itself (not for a package it imports). */
function isMissing(e: unknown, pkg: string): boolean {
  const err = e as { code?: unknown; message?: unknown } | null;
  return (
    err?.code === "ERR_MODULE_NOT_FOUND" &&
    typeof err.message === "string" &&
    err.message.includes(`Cannot find package '${pkg}'`)
  );
}

/**
 * Runs `load` (an `import()` of `pkg` or one of its subpaths) and turns a
 * missing `pkg` into a `MissingPackageError` naming `feature`.
 */
export async function importOptional<T>(
  pkg: OptionalPackage,
  feature: string,
  load: () => Promise<T>,
): Promise<T> {
  try {
    return await load();
  } catch (e) {
    if (isMissing(e, pkg)) throw new MissingPackageError(pkg, feature, e);
    throw e;
  }
}
