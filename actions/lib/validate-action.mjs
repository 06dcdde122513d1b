// actions/validate: the lock config files a pull request changes, checked by the core's own
// rules (validate.mjs), each broken rule annotated on its line. Needs no token: it reads the
// workspace only.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import * as core from '@actions/core';
import { inputEnvName } from './constants.mjs';
import { code, escapeText } from './report.mjs';
import { checkFile } from './validate.mjs';
import { loadCore } from './wasm.mjs';

/** The workspace files `patterns` name: a path as given, or a `*` in its last part. */
export function matchFiles(workspace, patterns) {
  const out = new Set();
  for (const pattern of patterns) {
    const dir = posix.dirname(pattern);
    const base = posix.basename(pattern);
    if (!base.includes('*')) {
      out.add(pattern);
      continue;
    }
    const re = new RegExp(`^${base.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*')}$`);
    let names = [];
    try {
      names = readdirSync(join(workspace, dir));
    } catch {
      continue; // no such directory: nothing matches
    }
    for (const n of names.sort()) if (re.test(n)) out.add(dir === '.' ? n : `${dir}/${n}`);
  }
  return [...out];
}

/**
 * The files a pull request changes, from the checkout of its merge commit: the diff against
 * the merge's first parent (the base). Null when that parent is not there (a depth-1 checkout)
 * or HEAD is not a merge.
 */
export function changedFiles(workspace) {
  const git = (...args) => execFileSync('git', ['-C', workspace, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const parents = git('rev-list', '--parents', '-n', '1', 'HEAD').trim().split(' ').slice(1);
    if (parents.length < 2) return null;
    git('cat-file', '-e', `${parents[0]}^{commit}`);
    return git('diff', '--name-only', '--no-renames', '--diff-filter=d', parents[0], 'HEAD').split('\n').filter(Boolean);
  } catch {
    return null;
  }
}

export async function runValidate(env = process.env) {
  try {
    const workspace = env.GITHUB_WORKSPACE || process.cwd();
    const leasehold = loadCore();
    // The core's rules: the patterns normalized (`./locks/x`, `locks//x` are `locks/x`, as `git
    // diff` names the changed files) and inside the workspace, `changed-only` a boolean as every
    // input's; an error names the input.
    const inputs = {};
    for (const name of ['files', 'changed-only']) {
      const value = env[inputEnvName(name)];
      if (value !== undefined) inputs[name] = value;
    }
    const { patterns, changedOnly } = leasehold.validateSettings(inputs);
    let files = matchFiles(workspace, patterns);
    if (changedOnly && env.GITHUB_EVENT_NAME === 'pull_request') {
      const changed = changedFiles(workspace);
      if (changed === null) core.warning('leasehold validate: the merge commit\'s base is not in the checkout (check out with fetch-depth: 2); checking every matched file');
      else files = files.filter((f) => changed.includes(f));
    }
    const verdicts = [];
    for (const file of files) {
      let text;
      try {
        text = readFileSync(join(workspace, file), 'utf8');
      } catch (error) {
        if (error.code === 'ENOENT' && patterns.includes(file)) {
          core.info(`${file}: not in the workspace (a missing config means capacity 1)`);
          continue;
        }
        throw error;
      }
      verdicts.push(checkFile(leasehold, file, text));
    }
    const bad = verdicts.filter((v) => !v.valid);
    for (const v of verdicts) {
      if (v.valid) core.info(`${v.file}: valid (capacity ${v.capacity}${v.lease ? ', lease policy set' : ''})`);
      else core.error(v.problem.message, { title: `leasehold config rule ${v.problem.rule}`, file: v.file, startLine: v.problem.line, startColumn: v.problem.column });
    }
    const doc = leasehold.validateDocument(verdicts); // the status is the core's: ok, or config
    core.setOutput('result', doc.status);
    core.setOutput('checked', String(verdicts.length));
    core.setOutput('invalid', String(bad.length));
    core.setOutput('report', JSON.stringify(verdicts));
    if (env.GITHUB_STEP_SUMMARY) {
      const rows = verdicts.map((v) => (v.valid ? `| ${code(v.file)} | valid | capacity ${v.capacity} |` : `| ${code(v.file)} | line ${v.problem.line} | \`${v.problem.rule}\`: ${escapeText(v.problem.message)} |`));
      const text = [`### leasehold: ${bad.length ? `${bad.length} of ${verdicts.length} lock configs break a rule` : `${verdicts.length} lock configs valid`}`, '', ...(rows.length ? ['| file | verdict | |', '| --- | --- | --- |', ...rows] : ['_no config file changed_']), ''];
      await core.summary.addRaw(text.join('\n')).write();
    }
    if (doc.exitCode !== 0) core.setFailed(`leasehold validate: ${bad.length} of ${verdicts.length} lock config files break a rule`);
  } catch (error) {
    core.setOutput('result', 'failed');
    core.setFailed(`leasehold validate${error.input ? ` [${error.input}]` : ''}: ${error.message}`);
  }
}
