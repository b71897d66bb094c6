// The page script of `compact-safe report PATH…` (the team page): draws the aggregate and the
// sessions ranked by what they lost from the JSON in #team-data, and opens a session's own report
// (a gzipped page in #detail-N) in a sandboxed frame. Data is only ever put in the page with
// textContent, never parsed as markup; the page makes no request.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("team-data").textContent);
  var s = data.summary;
  var KINDS = [
    ["instructions", "instructions"],
    ["tool_rounds", "tool rounds"],
    ["assistant_texts", "assistant texts"],
    ["checkpoint", "checkpoint"],
    ["anchors", "anchors"],
    ["other", "other"],
  ];

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function num(n) {
    return Number(n).toLocaleString("en-US");
  }
  function table(head, rows, numeric) {
    var t = el("table");
    var thead = el("thead");
    var tr = el("tr");
    head.forEach(function (h, i) {
      var th = el("th", numeric[i] ? "n" : "", h);
      tr.appendChild(th);
    });
    thead.appendChild(tr);
    t.appendChild(thead);
    var tb = el("tbody");
    rows.forEach(function (r) {
      var row = el("tr");
      r.forEach(function (c, i) {
        row.appendChild(el("td", numeric[i] ? "n" : "", c));
      });
      tb.appendChild(row);
    });
    t.appendChild(tb);
    return t;
  }
  function card(label, value, cls, id) {
    var c = el("div", "card" + (cls ? " " + cls : ""));
    if (id) c.id = id;
    c.appendChild(el("div", "v", value));
    c.appendChild(el("div", "l", label));
    return c;
  }

  document.getElementById("title").textContent = num(s.sessions) + " sessions";
  var meta = [
    "written " + data.generated_at,
    num(s.bytes) + " bytes of sessions",
    s.run && s.run.shard ? "shard " + s.run.shard : "",
    s.run && s.run.merged ? "merged from " + s.run.merged.length + " runs" : "",
  ].filter(Boolean);
  document.getElementById("meta").textContent = meta.join(" · ");

  // The aggregate.
  var agg = document.getElementById("aggregate");
  var cards = el("div", "cards");
  var c = s.counts;
  cards.appendChild(card("sessions", num(s.sessions), "", "agg-sessions"));
  cards.appendChild(card("compactions", num(c.compactions), "", "agg-compactions"));
  cards.appendChild(card("kept the contract", num(c.kept), "kept", "agg-kept"));
  cards.appendChild(card("lost what must survive", num(c.lost), c.lost > 0 ? "lost" : "", "agg-lost"));
  cards.appendChild(card("repaired by the guard", num(c.repaired), "", "agg-repaired"));
  cards.appendChild(card("not judgeable", num(c.not_judgeable), "", "agg-not-judgeable"));
  cards.appendChild(
    card("tokens before → after", num(s.tokens.before) + " → " + num(s.tokens.after), "", "agg-tokens"),
  );
  agg.appendChild(cards);
  agg.appendChild(el("h2", "", "Lost, by kind (compactions)"));
  agg.appendChild(
    table(
      KINDS.map(function (k) {
        return k[1];
      }),
      [
        KINDS.map(function (k) {
          return num(s.lost_kinds[k[0]]);
        }),
      ],
      KINDS.map(function () {
        return true;
      }),
    ),
  );
  agg.appendChild(el("h2", "", "By agent and version"));
  var byAgent = table(
    [
      "agent",
      "version",
      "sessions",
      "compactions",
      "kept",
      "lost",
      "repaired",
      "not judgeable",
      "tokens before",
      "tokens after",
    ],
    s.by_agent.map(function (a) {
      return [
        a.agent,
        a.version === null ? "(not recorded)" : a.version,
        num(a.sessions),
        num(a.compactions),
        num(a.kept),
        num(a.lost),
        num(a.repaired),
        num(a.not_judgeable),
        num(a.tokens_before),
        num(a.tokens_after),
      ];
    }),
    [false, false, true, true, true, true, true, true, true, true],
  );
  byAgent.id = "by-agent";
  agg.appendChild(byAgent);
  if (s.skipped.length > 0 || s.not_sessions > 0) {
    var sk = el("p", "skipped");
    sk.id = "skipped";
    sk.textContent =
      (s.skipped.length > 0
        ? s.skipped.length +
          " file" +
          (s.skipped.length === 1 ? "" : "s") +
          " skipped: " +
          s.skipped
            .map(function (k) {
              return k.reason;
            })
            .join("; ")
        : "") +
      (s.not_sessions > 0
        ? (s.skipped.length > 0 ? ". " : "") + num(s.not_sessions) + " other files were not sessions."
        : "");
    agg.appendChild(sk);
  }

  // The ranking.
  document.getElementById("ranking-note").textContent =
    num(data.sessions.length) +
    " sessions with a compaction, worst first" +
    (data.without_compactions > 0
      ? " (" + num(data.without_compactions) + " without any are not listed)"
      : "") +
    (data.details < data.sessions.length
      ? "; the first " + num(data.details) + " open their report (report --details N for more)"
      : "; each opens its report");
  var tbl = document.getElementById("sessions");
  var hr = el("tr");
  ["#", "session", "agent", "compactions", "kept", "lost", "not repaired", "lost pieces", "kinds"].forEach(
    function (h, i) {
      hr.appendChild(el("th", i === 0 || (i >= 3 && i <= 6) ? "n" : "", h));
    },
  );
  tbl.tHead.appendChild(hr);
  var body = tbl.tBodies[0];
  data.sessions.forEach(function (r, i) {
    var tr = el("tr", r.counts.unrepaired > 0 ? "bad" : r.counts.lost > 0 ? "warn" : "");
    tr.setAttribute("data-rank", String(i));
    tr.appendChild(el("td", "n", i + 1));
    var name = el("td", "path");
    if (r.detail !== null) {
      var a = el("a", "", r.path);
      a.href = "#session-" + i;
      a.setAttribute("data-open", String(i));
      name.appendChild(a);
    } else name.appendChild(el("span", "", r.path));
    name.title = r.root + " · " + (r.session_id || "");
    tr.appendChild(name);
    tr.appendChild(el("td", "", r.agent + (r.version ? " " + r.version : "")));
    tr.appendChild(el("td", "n", num(r.counts.compactions)));
    tr.appendChild(el("td", "n", num(r.counts.kept)));
    tr.appendChild(el("td", "n", num(r.counts.lost)));
    tr.appendChild(el("td", "n", num(r.counts.unrepaired)));
    var l = r.lost_items;
    var pieces = [
      [l.user_texts, "user texts"],
      [l.tool_calls, "tool calls"],
      [l.tool_results, "tool results"],
      [l.assistant_texts, "assistant texts"],
    ]
      .filter(function (p) {
        return p[0] > 0;
      })
      .map(function (p) {
        return p[0] + " " + p[1];
      })
      .join(", ");
    tr.appendChild(el("td", "", pieces));
    tr.appendChild(
      el(
        "td",
        "",
        KINDS.filter(function (k) {
          return r.lost_kinds[k[0]] > 0;
        })
          .map(function (k) {
            return k[1];
          })
          .join(", "),
      ),
    );
    body.appendChild(tr);
  });

  // A session's report: its gzipped page, decompressed here, shown in a sandboxed frame.
  var frame = document.getElementById("frame");
  var shown = -1;
  function inflate(b64) {
    var bin = window.atob(b64);
    var bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var stream = new window.Blob([bytes]).stream().pipeThrough(new window.DecompressionStream("gzip"));
    return new window.Response(stream).text();
  }
  function show(i) {
    var r = data.sessions[i];
    var block = r && r.detail !== null ? document.getElementById("detail-" + r.detail) : null;
    if (!block) return list();
    shown = i;
    document.getElementById("list").hidden = true;
    document.getElementById("detail").hidden = false;
    document.getElementById("detail-title").textContent =
      "#" + (i + 1) + " " + r.path + " (" + r.agent + (r.version ? " " + r.version : "") + ")";
    document.documentElement.removeAttribute("data-detail-ready");
    inflate(block.textContent.trim()).then(function (html) {
      if (shown !== i) return;
      frame.onload = function () {
        document.documentElement.setAttribute("data-detail-ready", String(i));
      };
      frame.srcdoc = html;
    });
  }
  function list() {
    shown = -1;
    frame.removeAttribute("srcdoc");
    document.getElementById("detail").hidden = true;
    document.getElementById("list").hidden = false;
  }
  function route() {
    var m = /^#session-(\d+)$/.exec(window.location.hash);
    if (m) show(Number(m[1]));
    else list();
  }
  document.getElementById("back").addEventListener("click", function () {
    window.location.hash = "";
  });
  window.addEventListener("hashchange", route);
  route();
  document.documentElement.setAttribute("data-ready", "1");
})();
