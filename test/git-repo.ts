/** A git repository for tests of the live state (git branch, worktree, HEAD). */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** Whether git can be run here (the live-state tests are skipped without it). */
export function hasGit(): boolean {
  try {
    execFileSync("git", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Makes `ws` a git repository on branch feature/x with one commit; returns `g`, which runs git in it. */
export function gitRepo(ws: string): (...args: string[]) => string {
  const g = (...args: string[]) =>
    execFileSync("git", ["-C", ws, "-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
      encoding: "utf8",
    }).trim();
  g("init", "-q", "-b", "feature/x");
  writeFileSync(join(ws, "a.txt"), "a");
  g("add", "a.txt");
  g("commit", "-q", "-m", "one");
  return g;
}
