/**
 * The summarizers' corpus suite (skipped, saying so, on a clone without
 * ../shared). The extractive summarizer on every real session in ../shared/corpus
 * (imported by the formats layer): bounded, every section present,
 * deterministic, and, given room, every modified path, the head of every
 * message the user wrote (a slash command as `/name args`) and every error
 * first line of the span appears in the note.
 */
import { test } from "node:test";
import { corpusDir, corpusFiles, corpusSuite } from "../../test/support.js";
import assert from "node:assert/strict";
import { importFile } from "../formats/detect.js";
import { liveContext } from "../journal/tree.js";
import type { Message, ToolResultBlock, ToolUseBlock } from "../model/index.js";
import { extractiveSummary, splitSections, SUMMARY_SECTIONS, errorLine } from "./extractive/index.js";
import { isPlainUserMessage, modifiedPathsOf, ownUserWords, textOf } from "./transcript.js";
import { isInterruption, rejectionOf, unwrapUserText } from "./extractive/user-text.js";

corpusSuite("summarizers", () => {
  for (const file of corpusFiles()) {
    test(`extractive note of ${file.slice(corpusDir.length + 1)}`, async () => {
      const { entries } = await importFile(file);
      const messages: Message[] = liveContext(entries);
      assert.ok(messages.length > 0);

      const note = extractiveSummary({ messages });
      assert.ok(note.length <= 8000, `${note.length} chars`);
      const s = splitSections(note).sections;
      for (const name of SUMMARY_SECTIONS) assert.notEqual((s.get(name) ?? "").trim(), "", `${name} empty`);
      assert.equal(extractiveSummary({ messages: structuredClone(messages) }), note);

      // With room for everything, nothing of what the bench measures is lost.
      const roomy = extractiveSummary({ messages, maxTokens: 400_000 });
      const paths = new Set<string>();
      const errors = new Set<string>();
      const users: string[] = [];
      for (const m of messages) {
        const own = ownUserWords(m);
        if (isPlainUserMessage(m) && !isInterruption(textOf(m)) && own.length > 0) {
          // The user's own words: a slash command as /name args; expanded prompts, command output, the
          // environment and instructions the harness sends are not theirs.
          const u = unwrapUserText(own.map((b) => b.text).join("\n"), m);
          if (u.kind === "direction" || u.kind === "command") users.push(u.text);
        }
        for (const b of m.content) {
          if (b.type === "tool_use")
            for (const p of modifiedPathsOf(b as ToolUseBlock)) paths.add(p.replace(/\s+/g, " ").trim());
          if (b.type === "tool_result" && (b as ToolResultBlock).is_error === true) {
            const content = (b as ToolResultBlock).content;
            // A rejected or interrupted call is the user's word (quoted under the constraints), not an error line.
            const said = rejectionOf(content);
            errors.add(
              said !== undefined ? said.split("\n")[0].slice(0, 100) : errorLine(content).slice(0, 120),
            );
          }
        }
      }
      for (const p of paths) assert.ok(roomy.includes(p), `path ${p}`);
      for (const u of users)
        assert.ok(roomy.includes(u.slice(0, 200)), `user message ${JSON.stringify(u.slice(0, 60))}`);
      for (const e of errors) assert.ok(roomy.includes(e), `error ${JSON.stringify(e)}`);
    });
  }
});
