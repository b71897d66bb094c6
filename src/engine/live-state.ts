/** The live state restated in every checkpoint (re-read at compaction time, never copied from a summary). */
import type { BackgroundHandle } from "../summarizers/types.js";

export interface LiveState {
  /** Current git branch (or `HEAD (detached)`), when the workspace is a git repository. */
  gitBranch?: string;
  /** Worktree root path. */
  worktree?: string;
  /** HEAD commit id. */
  head?: string;
  /** The host's background-work handles. */
  background?: readonly BackgroundHandle[];
}

export function renderLiveState(state: LiveState | undefined): string {
  const lines: string[] = [];
  if (state?.gitBranch !== undefined) lines.push(`- git branch: ${state.gitBranch}`);
  if (state?.worktree !== undefined) lines.push(`- worktree: ${state.worktree}`);
  if (state?.head !== undefined) lines.push(`- HEAD: ${state.head}`);
  if (state?.gitBranch === undefined && state?.worktree === undefined && state?.head === undefined) {
    lines.push("- git: not a git repository (or not read)");
  }
  const bg = state?.background ?? [];
  if (bg.length === 0) lines.push("- background work: none reported by the host");
  for (const h of bg) {
    const parts = [h.kind, h.status].filter((p) => p !== undefined && p !== "").join(", ");
    lines.push(`- background: ${h.id}${parts ? ` (${parts})` : ""}${h.command ? `: ${h.command}` : ""}`);
  }
  return lines.join("\n");
}
