import { createRequire as __leaseholdRequire } from 'node:module';
const require = __leaseholdRequire(import.meta.url);
import {
  Usage,
  logger,
  print
} from "./shared-QILOXU7V.mjs";

// actions/lib/validate.mjs
import { readFile } from "node:fs/promises";
function positionOf(text, pointer) {
  const tokens = pointer === "" ? [] : pointer.slice(1).split("/").map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
  let i = 0;
  const ws = () => {
    while (i < text.length && " 	\n\r".includes(text[i])) i++;
  };
  const at = (offset) => {
    const before = text.slice(0, offset);
    const line = before.split("\n").length;
    return { line, column: offset - before.lastIndexOf("\n") };
  };
  const skipString = () => {
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    i++;
  };
  const readString = () => {
    const start = i;
    skipString();
    return JSON.parse(text.slice(start, i));
  };
  const skipValue = () => {
    ws();
    const c = text[i];
    if (c === '"') return skipString();
    if (c === "{" || c === "[") {
      let depth = 0;
      while (i < text.length) {
        const d = text[i];
        if (d === '"') {
          skipString();
          continue;
        }
        if (d === "{" || d === "[") depth++;
        if (d === "}" || d === "]") depth--;
        i++;
        if (depth === 0) return;
      }
      return;
    }
    while (i < text.length && !",]}".includes(text[i]) && !" 	\n\r".includes(text[i])) i++;
  };
  ws();
  let found = at(i);
  for (const token of tokens) {
    ws();
    if (text[i] === "{") {
      i++;
      let hit = null;
      let resume = 0;
      for (; ; ) {
        ws();
        if (text[i] !== '"') break;
        const keyAt = i;
        const key = readString();
        ws();
        i++;
        ws();
        if (key === token) [hit, resume] = [keyAt, i];
        skipValue();
        ws();
        if (text[i] === ",") i++;
      }
      if (hit === null) return found;
      found = at(hit);
      i = resume;
    } else if (text[i] === "[" && /^\d+$/.test(token)) {
      i++;
      for (let n = 0; n < Number(token); n++) {
        skipValue();
        ws();
        if (text[i] !== ",") return found;
        i++;
      }
      ws();
      if (text[i] === "]") return found;
      found = at(i);
    } else {
      return found;
    }
  }
  return found;
}
function checkFile(core, file, text) {
  const verdict = core.checkConfig(text);
  if (verdict.valid) return { file, ...verdict };
  const problem = { ...verdict.problem };
  if (problem.line === void 0) Object.assign(problem, positionOf(text, problem.pointer));
  problem.column = Math.max(1, problem.column);
  return { file, ...verdict, problem };
}
function problemLine(v) {
  return `${v.file}:${v.problem.line}:${v.problem.column}: ${v.problem.rule}: ${v.problem.message}`;
}
function validateDocument(core, verdicts) {
  const bad = verdicts.filter((v) => !v.valid);
  const doc = bad.length ? core.refusalDocument("validate", "config", "config-invalid", `${bad.length} of ${verdicts.length} config files break a rule: ${bad.map(problemLine).join("; ")}`) : { ...core.refusalDocument("validate", "ok", "ok", ""), error: null };
  return { ...doc, files: verdicts };
}
var VALIDATE_COMMAND = {
  summary: "check lock config files (locks/<lock>.config.json) by the core's own rules",
  flags: { positionals: true },
  usage: `leasehold validate FILE\u2026

Reads each file as acquire reads a lock's config (the same rules, from the same core) and prints
one document: every file's verdict (valid, the capacity and lease it sets, or the rule it
breaks: its name, message, JSON pointer, line and column). Each broken file is also named on
stderr as file:line:column: rule: message. Exit 0 when every file is valid, 3 (config) when one
is not, 2 without a file or when a file cannot be read. No token, no network.`,
  async run({ core, positionals }) {
    if (positionals.length === 0) throw new Usage("validate needs one or more files");
    const verdicts = [];
    for (const file of positionals) {
      let text;
      try {
        text = await readFile(file, "utf8");
      } catch (error) {
        throw new Usage(`cannot read ${file}: ${error.code ?? error.message}`, "unreadable");
      }
      verdicts.push(checkFile(core, file, text));
    }
    for (const v of verdicts) if (!v.valid) logger.info(problemLine(v));
    const doc = validateDocument(core, verdicts);
    print(doc);
    return doc.exitCode;
  }
};

export {
  checkFile,
  VALIDATE_COMMAND
};
