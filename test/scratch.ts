/**
 * Scratch folders for tests: a fresh folder under the system's temporary folder, removed when the
 * test file's tests are done (`after` on the file's root), so that `npm test` leaves nothing
 * behind there (issue 26 item 5; `npm run test:loaded` checks it).
 */
import { after } from "node:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const made: string[] = [];
// Registered when the test file imports this module, on the file's root: registered from inside a
// test, node:test would run it when that test ends.
after(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
