// Checking lock config files (`locks/<lock>.config.json`) before they merge: each file goes
// through the core's own reader (checkConfig, the code acquire reads a config with), so every
// rule the core has, now or later, is checked here without a copy. This module only places the
// broken rule in the file (a JSON pointer to a line and column) and formats the verdicts.
import { readFile } from 'node:fs/promises';
import { logger, print, Usage } from './cli-common.mjs';

/**
 * Where the value at JSON pointer `pointer` starts in `text` (a JSON document): { line, column },
 * 1-based; for an object member, where its key starts. The deepest existing prefix of the
 * pointer when the pointer goes further than the text; the document's start for "".
 */
export function positionOf(text, pointer) {
  const tokens = pointer === '' ? [] : pointer.slice(1).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const at = (offset) => {
    const before = text.slice(0, offset);
    const line = before.split('\n').length;
    return { line, column: offset - before.lastIndexOf('\n') };
  };
  const skipString = () => {
    i++; // opening quote
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
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
    if (c === '{' || c === '[') {
      let depth = 0;
      while (i < text.length) {
        const d = text[i];
        if (d === '"') {
          skipString();
          continue;
        }
        if (d === '{' || d === '[') depth++;
        if (d === '}' || d === ']') depth--;
        i++;
        if (depth === 0) return;
      }
      return;
    }
    while (i < text.length && !',]}'.includes(text[i]) && !' \t\n\r'.includes(text[i])) i++;
  };
  ws();
  let found = at(i);
  for (const token of tokens) {
    ws();
    if (text[i] === '{') {
      i++;
      let hit = null;
      let resume = 0;
      for (;;) {
        ws();
        if (text[i] !== '"') break;
        const keyAt = i;
        const key = readString();
        ws();
        i++; // ':'
        ws();
        // The last of duplicate keys counts, as JSON.parse and the core read them.
        if (key === token) [hit, resume] = [keyAt, i];
        skipValue();
        ws();
        if (text[i] === ',') i++;
      }
      if (hit === null) return found;
      found = at(hit);
      i = resume;
    } else if (text[i] === '[' && /^\d+$/.test(token)) {
      i++;
      for (let n = 0; n < Number(token); n++) {
        skipValue();
        ws();
        if (text[i] !== ',') return found;
        i++;
      }
      ws();
      if (text[i] === ']') return found;
      found = at(i);
    } else {
      return found;
    }
  }
  return found;
}

/** One file's verdict: { file, valid, capacity?, lease?, problem?: {rule, message, pointer, line, column} }. */
export function checkFile(core, file, text) {
  const verdict = core.checkConfig(text);
  if (verdict.valid) return { file, ...verdict };
  const problem = { ...verdict.problem };
  if (problem.line === undefined) Object.assign(problem, positionOf(text, problem.pointer));
  problem.column = Math.max(1, problem.column); // a parser's column 0: before the line's first character
  return { file, ...verdict, problem };
}

/** A verdict as `file:line:column: rule: message`, for a terminal. */
export function problemLine(v) {
  return `${v.file}:${v.problem.line}:${v.problem.column}: ${v.problem.rule}: ${v.problem.message}`;
}

/** `leasehold validate FILE…`: one entry of the command line's table. */
export const VALIDATE_COMMAND = {
  summary: "check lock config files (locks/<lock>.config.json) by the core's own rules",
  flags: { positionals: true },
  usage: `leasehold validate FILE…

Reads each file as acquire reads a lock's config (the same rules, from the same core) and prints
one document: every file's verdict (valid, the capacity and lease it sets, or the rule it
breaks: its name, message, JSON pointer, line and column). Each broken file is also named on
stderr as file:line:column: rule: message. Exit 0 when every file is valid, 3 (config) when one
is not, 2 without a file or when a file cannot be read. No token, no network.`,
  async run({ core, positionals }) {
    if (positionals.length === 0) throw new Usage('validate needs one or more files');
    const verdicts = [];
    for (const file of positionals) {
      let text;
      try {
        text = await readFile(file, 'utf8');
      } catch (error) {
        throw new Usage(`cannot read ${file}: ${error.code ?? error.message}`, 'unreadable');
      }
      verdicts.push(checkFile(core, file, text));
    }
    for (const v of verdicts) if (!v.valid) logger.info(problemLine(v));
    const doc = core.validateDocument(verdicts); // every file's verdict; the status is the core's
    print(doc);
    return doc.exitCode;
  },
};
