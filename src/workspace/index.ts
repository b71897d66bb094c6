/** The workspace around a session: pinned anchors and live state. */
export * from "./anchors.js";
export * from "./live-state.js";
