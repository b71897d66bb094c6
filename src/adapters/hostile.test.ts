/**
 * Every adapter entry point given hostile arrays (a self-referencing
 * message, 100k-deep nesting, objects shared so often that their JSON form
 * would not end, a BigInt, a getter that throws, a sparse
 * array, a non-plain object): refused with compact-safe's own error
 * (`ModelError`, code `invalid_message`) on one line naming the message's
 * place, never a raw TypeError / RangeError, and the input left as it was.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import type { ModelMessage } from "ai";
import { CompactSafeError } from "../model/errors.js";
import { ModelError } from "../model/schema.js";
import type { Message } from "../model/types.js";
import { fromModelMessages, toModelMessages } from "./ai-sdk.js";
import {
  fromLangChainMessages,
  fromLangChainStored,
  toLangChainMessages,
  toLangChainStored,
} from "./langchain.js";
import { fromPiMessage, fromPiMessages, toPiMessages, type PiAgentMessage } from "./pi-convert.js";
import {
  compactResponsesItems,
  fromResponsesItems,
  toResponsesItems,
  type ResponsesItemLike,
} from "./responses.js";

type Rec = Record<string, unknown>;

/** A value nested `n` levels deep, built without recursion. */
function deep(n: number): Rec {
  let v: Rec = { leaf: true };
  for (let i = 0; i < n; i++) v = { a: v };
  return v;
}

/** Each hostile kind: makes an array of the base items hostile at index 1 (`holder` picks the object to plant in). */
const KINDS: Record<string, (items: unknown[], holder: (item: unknown) => Rec) => unknown[]> = {
  "self-referencing message": (items, holder) => {
    holder(items[1]).extra = items[1];
    return items;
  },
  "100k-deep nesting": (items, holder) => {
    holder(items[1]).extra = deep(100_000);
    return items;
  },
  BigInt: (items, holder) => {
    holder(items[1]).extra = 10n;
    return items;
  },
  "getter that throws": (items, holder) => {
    Object.defineProperty(holder(items[1]), "extra", {
      enumerable: true,
      get() {
        throw new Error("boom");
      },
    });
    return items;
  },
  "sparse array": (items) => {
    const sparse: unknown[] = [items[0]];
    sparse[2] = items[1];
    return sparse;
  },
  "objects shared 2^40 times (an endless JSON form)": (items, holder) => {
    let v: Rec = { leaf: true };
    for (let i = 0; i < 40; i++) v = { l: v, r: v };
    holder(items[1]).extra = v;
    return items;
  },
  "non-plain object": (items, holder) => {
    holder(items[1]).extra = new Map([["a", 1]]);
    return items;
  },
};

const csMessages = (): Message[] => [
  { role: "user", content: [{ type: "text", text: "hi" }] },
  { role: "assistant", content: [{ type: "text", text: "yo" }] },
  { role: "user", content: [{ type: "text", text: "more" }] },
];
const self = (m: unknown): Rec => m as Rec;

interface EntryPoint {
  items: () => unknown[];
  holder: (item: unknown) => Rec;
  call: (items: unknown[]) => unknown;
}

const ENTRY_POINTS: Record<string, EntryPoint> = {
  "ai-sdk fromModelMessages": {
    items: () => [
      { role: "user", content: "hi" },
      { role: "assistant", content: [{ type: "text", text: "yo" }] },
    ],
    holder: self,
    call: (items) => fromModelMessages(items as ModelMessage[]),
  },
  "ai-sdk toModelMessages": { items: csMessages, holder: self, call: (m) => toModelMessages(m as Message[]) },
  "langchain fromLangChainMessages": {
    items: () => [new HumanMessage("hi"), new AIMessage("yo")],
    holder: (m) => (m as BaseMessage).additional_kwargs as Rec,
    call: (m) => fromLangChainMessages(m as BaseMessage[]),
  },
  "langchain fromLangChainStored": {
    items: () => [
      { type: "human", data: { content: "hi" } },
      { type: "ai", data: { content: "yo" } },
    ],
    holder: self,
    call: (m) => fromLangChainStored(m as never),
  },
  "langchain toLangChainMessages": {
    items: csMessages,
    holder: self,
    call: (m) => toLangChainMessages(m as Message[]),
  },
  "langchain toLangChainStored": {
    items: csMessages,
    holder: self,
    call: (m) => toLangChainStored(m as Message[]),
  },
  "pi fromPiMessages": {
    items: () => [
      { role: "user", content: "hi", timestamp: 1 },
      { role: "assistant", content: [{ type: "text", text: "yo" }], stopReason: "stop", timestamp: 2 },
    ],
    holder: self,
    call: (m) => fromPiMessages(m as PiAgentMessage[]),
  },
  "pi fromPiMessage (each message)": {
    items: () => [
      { role: "user", content: "hi", timestamp: 1 },
      { role: "assistant", content: [{ type: "text", text: "yo" }], stopReason: "stop", timestamp: 2 },
    ],
    holder: self,
    call: (items) =>
      Array.from({ length: items.length }, (_, i) => {
        if (!(i in items)) throw new ModelError(`messages[${i}]`, "a hole"); // the caller's loop
        try {
          return fromPiMessage(items[i] as PiAgentMessage);
        } catch (e) {
          if (e instanceof ModelError) throw new ModelError(`messages[${i}]`, e.message);
          throw e;
        }
      }),
  },
  "pi toPiMessages": { items: csMessages, holder: self, call: (m) => toPiMessages(m as Message[]) },
  "responses fromResponsesItems": {
    items: () => [
      { role: "user", content: "hi" },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "yo" }] },
    ],
    holder: self,
    call: (m) => fromResponsesItems(m as ResponsesItemLike[]),
  },
  "responses toResponsesItems": {
    items: csMessages,
    holder: self,
    call: (m) => toResponsesItems(m as Message[]),
  },
  "responses compactResponsesItems": {
    items: () => [
      { role: "user", content: "hi" },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "yo" }] },
    ],
    holder: self,
    call: (m) => compactResponsesItems(m as ResponsesItemLike[], { window: 1000 }),
  },
};

/** What can be compared of an item after the call: its own property descriptors, values by identity. */
function snapshot(items: unknown[]): unknown[] {
  return Array.from({ length: items.length }, (_, i) =>
    i in items && items[i] !== null && typeof items[i] === "object"
      ? Object.getOwnPropertyDescriptors(items[i])
      : items[i],
  );
}

describe("adapters refuse hostile arrays with compact-safe's own error", () => {
  for (const [name, ep] of Object.entries(ENTRY_POINTS)) {
    for (const [kind, make] of Object.entries(KINDS)) {
      test(`${name}: ${kind}`, async () => {
        const input = make(ep.items(), ep.holder);
        const before = snapshot(input);
        const length = input.length;
        let thrown: unknown;
        try {
          await ep.call(input);
        } catch (e) {
          thrown = e;
        }
        assert.ok(thrown !== undefined, "refused");
        const e = thrown as Error;
        assert.ok(
          e instanceof CompactSafeError && e instanceof ModelError,
          `expected a ModelError, got ${e?.constructor?.name}: ${e?.message}`,
        );
        assert.equal(e.code, "invalid_message");
        assert.doesNotMatch(e.message, /\n/);
        assert.match(e.message, /^(messages|items)\[1\]/, e.message);
        assert.equal(input.length, length);
        assert.deepEqual(snapshot(input), before, "the input is left as it was");
      });
    }
  }
});
