// The page script of `compact-safe report`: renders the report's data model
// (the JSON in #report-data, the same object `report --json` prints).
// Session text is only ever put in the page with textContent, never parsed
// as markup; the page makes no request. Rows are rendered on demand (only
// those in view), so a history of 100k messages stays usable.
(function () {
  "use strict";
  var ROW_H = 26;
  var OVERSCAN = 12;
  var COLLAPSE_AT = 1200;
  var FATES = ["kept", "bounded", "stubbed", "summarized", "dropped"];
  var FATE_TEXT = {
    kept: "kept verbatim",
    bounded: "bounded",
    stubbed: "stubbed (prune-only)",
    summarized: "summarized",
    dropped: "dropped",
  };
  var CATS = ["user", "assistant", "tool_calls", "tool_results", "thinking", "checkpoint", "system", "other"];
  var CAT_TEXT = {
    user: "user text",
    assistant: "assistant text",
    tool_calls: "tool calls",
    tool_results: "tool results",
    thinking: "thinking",
    checkpoint: "checkpoint",
    system: "system",
    other: "other",
  };

  var model = JSON.parse(document.getElementById("report-data").textContent);
  var state = {
    view: 0,
    off: {},
    visible: [],
    sel: -1,
    query: "",
    matches: [],
    match: -1,
    tab: "checkpoint",
  };
  var lower = null; // per message: lower-cased searchable text, built at the first search

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function clear(e) {
    while (e.firstChild) e.removeChild(e.firstChild);
  }
  function num(n) {
    return Number(n).toLocaleString("en-US");
  }
  function size(chars) {
    if (chars < 1000) return chars + " ch";
    if (chars < 1e6) return (chars / 1000).toFixed(1) + " kch";
    return (chars / 1e6).toFixed(1) + " Mch";
  }
  function oneLine(s, n) {
    s = s.replace(/\s+/g, " ").trim();
    return s.length > n ? s.slice(0, n) + "…" : s;
  }

  function chars(b) {
    return b.chars !== undefined ? b.chars : b.text.length;
  }
  function why(r) {
    return r.why !== undefined ? r.why : model.why_default[r.fate];
  }

  var $ = function (id) {
    return document.getElementById(id);
  };

  function view() {
    return model.views[state.view];
  }

  function messageChars(m) {
    var n = 0;
    for (var i = 0; i < m.blocks.length; i++) n += chars(m.blocks[i]);
    return n;
  }

  function rowLabel(v, r) {
    var m = model.messages[r.m];
    var parts = [];
    for (var i = 0; i < m.blocks.length; i++) {
      var b = m.blocks[i];
      if (b.kind === "tool_use") parts.push("→ " + b.name + " " + b.text);
      else if (b.kind === "tool_result") {
        var call = r.call !== undefined ? callName(v, r.call, b.id) : null;
        parts.push("← " + (call || "result") + (b.error ? " (error)" : "") + ": " + b.text);
      } else if (b.kind === "thinking") parts.push("(thinking) " + b.text);
      else parts.push(b.text);
    }
    return oneLine(parts.join("  "), 240);
  }

  function callName(v, rowIndex, id) {
    var m = model.messages[v.rows[rowIndex].m];
    for (var i = 0; i < m.blocks.length; i++)
      if (m.blocks[i].kind === "tool_use" && m.blocks[i].id === id) return m.blocks[i].name;
    return null;
  }

  // Header: the file and what it holds.
  function renderHeader() {
    var s = model.source;
    $("file").textContent = s.file;
    $("meta").textContent =
      s.format +
      " · " +
      num(s.bytes) +
      " bytes · " +
      num(s.entries) +
      " entries · " +
      model.views.length +
      " compaction" +
      (model.views.length === 1 ? "" : "s") +
      " shown · window " +
      num(model.window) +
      " tokens" +
      (model.preview_note ? " · preview: " + model.preview_note : "");
  }

  function renderViews() {
    var nav = $("view-list");
    clear(nav);
    model.views.forEach(function (v, i) {
      var b = el("button");
      b.setAttribute("data-view", v.id);
      if (i === state.view) b.className = "on";
      var badge = el(
        "span",
        "badge " + verdictClass(v),
        v.verdict.kept ? "✓ kept" : v.verdict.kept === null ? "– not judged" : "✗ violation",
      );
      b.appendChild(badge);
      b.appendChild(el("div", null, v.preview ? "preview (not written)" : v.source));
      var label = v.preview
        ? "dry run, extractive summarizer"
        : v.id.length > 18
          ? v.id.slice(0, 18) + "…"
          : v.id;
      b.appendChild(el("div", "meta", label));
      b.appendChild(
        el(
          "div",
          "meta",
          v.path + " · " + num(v.tokens.before_total) + " → " + num(v.tokens.after_total) + " tok",
        ),
      );
      b.addEventListener("click", function () {
        selectView(i);
      });
      nav.appendChild(b);
    });
    if (model.views.length === 0) nav.appendChild(el("div", "empty", "no compaction to show"));
  }

  /** ok, bad, or unjudged (no history before the compaction: neither kept nor lost). */
  function verdictClass(v) {
    return v.verdict.kept ? "ok" : v.verdict.kept === null ? "unjudged" : "bad";
  }

  function renderVerdict(v) {
    var box = $("verdict");
    clear(box);
    box.setAttribute("data-kept", String(v.verdict.kept));
    var head = v.verdict.kept
      ? "✓ kept the survival contract"
      : v.verdict.kept === null
        ? "– not judgeable: no history before it in the file"
        : "✗ VIOLATION of the survival contract";
    box.appendChild(el("span", verdictClass(v), head));
    var notes = [];
    var l = v.verdict.losses;
    var lostParts = [
      [l.user_texts.length, "user text"],
      [l.tool_calls.length, "tool call"],
      [l.tool_results.length, "tool result"],
      [l.assistant_texts.length, "assistant text"],
    ]
      .filter(function (p) {
        return p[0] > 0;
      })
      .map(function (p) {
        return p[0] + " " + p[1] + (p[0] === 1 ? "" : "s");
      });
    if (lostParts.length) notes.push("lost " + lostParts.join(", "));
    if (v.verdict.placeholder) notes.push("placeholder summary");
    if (v.verdict.stacked_checkpoints) notes.push("stacked checkpoints");
    var native = v.verdict.provider_compaction;
    if (native)
      notes.push(
        native.provider +
          " native compaction" +
          (native.opaque
            ? " (summary encrypted: judged on what else the context kept)"
            : " (summary of " + native.summary_chars + " characters)"),
      );
    box.appendChild(
      el(
        "span",
        "meta",
        "  · " +
          (v.preview ? "preview" : v.source) +
          ", " +
          v.path +
          ", " +
          num(v.verdict.messages_before) +
          " → " +
          num(v.verdict.messages_after) +
          " messages" +
          (notes.length ? " · " + notes.join("; ") : ""),
      ),
    );
    if (v.verdict.reason) box.appendChild(el("span", "reason", v.verdict.reason));
  }

  function renderBars(v) {
    var box = $("bars");
    clear(box);
    var max = Math.max(model.window, v.tokens.before_total, v.tokens.after_total, 1);
    [
      ["before", v.tokens.before, v.tokens.before_total],
      ["after", v.tokens.after, v.tokens.after_total],
    ].forEach(function (line) {
      var row = el("div", "bar-line");
      row.appendChild(el("span", null, line[0]));
      var bar = el("div", "bar");
      bar.setAttribute("data-bar", line[0]);
      CATS.forEach(function (c) {
        if (!line[1][c]) return;
        var s = el("span");
        s.style.width = (100 * line[1][c]) / max + "%";
        s.style.background = "var(--c-" + c + ")";
        s.title = CAT_TEXT[c] + ": " + num(line[1][c]) + " tokens";
        bar.appendChild(s);
      });
      if (max > model.window) {
        // The window, where the history outgrows it.
        var win = el("i", "win");
        win.style.left = (100 * model.window) / max + "%";
        win.title = "window: " + num(model.window) + " tokens";
        bar.appendChild(win);
      }
      row.appendChild(bar);
      row.appendChild(
        el(
          "span",
          null,
          num(line[2]) + " tok (" + Math.round((100 * line[2]) / model.window) + "% of window)",
        ),
      );
      box.appendChild(row);
    });
    var cats = el("div", "cats");
    CATS.forEach(function (c) {
      if (!v.tokens.before[c] && !v.tokens.after[c]) return;
      var s = el("span");
      var i = el("i");
      i.style.background = "var(--c-" + c + ")";
      s.appendChild(i);
      s.appendChild(
        document.createTextNode(CAT_TEXT[c] + " " + num(v.tokens.before[c]) + " → " + num(v.tokens.after[c])),
      );
      cats.appendChild(s);
    });
    box.appendChild(cats);
  }

  function renderLegend(v) {
    var box = $("legend");
    clear(box);
    FATES.forEach(function (f) {
      var b = el("button", state.off[f] ? "off" : "");
      b.setAttribute("data-fate", f);
      b.title = "show or hide the rows " + FATE_TEXT[f];
      var i = el("i");
      i.style.background = "var(--" + f + ")";
      b.appendChild(i);
      b.appendChild(document.createTextNode(FATE_TEXT[f] + " "));
      b.appendChild(el("span", "n", v.counts[f]));
      b.addEventListener("click", function () {
        state.off[f] = !state.off[f];
        b.className = state.off[f] ? "off" : "";
        filter();
      });
      box.appendChild(b);
    });
  }

  function filter() {
    var v = view();
    var keepRow = state.sel >= 0 ? state.visible[state.sel] : -1;
    state.visible = [];
    for (var i = 0; i < v.rows.length; i++) if (!state.off[v.rows[i].fate]) state.visible.push(i);
    state.sel = keepRow >= 0 ? state.visible.indexOf(keepRow) : -1;
    $("spacer").style.height = state.visible.length * ROW_H + "px";
    runSearch(false);
    renderRows();
  }

  // The timeline: only the rows in view (and a few around) are in the page.
  function renderRows() {
    var v = view();
    var tl = $("timeline");
    var spacer = $("spacer");
    var first = Math.max(0, Math.floor(tl.scrollTop / ROW_H) - OVERSCAN);
    var last = Math.min(state.visible.length, Math.ceil((tl.scrollTop + tl.clientHeight) / ROW_H) + OVERSCAN);
    var matchSet = state.matchSet || {};
    var frag = document.createDocumentFragment();
    for (var k = first; k < last; k++) {
      var ri = state.visible[k];
      var r = v.rows[ri];
      var m = model.messages[r.m];
      var cls = "row f-" + r.fate;
      if (k === state.sel) cls += " sel";
      if (r.lost) cls += " lost";
      if (matchSet[ri]) cls += " match";
      var row = el("div", cls);
      row.style.top = k * ROW_H + "px";
      row.setAttribute("data-row", String(ri));
      row.setAttribute("data-fate", r.fate);
      row.appendChild(el("span", "n", "#" + (ri + 1)));
      row.appendChild(el("span", "role", m.role));
      row.appendChild(el("span", "fate " + r.fate, r.lost ? "LOST" : r.fate));
      row.appendChild(el("span", "text", rowLabel(v, r)));
      row.appendChild(el("span", "size", size(messageChars(m))));
      row.title = why(r) + (r.lost ? " — " + r.lost.join(", ") : "");
      frag.appendChild(row);
    }
    clear(spacer);
    spacer.appendChild(frag);
    if (v.rows.length === 0)
      spacer.appendChild(el("div", "empty", "no history before this compaction in the file"));
  }

  function select(k, scroll) {
    if (state.visible.length === 0) return;
    k = Math.max(0, Math.min(state.visible.length - 1, k));
    state.sel = k;
    if (scroll) {
      var tl = $("timeline");
      var top = k * ROW_H;
      if (top < tl.scrollTop) tl.scrollTop = top;
      else if (top + ROW_H > tl.scrollTop + tl.clientHeight) tl.scrollTop = top + ROW_H - tl.clientHeight;
    }
    state.tab = "message";
    renderRows();
    renderPanel();
  }

  // Long texts are collapsed with their size; the button shows what the report holds of them.
  function textBlock(parent, head, tail, chars) {
    var shown = head.length + (tail ? tail.length : 0);
    var pre = el("pre");
    parent.appendChild(pre);
    function full() {
      clear(pre);
      pre.appendChild(document.createTextNode(head));
      if (tail) {
        pre.appendChild(el("div", "omitted", "… " + num(chars - shown) + " characters not in the report …"));
        pre.appendChild(document.createTextNode(tail));
      }
    }
    if (shown <= COLLAPSE_AT) {
      full();
      return;
    }
    pre.textContent = head.slice(0, COLLAPSE_AT) + "…";
    var more = el("button", "more", "show all (" + size(chars) + ")");
    more.addEventListener("click", function () {
      full();
      more.remove();
    });
    parent.appendChild(more);
  }

  function rowLink(parent, v, ri, text) {
    var a = el("button", "link", text);
    a.addEventListener("click", function () {
      var k = state.visible.indexOf(ri);
      if (k < 0) {
        state.off = {};
        renderLegend(v);
        filter();
        k = state.visible.indexOf(ri);
      }
      select(k, true);
    });
    parent.appendChild(a);
  }

  function renderMessage(panel) {
    var v = view();
    if (state.sel < 0) {
      panel.appendChild(el("div", "empty", "select a row (click, or j / k)"));
      return;
    }
    var ri = state.visible[state.sel];
    var r = v.rows[ri];
    var m = model.messages[r.m];
    panel.appendChild(
      el("h3", null, "Message #" + (ri + 1) + " · " + m.role + " · " + num(m.tokens) + " tokens"),
    );
    var f = el("div", "why");
    f.appendChild(el("span", "fate " + r.fate, FATE_TEXT[r.fate]));
    f.appendChild(document.createTextNode(": " + why(r)));
    panel.appendChild(f);
    if (r.lost) panel.appendChild(el("div", "lostmark", "Lost (contract): " + r.lost.join(", ")));
    m.blocks.forEach(function (b) {
      var head = el("div", "block-head");
      if (b.kind === "tool_use") {
        head.textContent = "tool call " + b.name + " (" + b.id + ")";
        panel.appendChild(head);
        textBlock(panel, b.text, b.tail, chars(b));
        (r.results || []).forEach(function (x) {
          rowLink(panel, v, x, "result: message #" + (x + 1));
          panel.appendChild(document.createTextNode(" "));
        });
        if (!r.results) panel.appendChild(el("div", "why", "no result in the history before"));
      } else if (b.kind === "tool_result") {
        var name = r.call !== undefined ? callName(v, r.call, b.id) : null;
        head.textContent =
          "tool result" + (name ? " of " + name : "") + (b.error ? " (error)" : "") + " (" + b.id + ")";
        panel.appendChild(head);
        if (r.call !== undefined) rowLink(panel, v, r.call, "call: message #" + (r.call + 1));
        textBlock(panel, b.text, b.tail, chars(b));
      } else {
        head.textContent = b.kind === "other" ? b.name : b.kind;
        panel.appendChild(head);
        textBlock(panel, b.text, b.tail, chars(b));
      }
    });
  }

  function renderCheckpoint(panel) {
    var v = view();
    var c = v.checkpoint;
    panel.appendChild(el("h3", null, "Checkpoint as the model sees it"));
    if (!c) {
      panel.appendChild(
        el(
          "div",
          "empty",
          v.path === "prune-only" ? "no checkpoint: prune-only writes none" : "no checkpoint",
        ),
      );
      return;
    }
    panel.appendChild(el("div", "why", c.marker + " · " + size(c.chars)));
    panel.appendChild(el("div", "block-head", "Summary"));
    textBlock(panel, c.summary, undefined, c.summary.length);
    [
      ["Coverage receipt", c.coverage],
      ["Anchors", c.anchors],
      ["Live state", c.live_state],
    ].forEach(function (p) {
      if (p[1] === null) return;
      panel.appendChild(el("div", "block-head", p[0]));
      textBlock(panel, p[1], undefined, p[1].length);
    });
  }

  function renderPanel() {
    var panel = $("panel");
    clear(panel);
    $("tab-message").className = state.tab === "message" ? "on" : "";
    $("tab-checkpoint").className = state.tab === "checkpoint" ? "on" : "";
    if (state.tab === "message") renderMessage(panel);
    else renderCheckpoint(panel);
    panel.appendChild(
      el(
        "div",
        "keys",
        "Keys: j/↓ k/↑ move · PgUp/PgDn · Home/End · / search · n/N next/previous match · [ ] previous/next compaction · c checkpoint",
      ),
    );
  }

  // Search: over the text the report holds of each message (head and tail).
  function searchText(mi) {
    if (!lower) lower = new Array(model.messages.length);
    if (lower[mi] === undefined) {
      var m = model.messages[mi];
      var s = m.role;
      for (var i = 0; i < m.blocks.length; i++) {
        var b = m.blocks[i];
        s += "\n" + (b.name || "") + " " + (b.id || "") + " " + b.text + (b.tail ? " " + b.tail : "");
      }
      lower[mi] = s.toLowerCase();
    }
    return lower[mi];
  }

  function runSearch(jump) {
    var v = view();
    var q = state.query.toLowerCase();
    state.matches = [];
    state.matchSet = {};
    if (q) {
      for (var k = 0; k < state.visible.length; k++) {
        var ri = state.visible[k];
        if (searchText(v.rows[ri].m).indexOf(q) >= 0) {
          state.matches.push(k);
          state.matchSet[ri] = true;
        }
      }
    }
    state.match = -1;
    if (jump && state.matches.length) nextMatch(1);
    $("match-count").textContent = q
      ? state.matches.length
        ? (state.match + 1 || 0) + " / " + state.matches.length
        : "no match"
      : "";
  }

  function nextMatch(dir) {
    var n = state.matches.length;
    if (!n) return;
    if (state.match < 0) {
      // The first match at or after the selection.
      var from = Math.max(state.sel, 0);
      var i = 0;
      while (i < n && state.matches[i] < from) i++;
      state.match = dir > 0 ? i % n : (i - 1 + n) % n;
    } else state.match = (state.match + dir + n) % n;
    $("match-count").textContent = state.match + 1 + " / " + n;
    select(state.matches[state.match], true);
  }

  function selectView(i) {
    if (i < 0 || i >= model.views.length) return;
    state.view = i;
    state.sel = -1;
    state.tab = "checkpoint";
    var v = view();
    renderViews();
    renderVerdict(v);
    renderBars(v);
    renderLegend(v);
    $("timeline").scrollTop = 0;
    filter();
    renderPanel();
  }

  function onKey(e) {
    if (e.target === $("search")) {
      if (e.key === "Enter") {
        e.preventDefault();
        if (state.matches.length) nextMatch(e.shiftKey ? -1 : 1);
      } else if (e.key === "Escape") $("search").blur();
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var page = Math.max(1, Math.floor($("timeline").clientHeight / ROW_H) - 1);
    var k = state.sel;
    switch (e.key) {
      case "ArrowDown":
      case "j":
        select(k + 1, true);
        break;
      case "ArrowUp":
      case "k":
        select(k < 0 ? 0 : k - 1, true);
        break;
      case "PageDown":
        select(k + page, true);
        break;
      case "PageUp":
        select(k - page, true);
        break;
      case "Home":
        select(0, true);
        break;
      case "End":
        select(state.visible.length - 1, true);
        break;
      case "/":
        $("search").focus();
        break;
      case "n":
        nextMatch(1);
        break;
      case "N":
        nextMatch(-1);
        break;
      case "[":
        selectView(state.view - 1);
        break;
      case "]":
        selectView(state.view + 1);
        break;
      case "c":
        state.tab = "checkpoint";
        renderPanel();
        break;
      default:
        return;
    }
    e.preventDefault();
  }

  function start() {
    renderHeader();
    var timer = null;
    $("search").addEventListener("input", function (e) {
      state.query = e.target.value;
      clearTimeout(timer);
      timer = setTimeout(function () {
        runSearch(true);
        renderRows();
      }, 120);
    });
    $("timeline").addEventListener("scroll", function () {
      window.requestAnimationFrame(renderRows);
    });
    $("spacer").addEventListener("click", function (e) {
      var row = e.target.closest(".row");
      if (!row) return;
      var k = state.visible.indexOf(Number(row.getAttribute("data-row")));
      if (k >= 0) select(k, false);
    });
    $("tab-message").addEventListener("click", function () {
      state.tab = "message";
      renderPanel();
    });
    $("tab-checkpoint").addEventListener("click", function () {
      state.tab = "checkpoint";
      renderPanel();
    });
    document.addEventListener("keydown", onKey);
    window.addEventListener("resize", renderRows);
    if (model.views.length) selectView(model.views.length - 1);
    else {
      renderViews();
      $("verdict").textContent =
        "no compaction to show" + (model.preview_note ? ": " + model.preview_note : "");
    }
    var t = performance.now();
    performance.mark("report-first-render");
    document.documentElement.setAttribute("data-first-render-ms", t.toFixed(1));
    document.documentElement.setAttribute("data-ready", "1");
  }

  start();
})();
