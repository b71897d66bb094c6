/**
 * Part of the AI SDK wire module (`ai-sdk.ts`), kept in a file of its own:
 * a quick check that an AI SDK message is valid for the `ai` package's
 * `modelMessageSchema`, for the shapes most messages have. It accepts only
 * what the schema accepts (a subset: a text, reasoning, tool-call or
 * tool-result part with a text or JSON output, provider options of JSON
 * values) and says nothing of the rest: a message it does not accept is
 * checked by the schema itself, which decides and names the error. The
 * schema's union tries each branch and builds an issue for every one that
 * fails; on a long history that was most of the conversion's cost.
 *
 * It runs after `checkPlainData` (no cycle, no throwing getter, no hole).
 */

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** The deepest JSON value checked here; a deeper one is left to the schema. */
const MAX_DEPTH = 32;

function isRecord(v: unknown): v is Obj {
  if (typeof v !== "object" || v === null || Object.getPrototypeOf(v) !== Object.prototype) return false;
  return Object.getOwnPropertySymbols(v).length === 0;
}

/** The schema's `jsonValueSchema`: null, a string, a finite number, a boolean, an array or a record of them. */
function isJson(v: unknown, depth: number): boolean {
  if (v === null || typeof v === "string" || typeof v === "boolean") return true;
  if (typeof v === "number") return Number.isFinite(v);
  if (depth >= MAX_DEPTH) return false;
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) return false;
    for (let i = 0; i < v.length; i++) if (!isJson(v[i], depth + 1)) return false;
    return true;
  }
  if (!isRecord(v)) return false;
  for (const k of Object.keys(v)) {
    const x = v[k];
    if (x !== undefined && !isJson(x, depth + 1)) return false;
  }
  return true;
}

/** `providerOptions` absent, or a record of records of JSON values (`providerMetadataSchema`). */
function okOptions(po: unknown): boolean {
  if (po === undefined) return true;
  if (!isRecord(po)) return false;
  for (const k of Object.keys(po)) {
    const inner = po[k];
    if (!isRecord(inner)) return false;
    for (const j of Object.keys(inner)) {
      const x = inner[j];
      if (x !== undefined && !isJson(x, 2)) return false;
    }
  }
  return true;
}

function okText(p: Obj): boolean {
  return typeof p.text === "string" && okOptions(p.providerOptions);
}

function okToolCall(p: Obj): boolean {
  return (
    typeof p.toolCallId === "string" &&
    typeof p.toolName === "string" &&
    Object.hasOwn(p, "input") && // the schema's `input: z.unknown()` must be there (undefined will do)
    (p.providerExecuted === undefined || typeof p.providerExecuted === "boolean") &&
    okOptions(p.providerOptions)
  );
}

function okToolResult(p: Obj): boolean {
  if (typeof p.toolCallId !== "string" || typeof p.toolName !== "string" || !okOptions(p.providerOptions))
    return false;
  const o = p.output;
  if (!isObj(o) || !okOptions(o.providerOptions)) return false;
  switch (o.type) {
    case "text":
    case "error-text":
      return typeof o.value === "string";
    case "json":
    case "error-json":
      return isJson(o.value, 1);
    default:
      return false;
  }
}

function okParts(content: unknown, ok: (p: Obj) => boolean): boolean {
  if (!Array.isArray(content)) return false;
  for (let i = 0; i < content.length; i++) {
    const p: unknown = content[i];
    if (!isObj(p) || !ok(p)) return false;
  }
  return true;
}

const userPart = (p: Obj): boolean => p.type === "text" && okText(p);
const assistantPart = (p: Obj): boolean =>
  p.type === "text" || p.type === "reasoning"
    ? okText(p)
    : p.type === "tool-call"
      ? okToolCall(p)
      : p.type === "tool-result" && okToolResult(p);
const toolPart = (p: Obj): boolean => p.type === "tool-result" && okToolResult(p);

/** True when `v` is surely a valid `ModelMessage`; false says only "ask the schema". */
export function surelyValidModelMessage(v: unknown): boolean {
  if (!isObj(v) || !okOptions(v.providerOptions)) return false;
  const c = v.content;
  switch (v.role) {
    case "system":
      return typeof c === "string";
    case "user":
      return typeof c === "string" || okParts(c, userPart);
    case "assistant":
      return typeof c === "string" || okParts(c, assistantPart);
    case "tool":
      return okParts(c, toolPart);
    default:
      return false;
  }
}
