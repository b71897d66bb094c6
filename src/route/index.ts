/** The library's route for a compaction of a file (journal I/O, engine and exporters composed). */
export * from "./compact-journal.js";
export * from "./audit.js";
export * from "./compact-session.js";
export * from "./session.js";
export * from "./native-summarizer.js";
