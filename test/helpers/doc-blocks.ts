/**
 * The docs as tests (issue 25, docs/contributing/doc-blocks.md is the convention):
 *
 * - `extractBlocks` finds the fenced code blocks of a Markdown file, with the line
 *   of the opening fence, the language and the info-string flags;
 * - `parseExpectations` reads a block's `// → text` (exact) and `// ≈ text`
 *   (approximate) comments;
 * - `compareOutput` says whether a block's stdout is what those comments declare;
 * - `docNames` finds the repository paths and `path:identifier` names the prose
 *   mentions in backticks, and `declaredNames` what a source file declares, for the
 *   check that the docs name only things that exist.
 *
 * All pure (no process, no install): test/package/doc-blocks-unit.test.ts tests
 * them, test/package/doc-blocks.test.ts and doc-names.test.ts apply them.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

/** The languages that are tests, by the first word of the info string. */
const LANGS: Readonly<Record<string, "ts" | "js">> = {
  ts: "ts",
  typescript: "ts",
  mts: "ts",
  js: "js",
  javascript: "js",
  mjs: "js",
};

/** What a block needs from its environment (`needs=…`). */
export type Need = "webgpu" | "redis";
const NEEDS: readonly Need[] = ["webgpu", "redis"];

/** One fenced block of a Markdown file. */
export interface FencedBlock {
  /** The Markdown file, relative to the repository root, with `/` separators. */
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The whole info string (after the fence characters), trimmed. */
  readonly info: string;
  /** Its first word, lower case ("" when none). */
  readonly word: string;
  /** The code, without the fences, indentation of the fence removed. */
  readonly code: string;
  /** Fence not closed before the end of the file. */
  readonly unclosed: boolean;
}

/** A block that is a test: `ts` or `js`. */
export interface DocBlock extends FencedBlock {
  readonly lang: "ts" | "js";
  /** Type-check only, with the fragment prelude. */
  readonly fragment: boolean;
  /** Type-check like a normal block, do not run. */
  readonly noRun: boolean;
  readonly needs: readonly Need[];
  /** What is wrong with the block's fence or info string (unknown flag, unclosed fence): each fails its test. */
  readonly problems: readonly string[];
}

/** `<file>:<line>`: the test name of a block. */
export function blockName(b: { readonly file: string; readonly line: number }): string {
  return `${b.file}:${b.line}`;
}

const FENCE_OPEN = /^( *)(`{3,}|~{3,})(.*)$/;

/**
 * Every fenced block of `markdown` (CommonMark fences of ``` or ~~~, any
 * indentation, e.g. inside list items; a backtick fence's info string has no
 * backtick). `file` is only recorded.
 */
export function fencedBlocks(markdown: string, file: string): FencedBlock[] {
  const lines = markdown.split(/\r?\n/);
  const out: FencedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = FENCE_OPEN.exec(lines[i]!);
    if (!m) continue;
    const [, indent, fence, rest] = m as unknown as [string, string, string, string];
    if (fence[0] === "`" && rest.includes("`")) continue; // an inline code span, not a fence
    const close = new RegExp(`^ *${fence[0] === "`" ? "`" : "~"}{${fence.length},} *$`);
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !close.test(lines[j]!)) {
      const l = lines[j]!;
      // The fence's indentation is removed from each line (at most that many spaces).
      let k = 0;
      while (k < indent.length && l[k] === " ") k++;
      body.push(l.slice(k));
      j++;
    }
    const info = rest.trim();
    out.push({
      file,
      line: i + 1,
      info,
      word: (info.split(/\s+/)[0] ?? "").toLowerCase(),
      code: body.length > 0 ? body.join("\n") + "\n" : "",
      unclosed: j >= lines.length,
    });
    i = j;
  }
  return out;
}

/** The `ts`/`js` blocks of a Markdown file, with their flags parsed (see DOCBLOCKS.md). */
export function extractBlocks(markdown: string, file: string): DocBlock[] {
  const out: DocBlock[] = [];
  for (const f of fencedBlocks(markdown, file)) {
    const lang = LANGS[f.word];
    if (lang === undefined) continue;
    const problems: string[] = [];
    let fragment = false;
    let noRun = false;
    const needs: Need[] = [];
    for (const flag of f.info.split(/\s+/).slice(1)) {
      if (flag === "fragment") fragment = true;
      else if (flag === "no-run") noRun = true;
      else if (flag.startsWith("needs=")) {
        for (const n of flag.slice("needs=".length).split(",")) {
          if ((NEEDS as readonly string[]).includes(n)) {
            if (!needs.includes(n as Need)) needs.push(n as Need);
          } else problems.push(`unknown need "${n}" in "${f.info}" (known: ${NEEDS.join(", ")})`);
        }
      } else
        problems.push(`unknown flag "${flag}" in "${f.info}" (known: fragment, no-run, needs=webgpu, needs=redis)`);
    }
    if (fragment && needs.length > 0) problems.push(`a fragment is never run, so needs= means nothing: "${f.info}"`);
    if (f.unclosed) problems.push("the fence is not closed before the end of the file");
    if (f.code.trim() === "") problems.push("the block is empty");
    out.push({ ...f, lang, fragment, noRun, needs, problems });
  }
  return out;
}

/** README.md and every docs/**\/*.md except docs/api/ (TypeDoc output), relative to `root`, sorted. */
export function docFiles(root: string): string[] {
  const out = ["README.md"];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      const rel = relative(root, p).split("\\").join("/");
      if (e.isDirectory()) {
        if (rel !== "docs/api" && e.name !== "node_modules") walk(p);
      } else if (e.isFile() && e.name.endsWith(".md")) out.push(rel);
    }
  };
  walk(join(root, "docs"));
  return out.sort((a, b) => (a === "README.md" ? -1 : b === "README.md" ? 1 : a < b ? -1 : a > b ? 1 : 0));
}

/** Every test block of the docs under `root`, in file then line order. */
export function collectBlocks(root: string): DocBlock[] {
  return docFiles(root).flatMap((f) => extractBlocks(readFileSync(join(root, f), "utf8"), f));
}

// ---------------------------------------------------------------------------
// Expected output

/** One `// →` (exact) or `// ≈` (approximate) comment of a block. */
export interface Expectation {
  readonly kind: "exact" | "approx";
  /** The comment's text after the arrow, trimmed. */
  readonly text: string;
  /** 1-based line within the block's code. */
  readonly line: number;
}

/**
 * The line comments of JS/TS source, with the 1-based line each is on: a small
 * scanner that skips string and template literals and block comments, so a `//`
 * inside a string is not a comment. A `/` where an expression starts (after an
 * operator, `(`, `,`, `return`, … or at the start) begins a regular-expression
 * literal, which is skipped too.
 */
export function lineComments(code: string): { readonly line: number; readonly text: string }[] {
  const out: { line: number; text: string }[] = [];
  let line = 1;
  let i = 0;
  const n = code.length;
  // Template literal nesting: each entry is the brace depth at which a `${` opened.
  const templates: number[] = [];
  let braces = 0;
  const skipString = (q: string): void => {
    i++;
    while (i < n && code[i] !== q && code[i] !== "\n") {
      if (code[i] === "\\") i++;
      i++;
    }
    i++;
  };
  const skipTemplate = (): void => {
    // From just after a backtick or a closing `}` of `${…}`, to the end of the template or the next `${`.
    while (i < n) {
      const c = code[i]!;
      if (c === "\\") {
        if (code[i + 1] === "\n") line++;
        i += 2;
      } else if (c === "`") {
        i++;
        return;
      } else if (c === "$" && code[i + 1] === "{") {
        i += 2;
        templates.push(braces);
        braces++;
        return;
      } else {
        if (c === "\n") line++;
        i++;
      }
    }
  };
  // The last significant character or word before `i`, to tell a regex literal from a division.
  let last = "";
  const regexMayStart = (): boolean =>
    last === "" ||
    /[(,=:[!&|?{};+\-*%<>~^]$/.test(last) ||
    /^(return|typeof|case|do|else|in|of|void|yield|await)$/.test(last);
  while (i < n) {
    const c = code[i]!;
    if (c === "\n") {
      line++;
      i++;
    } else if (/\s/.test(c)) {
      i++;
    } else if (c === "/" && code[i + 1] !== "/" && code[i + 1] !== "*" && regexMayStart()) {
      i++;
      let cls = false;
      while (i < n && code[i] !== "\n" && (cls || code[i] !== "/")) {
        if (code[i] === "\\") i++;
        else if (code[i] === "[") cls = true;
        else if (code[i] === "]") cls = false;
        i++;
      }
      i++;
      last = "x"; // a value
    } else if (c === "/" && code[i + 1] === "/") {
      let j = i + 2;
      while (j < n && code[j] !== "\n") j++;
      out.push({ line, text: code.slice(i + 2, j) });
      i = j;
    } else if (c === "/" && code[i + 1] === "*") {
      i += 2;
      while (i < n && !(code[i] === "*" && code[i + 1] === "/")) {
        if (code[i] === "\n") line++;
        i++;
      }
      i += 2;
    } else if (c === '"' || c === "'") {
      skipString(c);
      last = "x";
    } else if (c === "`") {
      i++;
      skipTemplate();
      last = templates.length > 0 && code[i - 1] === "{" ? "{" : "x";
    } else if (c === "{") {
      braces++;
      i++;
      last = "{";
    } else if (c === "}") {
      braces--;
      i++;
      last = "}";
      if (templates.length > 0 && templates[templates.length - 1] === braces) {
        templates.pop();
        skipTemplate();
        last = code[i - 1] === "{" ? "{" : "x";
      }
    } else if (/[\w$]/.test(c)) {
      let j = i;
      while (j < n && /[\w$]/.test(code[j]!)) j++;
      last = code.slice(i, j);
      i = j;
    } else {
      // An operator or punctuation; a `/` here is a division, which leaves `last` a value.
      if (c !== "/") last = c;
      i++;
    }
  }
  return out;
}

/** The `// →` and `// ≈` comments of a block's code, in order. */
export function parseExpectations(code: string): Expectation[] {
  const out: Expectation[] = [];
  for (const c of lineComments(code)) {
    const m = /^\s*(→|≈)(.*)$/s.exec(c.text);
    if (m) out.push({ kind: m[1] === "→" ? "exact" : "approx", text: m[2]!.trim(), line: c.line });
  }
  return out;
}

/** `s` with all whitespace removed. */
export const squash = (s: string): string => s.replace(/\s+/g, "");

/** A token of printed output for the approximate comparison: a run of text (whitespace dropped) or a number. */
export type Token =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "num"; readonly text: string; readonly value: number; readonly approx: boolean };

const NUMBER = /-?(?:\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|Infinity)|NaN/y;

/**
 * `s` as numbers and the text between them (whitespace separates tokens and is
 * then dropped: "1 2" is two numbers, "a b" the text "ab"). A number is an
 * optional `-`, digits with an optional fraction and exponent, `Infinity` or
 * `NaN`; `approx` marks numbers that may differ within the tolerance.
 */
export function tokenize(s: string, approx: boolean): Token[] {
  const out: Token[] = [];
  let text = "";
  const flush = (): void => {
    if (text !== "") out.push({ kind: "text", text });
    text = "";
  };
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    // A number starts at a digit, `-` + digit/Infinity, `Infinity` or `NaN`, but not inside a word ("float32" is "float" then 32,
    // but "x1e5"'s digits are still a number: only the start matters).
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(s);
    if (m && !(/[A-Za-z_$]/.test(m[0][0]!) && i > 0 && /[A-Za-z0-9_$]/.test(s[i - 1]!))) {
      flush();
      out.push({ kind: "num", text: m[0], value: Number(m[0]), approx });
      i += m[0].length;
      continue;
    }
    text += c;
    i++;
  }
  flush();
  return out;
}

/** Relative and absolute tolerance of `// ≈` numbers. */
export const APPROX_RTOL = 1e-6;
export const APPROX_ATOL = 1e-12;

function numbersAgree(actual: number, expected: number): boolean {
  if (Number.isNaN(expected)) return Number.isNaN(actual);
  if (!Number.isFinite(expected)) return actual === expected;
  return Math.abs(actual - expected) <= Math.max(APPROX_ATOL, APPROX_RTOL * Math.abs(expected));
}

function merged(tokens: Token[]): Token[] {
  const out: Token[] = [];
  for (const t of tokens) {
    const last = out[out.length - 1];
    if (t.kind === "text" && last?.kind === "text") out[out.length - 1] = { kind: "text", text: last.text + t.text };
    else out.push(t);
  }
  return out;
}

const clip = (s: string, n = 400): string => (s.length > n ? `${s.slice(0, n)}…` : s);

/**
 * Whether printed `stdout` is what `expectations` declare: null when it is, else
 * the reason. No expectation: any output. Only `→`: stdout with all whitespace
 * removed equals the concatenated texts with all whitespace removed. Any `≈`:
 * both sides as tokens (numbers and the text between them); text equal, `→`
 * numbers equal as written, `≈` numbers within 1e-6 relative (1e-12 absolute);
 * NaN matches NaN and ±Infinity only itself.
 */
export function compareOutput(stdout: string, expectations: readonly Expectation[]): string | null {
  if (expectations.length === 0) return null;
  const want = expectations.map((e) => e.text).join(" ");
  if (expectations.every((e) => e.kind === "exact")) {
    const a = squash(stdout);
    const e = squash(expectations.map((x) => x.text).join(""));
    if (a === e) return null;
    let k = 0;
    while (k < a.length && k < e.length && a[k] === e[k]) k++;
    return (
      `stdout differs from the // → comments (whitespace ignored) at character ${k}: ` +
      `expected "${clip(e.slice(k), 80)}", got "${clip(a.slice(k), 80)}"\n` +
      `expected: ${clip(want)}\nstdout:   ${clip(stdout.trim())}`
    );
  }
  const actual = merged(tokenize(stdout, false));
  const expected = merged(expectations.flatMap((x) => tokenize(x.text, x.kind === "approx")));
  const show = (t: Token | undefined): string => (t === undefined ? "the end" : `"${t.text}"`);
  for (let k = 0; k < Math.max(actual.length, expected.length); k++) {
    const a = actual[k];
    const e = expected[k];
    let ok: boolean;
    if (a === undefined || e === undefined || a.kind !== e.kind) ok = false;
    else if (e.kind === "text" || !e.approx) ok = a.text === e.text;
    else ok = numbersAgree((a as Extract<Token, { kind: "num" }>).value, e.value);
    if (!ok) {
      const tol = e?.kind === "num" && e.approx ? ` (within ${APPROX_RTOL} relative)` : "";
      return (
        `stdout differs from the // →/≈ comments at token ${k}: expected ${show(e)}${tol}, got ${show(a)}\n` +
        `expected: ${clip(want)}\nstdout:   ${clip(stdout.trim())}`
      );
    }
  }
  return null;
}

// ---------------------------------------------------------------------------
// Names the prose mentions (see "Names" in DOCBLOCKS.md)

/** Top-level folders of the repository: a backtick span whose first segment is one of these is a repo path. */
export const REPO_DIRS: readonly string[] = [
  ".ci",
  "bench",
  "codegen",
  "docs",
  "examples",
  "ir",
  "passes",
  "playground",
  "runtime",
  "scripts",
  "src",
  "test",
];

/** A path (optionally `./`-prefixed), then optionally `:Name` or `:Name.member`, optionally `()`. */
const NAME_SPAN =
  /^(\.\/)?([A-Za-z0-9_.@-]+(?:\/[A-Za-z0-9_.@-]+)*\/?)(?::([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)?)(?:\(\))?|:(\d[\d-]*))?$/;

/** One name the prose of a doc mentions. */
export interface DocName {
  readonly file: string;
  readonly line: number;
  /** The backtick span as written (or the link target). */
  readonly span: string;
  /** Repository-relative path (no `./`, a trailing `/` kept for folders). */
  readonly path: string;
  /** `Name` or `Name.member` after the `:`, if any. */
  readonly identifier?: string;
  /** A `:<line>` suffix (not allowed: line numbers rot unnoticed). */
  readonly lineRef?: string;
  /** From a Markdown link `[..](target)` rather than a backtick span. */
  readonly link?: boolean;
}

/** The Markdown source with every fenced block's lines blanked (line numbers kept). */
export function proseOf(markdown: string): string {
  const lines = markdown.split(/\r?\n/);
  for (const b of fencedBlocks(markdown, "")) {
    const end = b.line + (b.code === "" ? 0 : b.code.split("\n").length - 1); // 0-based index of the closing fence
    for (let l = b.line - 1; l <= Math.min(end, lines.length - 1); l++) lines[l] = "";
  }
  return lines.join("\n");
}

/**
 * The repository paths and `path:identifier` names `markdown`'s prose mentions:
 * inline code spans whose whole text is such a name with a first segment in
 * `REPO_DIRS` (or a `./` prefix for a root file), and relative Markdown link
 * targets (resolved from `file`'s folder; http(s), mailto, anchors and docs/api/
 * are not checked).
 */
export function docNames(markdown: string, file: string): DocName[] {
  const prose = proseOf(markdown);
  const out: DocName[] = [];
  const lineAt = (index: number): number => prose.slice(0, index).split("\n").length;
  // Inline code spans: a run of backticks, then text, then the same run.
  const span = /(`+)([\s\S]*?[^`])\1(?!`)/g;
  for (let m = span.exec(prose); m; m = span.exec(prose)) {
    const text = m[2]!.trim();
    const n = NAME_SPAN.exec(text);
    if (!n) continue;
    const dotSlash = n[1] !== undefined;
    const path = n[2]!;
    const first = path.split("/")[0]!;
    if (!dotSlash && !REPO_DIRS.includes(first)) continue;
    if (!dotSlash && !path.includes("/")) continue; // a bare folder name ("src") is a word, not a path
    out.push({
      file,
      line: lineAt(m.index),
      span: text,
      path,
      ...(n[3] !== undefined ? { identifier: n[3] } : {}),
      ...(n[4] !== undefined ? { lineRef: n[4] } : {}),
    });
  }
  // Links and images: [text](target "title"), outside code spans.
  const noCode = prose.replace(/(`+)[\s\S]*?[^`]\1(?!`)/g, (s) => s.replace(/[^\n]/g, " "));
  const link = /!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
  for (let m = link.exec(noCode); m; m = link.exec(noCode)) {
    const target = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("#")) continue;
    const bare = decodeURIComponent(target.split("#")[0]!);
    if (bare === "") continue;
    const dir = file.includes("/") ? file.slice(0, file.lastIndexOf("/")) : "";
    const parts: string[] = [];
    for (const seg of [...(dir ? dir.split("/") : []), ...bare.split("/")]) {
      if (seg === "..") parts.pop();
      else if (seg !== "." && seg !== "") parts.push(seg);
    }
    const path = parts.join("/") + (bare.endsWith("/") ? "/" : "");
    if (path === "docs/api" || path.startsWith("docs/api/")) continue;
    out.push({ file, line: lineAt(m.index), span: target, path, link: true });
  }
  return out;
}

/** Source files whose declarations `declaredNames` can read. */
export const CODE_FILE = /\.(ts|mts|cts|tsx|js|mjs|cjs)$/;

/**
 * The names `source` declares, at any depth: functions, classes, interfaces, type
 * aliases, enums and their members, namespaces, variables (destructured names
 * included), methods, properties and accessors of classes and interfaces, and
 * export aliases (`export { a as b }` declares `b`). Members are also listed as
 * `Outer.member` (of a class, interface, enum, namespace, or a variable
 * initialised with an object literal, whose properties are listed only so).
 */
export function declaredNames(source: string, fileName = "file.ts"): Set<string> {
  const sf = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false);
  const names = new Set<string>();
  const nameText = (n: ts.Node | undefined): string | undefined =>
    n && (ts.isIdentifier(n) || ts.isStringLiteral(n) || ts.isPrivateIdentifier(n)) ? n.text : undefined;
  const bindings = (n: ts.BindingName): void => {
    if (ts.isIdentifier(n)) names.add(n.text);
    else for (const e of n.elements) if (!ts.isOmittedExpression(e)) bindings(e.name);
  };
  const members = (outer: string, list: readonly ts.Node[]): void => {
    for (const m of list) {
      const name = nameText((m as { name?: ts.Node }).name);
      if (name !== undefined) names.add(`${outer}.${name}`);
    }
  };
  const visit = (node: ts.Node): void => {
    if (
      ts.isFunctionDeclaration(node) ||
      ts.isClassDeclaration(node) ||
      ts.isInterfaceDeclaration(node) ||
      ts.isTypeAliasDeclaration(node) ||
      ts.isEnumDeclaration(node) ||
      ts.isModuleDeclaration(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isMethodSignature(node) ||
      ts.isPropertyDeclaration(node) ||
      ts.isPropertySignature(node) ||
      ts.isGetAccessorDeclaration(node) ||
      ts.isSetAccessorDeclaration(node) ||
      ts.isEnumMember(node)
    ) {
      const name = nameText(node.name);
      if (name !== undefined) names.add(name);
    }
    if (ts.isVariableDeclaration(node)) {
      bindings(node.name);
      if (ts.isIdentifier(node.name) && node.initializer) {
        let init: ts.Expression = node.initializer;
        while (ts.isAsExpression(init) || ts.isSatisfiesExpression(init) || ts.isParenthesizedExpression(init))
          init = init.expression;
        if (ts.isObjectLiteralExpression(init)) members(node.name.text, init.properties);
      }
    }
    if (ts.isExportSpecifier(node)) {
      const name = nameText(node.name);
      if (name !== undefined) names.add(name);
    }
    if ((ts.isClassDeclaration(node) || ts.isInterfaceDeclaration(node)) && node.name)
      members(node.name.text, node.members);
    if (ts.isEnumDeclaration(node)) members(node.name.text, node.members);
    if (ts.isModuleDeclaration(node) && ts.isIdentifier(node.name) && node.body && ts.isModuleBlock(node.body)) {
      const outer = node.name.text;
      for (const s of node.body.statements) {
        const d = s as { name?: ts.Node; declarationList?: ts.VariableDeclarationList };
        const name = nameText(d.name);
        if (name !== undefined) names.add(`${outer}.${name}`);
        for (const v of d.declarationList?.declarations ?? [])
          if (ts.isIdentifier(v.name)) names.add(`${outer}.${v.name.text}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return names;
}
