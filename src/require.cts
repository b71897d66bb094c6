/**
 * What `require("compact-safe")` loads where Node.js cannot require an ES
 * module (before 20.19 and 22.12, or with --no-experimental-require-module):
 * one line that says what to do instead, with Node's own code for the case.
 * Where it can, package.json's `module-sync` condition loads the ES module.
 */
throw Object.assign(
  new Error(
    'compact-safe is an ES module: use import { ... } from "compact-safe" or await import("compact-safe") (or Node.js 20.19+ / 22.12+, where require() loads it)',
  ),
  { code: "ERR_REQUIRE_ESM" },
);
