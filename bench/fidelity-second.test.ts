import { test } from "node:test";
import assert from "node:assert/strict";
import {
  compareSections,
  cutInObjectiveOrNextStep,
  cutMarkers,
  noteSections,
  sectionSize,
  shorterStillTrue,
  stillTrue,
} from "./fidelity-second.js";

const note = (objective: string, next: string, work: string) =>
  [
    "[compact-safe checkpoint]",
    "## Objective",
    objective,
    "## Next step",
    next,
    "## Work done",
    work,
    "## Coverage",
    "summary; last round kept: 3 messages",
  ].join("\n");

test("noteSections: the ## sections in order, the frame sections left out", () => {
  const s = noteSections(note("Port the parser.", "Run the tests.", "- edited src/a.ts"));
  assert.deepEqual(
    s.map((x) => x.title),
    ["Objective", "Next step", "Work done"],
  );
  assert.equal(s[1]!.body, "Run the tests.");
});

test("cut markers: any bracketed ellipsis saying something was cut, found only in Objective and Next step", () => {
  assert.deepEqual(cutMarkers("Done [… cut 146 chars] ut…. Continue [… cut 100 chars] ng"), [
    "[… cut 146 chars]",
    "[… cut 100 chars]",
  ]);
  assert.deepEqual(cutMarkers("- [… 33 more commands cut]"), ["[… 33 more commands cut]"]);
  assert.deepEqual(cutMarkers("[… see above] and a cutter"), []);
  assert.deepEqual(cutInObjectiveOrNextStep(note("Port it.", "Run [… cut 12 chars] it", "- x")), [
    "Next step",
  ]);
  // A cut elsewhere is not this bar's concern.
  assert.deepEqual(cutInObjectiveOrNextStep(note("Port it.", "Run it.", "- [… cut 9 chars]")), []);
  assert.deepEqual(cutInObjectiveOrNextStep(note("Port [… cut 3 chars]", "Run it.", "")), ["Objective"]);
});

test("sectionSize: cut markers and extra whitespace do not count", () => {
  assert.equal(sectionSize("abc  [… cut 500 chars]\n\n def"), "abc def".length);
});

test("stillTrue: the next step and pending work only while nothing was done; the objective while no new direction", () => {
  const idle = { calls: 0, directions: 0 };
  const worked = { calls: 3, directions: 0 };
  const asked = { calls: 0, directions: 1 };
  assert.equal(stillTrue("Next step", idle), true);
  assert.equal(stillTrue("Next step", worked), false);
  assert.equal(stillTrue("Pending", worked), false);
  assert.equal(stillTrue("Plan", worked), false);
  assert.equal(stillTrue("Objective", worked), true);
  assert.equal(stillTrue("Objective", asked), false);
  assert.equal(stillTrue("Work done", { calls: 9, directions: 9 }), true);
  assert.equal(stillTrue("Files changed", { calls: 9, directions: 9 }), true);
});

test("compareSections: a section still true that shrank or vanished is shorter; one no longer true is not", () => {
  const first = note(
    "Port the parser to the new API.",
    "Run npm test in packages/core.",
    "- edited src/a.ts\n- edited src/b.ts",
  );
  const worked = { calls: 2, directions: 0 };
  // Same note again: nothing shorter.
  assert.deepEqual(shorterStillTrue(compareSections(first, first, worked)), []);
  // Work done cut to a marker and the Next step shortened after the session worked on.
  const second = note("Port the parser to the new API.", "Done.", "- edited src/a.ts [… cut 20 chars]");
  const shorter = shorterStillTrue(compareSections(first, second, worked)).map((c) => c.title);
  assert.deepEqual(shorter, ["Work done"]);
  // Nothing done since: the shortened Next step counts too.
  assert.deepEqual(
    shorterStillTrue(compareSections(first, second, { calls: 0, directions: 0 })).map((c) => c.title),
    ["Next step", "Work done"],
  );
  // A section the second note leaves out is size 0.
  const without = "[compact-safe checkpoint]\n## Objective\nPort the parser to the new API.";
  assert.deepEqual(
    shorterStillTrue(compareSections(first, without, worked)).map((c) => c.title),
    ["Work done"],
  );
  // A longer second note is fine.
  assert.deepEqual(
    shorterStillTrue(compareSections(first, first + "\nmore", { calls: 0, directions: 0 })),
    [],
  );
});
