/**
 * Claude Code's prompt queue, as its `queue-operation` lines record it.
 *
 * A prompt typed (or a notification raised) while the agent works is queued:
 * `enqueue` carries its content. It leaves the queue by exactly one later
 * operation, first in first out (the lines carry no id that links them;
 * 2.1.33x's `remove` repeats the content, which is matched first):
 *
 * - `dequeue`: it starts the next turn; Claude Code writes it as a `user`
 *   line of its own, so the queue adds nothing.
 * - `remove` with no reason (the versions up to 2.1.3x) or with
 *   `reason: "absorbed_mid_turn"`: it was folded into the running turn, sent
 *   beside the next tool results. No `user` line records it (2.1.33x writes a
 *   `queued_command` attachment beside it); the queue gives it back as
 *   delivered, and the importer places it as a user message before the next
 *   assistant message (the first the model wrote having read it).
 * - `remove` with another reason (cancelled, cleared on cancel, dropped by a
 *   hook, delivered to another agent or inside a tool result) and `popAll`
 *   (taken back into the input box): not a prompt this conversation's model
 *   was sent as one; not an instruction.
 *
 * A queued content that is one tagged element and nothing else
 * (`<task-notification>…</task-notification>`) is the harness's own
 * notification riding the same queue: delivered, it is context the model saw,
 * not the user's words (it is marked `is_meta`).
 */
import type { Block } from "../../model/index.js";
import { fromAnthropicContent } from "../../wire/anthropic.js";
import { textOf } from "../../wire/common.js";

export interface QueuedPrompt {
  content: Block[];
  /** The content's text (its text blocks joined), to match a `remove` or a `queued_command` attachment by. */
  text: string;
  /** Line of its `enqueue`. */
  line: number;
  /** Line and time of the operation that delivered it. */
  deliveredLine?: number;
  deliveredAt?: string;
  /** The harness's notification, not the user's words. */
  notification: boolean;
  /** A `queued_command` attachment already carries it, or it repeats an earlier enqueue (the queue must not add it again). */
  claimed: boolean;
}

/** Reasons of `remove` that mean the prompt went to this conversation's model mid-turn. */
const DELIVERED_MID_TURN = new Set([undefined, "absorbed_mid_turn"]);

/** A text that is one tagged element and nothing else: the harness's notification, by its structure. */
export function isHarnessElement(text: string): boolean {
  const m = /^\s*<([A-Za-z][\w-]*)>/.exec(text);
  return m !== null && text.trimEnd().endsWith(`</${m[1]}>`);
}

/** A queued content (a string, or content blocks when it carries an image) as blocks. */
export function queuedContent(raw: unknown): Block[] {
  if (typeof raw === "string") return raw.trim() === "" ? [] : [{ type: "text", text: raw }];
  return Array.isArray(raw) ? fromAnthropicContent(raw) : [];
}

const of = (p: QueuedPrompt | undefined): string => (p ? ` of line ${p.line}` : "");

export class PromptQueue {
  private readonly pending: QueuedPrompt[] = [];
  private readonly delivered: QueuedPrompt[] = [];
  private readonly seen = new Set<string>();

  /** One `queue-operation` line; returns why it is skipped as a line (its effect is kept here). */
  operation(o: Record<string, unknown>, line: number, ts: string): { reason: string; known: boolean } {
    const op = typeof o.operation === "string" ? o.operation : "?";
    if (op === "enqueue") {
      const content = queuedContent(o.content);
      const text = textOf(content);
      // A session resumed or forked repeats earlier lines: an enqueue of the same time and text is read once.
      const key = `${typeof o.timestamp === "string" ? o.timestamp : line}\0${text}`;
      const repeat = this.seen.has(key);
      this.seen.add(key);
      this.pending.push({ content, text, line, notification: isHarnessElement(text), claimed: repeat });
      return {
        reason:
          "queue operation (enqueue): a prompt queued while the agent worked; read when it leaves the queue",
        known: true,
      };
    }
    if (op !== "remove" && op !== "dequeue" && op !== "popAll")
      return { reason: `queue operation of an unknown kind ${JSON.stringify(o.operation)}`, known: false };
    const p = this.take(o.content);
    const reason = typeof o.reason === "string" ? o.reason : undefined;
    if (op === "remove" && DELIVERED_MID_TURN.has(reason)) {
      if (p && !p.claimed && p.content.length > 0) {
        p.deliveredLine = line;
        p.deliveredAt = ts;
        this.delivered.push(p);
      }
      return {
        reason: `queue operation (remove${reason ? `, ${reason}` : ""}): the queued prompt${of(p)} was delivered mid-turn`,
        known: true,
      };
    }
    if (op === "dequeue")
      return {
        reason: `queue operation (dequeue): the queued prompt${of(p)} starts a turn as a user line`,
        known: true,
      };
    return {
      reason: `queue operation (${op}${reason ? `, ${reason}` : ""}): the queued prompt${of(p)} left the queue unread (not an instruction)`,
      known: true,
    };
  }

  /** The prompt an operation takes: the one with its content when it carries one, else the oldest. */
  private take(raw: unknown): QueuedPrompt | undefined {
    const text = raw === undefined ? undefined : textOf(queuedContent(raw));
    const i = text === undefined ? -1 : this.pending.findIndex((p) => p.text === text);
    return this.pending.splice(i >= 0 ? i : 0, 1)[0];
  }

  /**
   * A `queued_command` attachment carries the prompt of this text: the one
   * delivered (or still queued, when the attachment comes first) is not added
   * again.
   */
  claim(text: string): void {
    const d = this.delivered.findIndex((p) => p.text === text);
    if (d >= 0) {
      this.delivered.splice(d, 1);
      return;
    }
    const p = this.pending.find((q) => q.text === text && !q.claimed);
    if (p) p.claimed = true;
  }

  /** The prompts delivered mid-turn and not placed yet (taken: each is placed once). */
  takeDelivered(): QueuedPrompt[] {
    return this.delivered.splice(0);
  }
}
