/**
 * fast-check generators of OpenAI Responses input items (openai 6.49 shapes):
 * every item kind the API takes, with the optional fields present or absent
 * (never `undefined`), and coherent conversations of them for compaction.
 */
import fc from "fast-check";
import type { ResponseInputItem } from "openai/resources/responses/responses";

const text = fc.string({ unit: "grapheme", maxLength: 24 });
const id = (prefix: string) => fc.stringMatching(/^[a-z0-9]{1,10}$/).map((s) => `${prefix}_${s}`);
const status = fc.constantFrom("in_progress", "completed", "incomplete");
/** An opaque blob like `encrypted_content` (base64 with padding, and the odd non-base64 byte). */
const blob = fc.oneof(
  fc.base64String({ minLength: 4, maxLength: 64 }),
  fc.string({ unit: "binary", minLength: 1, maxLength: 40 }),
);
/** Function-call arguments as models write them: compact or spaced JSON, and strings that are not JSON. */
const args = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v, null, 2)),
  fc
    .dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 8 }))
    .map((v) => ` ${JSON.stringify(v)} `),
  text,
);

const opt = <T>(r: { [K in keyof T]: fc.Arbitrary<T[K]> }, required: (keyof T)[]) =>
  fc.record(r, { requiredKeys: required as never[] });

const inputText = fc.record({ type: fc.constant("input_text" as const), text });
const inputImage = opt(
  {
    type: fc.constant("input_image" as const),
    detail: fc.constantFrom("low" as const, "high" as const, "auto" as const),
    image_url: fc.constantFrom("https://example.com/a.png", "data:image/png;base64,iVBORw0KGgo="),
    file_id: id("file"),
  },
  ["type", "detail"],
);
const inputFile = opt(
  {
    type: fc.constant("input_file" as const),
    file_id: id("file"),
    filename: fc.constantFrom("a.pdf", "notes.txt"),
    file_data: fc.base64String({ maxLength: 16 }),
  },
  ["type"],
);
const inputParts = fc.array(fc.oneof({ weight: 4, arbitrary: inputText }, inputImage, inputFile), {
  minLength: 0,
  maxLength: 3,
});

const annotation = fc.record({
  type: fc.constant("url_citation" as const),
  url: fc.constant("https://example.com"),
  title: text,
  start_index: fc.nat(20),
  end_index: fc.nat(40),
});
const outputText = opt(
  {
    type: fc.constant("output_text" as const),
    text,
    annotations: fc.array(annotation, { maxLength: 2 }),
    logprobs: fc.constant([] as never[]),
  },
  ["type", "text", "annotations"],
);
const refusal = fc.record({ type: fc.constant("refusal" as const), refusal: text });

const inputMessage = opt(
  {
    type: fc.constant("message" as const),
    role: fc.constantFrom("user" as const, "system" as const, "developer" as const),
    content: fc.oneof(text, inputParts),
    status,
  },
  ["role", "content"],
);
const easyAssistant = opt(
  {
    type: fc.constant("message" as const),
    role: fc.constant("assistant" as const),
    content: text,
    phase: fc.constantFrom("commentary" as const, "final_answer" as const),
  },
  ["role", "content"],
);
const outputMessage = opt(
  {
    type: fc.constant("message" as const),
    id: id("msg"),
    role: fc.constant("assistant" as const),
    status,
    content: fc.array(fc.oneof({ weight: 3, arbitrary: outputText }, refusal), { maxLength: 3 }),
    phase: fc.constantFrom("commentary" as const, "final_answer" as const),
  },
  ["type", "id", "role", "status", "content"],
);

const functionCall = opt(
  {
    type: fc.constant("function_call" as const),
    call_id: id("call"),
    name: fc.constantFrom("shell", "read_file", "search"),
    arguments: args,
    id: id("fc"),
    status,
  },
  ["type", "call_id", "name", "arguments"],
);
const functionOutput = opt(
  {
    type: fc.constant("function_call_output" as const),
    call_id: id("call"),
    output: fc.oneof(text, fc.array(fc.oneof(inputText, inputImage, inputFile), { maxLength: 3 })),
    id: id("fco"),
    status,
  },
  ["type", "call_id", "output"],
);
const reasoning = opt(
  {
    type: fc.constant("reasoning" as const),
    id: id("rs"),
    summary: fc.array(fc.record({ type: fc.constant("summary_text" as const), text }), { maxLength: 2 }),
    content: fc.array(fc.record({ type: fc.constant("reasoning_text" as const), text }), { maxLength: 2 }),
    encrypted_content: fc.option(blob, { nil: null }),
    status,
  },
  ["type", "id", "summary"],
);
const customCall = opt(
  {
    type: fc.constant("custom_tool_call" as const),
    call_id: id("call"),
    name: fc.constant("apply_patch"),
    input: text,
    id: id("ctc"),
  },
  ["type", "call_id", "name", "input"],
);
const customOutput = opt(
  {
    type: fc.constant("custom_tool_call_output" as const),
    call_id: id("call"),
    output: fc.oneof(text, fc.array(inputText, { maxLength: 2 })),
    id: id("cto"),
  },
  ["type", "call_id", "output"],
);
const localShellCall = fc.record({
  type: fc.constant("local_shell_call" as const),
  id: id("lsh"),
  call_id: id("call"),
  action: fc.record({
    type: fc.constant("exec" as const),
    command: fc.array(text, { minLength: 1, maxLength: 3 }),
    env: fc.dictionary(fc.stringMatching(/^[A-Z]{1,5}$/), text, { maxKeys: 2 }),
  }),
  status,
});
const localShellOutput = opt(
  { type: fc.constant("local_shell_call_output" as const), id: id("call"), output: text, status },
  ["type", "id", "output"],
);
const computerCall = fc.record({
  type: fc.constant("computer_call" as const),
  id: id("cu"),
  call_id: id("call"),
  action: fc.record({
    type: fc.constant("click" as const),
    button: fc.constant("left" as const),
    x: fc.nat(99),
    y: fc.nat(99),
  }),
  pending_safety_checks: fc.constant([] as never[]),
  status,
});
const computerOutput = fc.record({
  type: fc.constant("computer_call_output" as const),
  call_id: id("call"),
  output: fc.record({
    type: fc.constant("computer_screenshot" as const),
    image_url: fc.constant("data:image/png;base64,AA=="),
  }),
});
const shellCall = fc.record({
  type: fc.constant("shell_call" as const),
  call_id: id("call"),
  action: fc.record({ commands: fc.array(text, { minLength: 1, maxLength: 2 }) }),
});
const shellOutput = fc.record({
  type: fc.constant("shell_call_output" as const),
  call_id: id("call"),
  output: fc.array(
    fc.record({
      stdout: text,
      stderr: text,
      outcome: fc.record({ type: fc.constant("exit" as const), exit_code: fc.nat(2) }),
    }),
    { maxLength: 2 },
  ),
});
const applyPatchCall = fc.record({
  type: fc.constant("apply_patch_call" as const),
  call_id: id("call"),
  status: fc.constantFrom("in_progress" as const, "completed" as const),
  operation: fc.record({
    type: fc.constant("update_file" as const),
    path: fc.constant("src/a.ts"),
    diff: text,
  }),
});
const applyPatchOutput = opt(
  {
    type: fc.constant("apply_patch_call_output" as const),
    call_id: id("call"),
    status: fc.constantFrom("completed" as const, "failed" as const),
    output: fc.option(text, { nil: null }),
  },
  ["type", "call_id", "status"],
);
const webSearch = fc.record({
  type: fc.constant("web_search_call" as const),
  id: id("ws"),
  status: fc.constantFrom("completed" as const, "searching" as const),
  action: fc.record({ type: fc.constant("search" as const), query: text }),
});
const fileSearch = fc.record({
  type: fc.constant("file_search_call" as const),
  id: id("fs"),
  queries: fc.array(text, { maxLength: 2 }),
  status: fc.constant("completed" as const),
});
const imageGeneration = fc.record({
  type: fc.constant("image_generation_call" as const),
  id: id("ig"),
  result: fc.option(fc.base64String({ maxLength: 16 }), { nil: null }),
  status: fc.constant("completed" as const),
});
const codeInterpreter = fc.record({
  type: fc.constant("code_interpreter_call" as const),
  id: id("ci"),
  code: fc.option(text, { nil: null }),
  container_id: id("cntr"),
  outputs: fc.constant(null),
  status: fc.constant("completed" as const),
});
const mcpCall = opt(
  {
    type: fc.constant("mcp_call" as const),
    id: id("mcp"),
    server_label: fc.constant("git"),
    name: fc.constant("log"),
    arguments: args,
    output: fc.option(text, { nil: null }),
  },
  ["type", "id", "server_label", "name", "arguments"],
);
const mcpApproval = fc.oneof(
  fc.record({
    type: fc.constant("mcp_approval_request" as const),
    id: id("mcpr"),
    server_label: fc.constant("git"),
    name: fc.constant("push"),
    arguments: args,
  }),
  fc.record({
    type: fc.constant("mcp_approval_response" as const),
    approval_request_id: id("mcpr"),
    approve: fc.boolean(),
  }),
  fc.record({
    type: fc.constant("mcp_list_tools" as const),
    id: id("mcpl"),
    server_label: fc.constant("git"),
    tools: fc.constant([]),
  }),
);
const itemReference = fc.oneof(
  fc.record({ id: id("msg") }),
  fc.record({ type: fc.constant("item_reference" as const), id: id("msg") }),
);
const compaction = opt({ type: fc.constant("compaction" as const), encrypted_content: blob, id: id("cmp") }, [
  "type",
  "encrypted_content",
]);
const unknown = fc.record({
  type: fc.constantFrom("future_item", "x_extension"),
  payload: fc.jsonValue({ maxDepth: 2 }),
});

/** Any one input item. */
export const responsesItem: fc.Arbitrary<ResponseInputItem> = fc.oneof(
  inputMessage,
  easyAssistant,
  outputMessage,
  functionCall,
  functionOutput,
  reasoning,
  customCall,
  customOutput,
  localShellCall,
  localShellOutput,
  computerCall,
  computerOutput,
  shellCall,
  shellOutput,
  applyPatchCall,
  applyPatchOutput,
  webSearch,
  fileSearch,
  imageGeneration,
  codeInterpreter,
  mcpCall,
  mcpApproval,
  itemReference,
  compaction,
  unknown,
) as unknown as fc.Arbitrary<ResponseInputItem>;

/** As the items arrive from JSON (a file, the wire): plain objects, never null-prototype ones. */
const asJson = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** Any list of input items, in any order (the conversion does not care whether calls pair up). */
export const responsesItems = fc.array(responsesItem, { maxLength: 25 }).map(asJson);

interface Step {
  reasoning: string | null;
  calls: { args: string; big: boolean; parts: boolean }[];
  answer: string | null;
}

const step: fc.Arbitrary<Step> = fc.record({
  reasoning: fc.option(fc.base64String({ minLength: 8, maxLength: 200 }), { nil: null }),
  calls: fc.array(fc.record({ args, big: fc.boolean(), parts: fc.boolean() }), {
    minLength: 1,
    maxLength: 2,
  }),
  answer: fc.option(text, { nil: null }),
});

/**
 * A coherent Codex-like conversation: rounds of a user request followed by
 * steps of (encrypted reasoning, function calls, their outputs, an answer),
 * every call answered, with unique ids.
 */
export const responsesConversation: fc.Arbitrary<ResponseInputItem[]> = fc
  .array(
    fc.record({
      user: fc.oneof(text, inputParts).map((c) => (c === "" ? "go on" : c)),
      steps: fc.array(step, { maxLength: 4 }),
    }),
    { minLength: 1, maxLength: 8 },
  )
  .map((rounds) => {
    const out: Record<string, unknown>[] = [];
    let n = 0;
    for (const r of rounds) {
      out.push(
        typeof r.user === "string"
          ? { role: "user", content: r.user }
          : { type: "message", role: "user", content: r.user },
      );
      for (const s of r.steps) {
        n++;
        if (s.reasoning !== null)
          out.push({
            type: "reasoning",
            id: `rs_${n}`,
            summary: [],
            encrypted_content: `gAAAAB${s.reasoning}==`,
          });
        const ids = s.calls.map((_, k) => `call_${n}_${k}`);
        s.calls.forEach((c, k) =>
          out.push({
            type: "function_call",
            id: `fc_${n}_${k}`,
            call_id: ids[k],
            name: "shell",
            arguments: c.args,
            status: "completed",
          }),
        );
        s.calls.forEach((c, k) => {
          const body = c.big ? `${"output line ✓\n".repeat(600)}end ${ids[k]}` : `ok ${ids[k]}`;
          out.push({
            type: "function_call_output",
            call_id: ids[k],
            output: c.parts ? [{ type: "input_text", text: body }] : body,
          });
        });
        if (s.answer !== null)
          out.push({
            type: "message",
            id: `msg_${n}`,
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: s.answer || "done", annotations: [] }],
          });
      }
    }
    return asJson(out) as unknown as ResponseInputItem[];
  });

/** A coherent conversation with any other items (unpaired calls and outputs among them) inserted anywhere. */
export const responsesConversationWithNoise: fc.Arbitrary<ResponseInputItem[]> = fc
  .tuple(responsesConversation, responsesItems, fc.array(fc.nat(), { maxLength: 25 }))
  .map(([conversation, extra, positions]) => {
    const out = [...conversation];
    extra.forEach((it, i) => out.splice((positions[i] ?? 0) % (out.length + 1), 0, it));
    return out;
  });
