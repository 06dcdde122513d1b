#!/usr/bin/env node
// leasehold's command line: the same core (the same wasm) as the actions.
//
//   node dist/cli.mjs --help                      every command
//   node dist/cli.mjs <command> --help            one command
//   node dist/cli.mjs acquire|release|status|renew|reap|guard …   the lock verbs (lock-cli.mjs)
//   node dist/cli.mjs validate FILE…              lock config files, by the core's rules (validate.mjs)
//   node dist/cli.mjs claims <verb> …             per-item claims on git refs (claims.mjs)
//   node dist/cli.mjs slots allocate …            never-recycled slot numbers (slots.mjs)
//   node dist/cli.mjs receipt check|post …        receipts; check-head; audit (items.mjs)
//
// Every command prints JSON documents whose `exitCode` is the process's exit code, from the
// core's one exit-code table (README "Exit codes"); a refused command line prints a `usage`
// document (2). Human-readable log lines go to stderr. The commands are a table: a new one is
// one entry here.
import { CLAIMS_COMMAND } from './claims.mjs';
import { logger, parseFlags, print, refusal, Usage } from './cli-common.mjs';
import { ITEM_COMMANDS } from './items.mjs';
import { LOCK_COMMANDS } from './lock-cli.mjs';
import { SLOTS_COMMAND } from './slots.mjs';
import { VALIDATE_COMMAND } from './validate.mjs';
import { loadCore } from './wasm.mjs';

/** name → { summary, usage, flags?, run(ctx) → exit code }. */
const COMMANDS = {
  ...LOCK_COMMANDS,
  claims: CLAIMS_COMMAND,
  slots: SLOTS_COMMAND,
  validate: VALIDATE_COMMAND,
  ...ITEM_COMMANDS,
};

function overview(core) {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length));
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  const claims = Object.keys(CLAIMS_COMMAND.verbs).map((v) => `  claims ${v}`);
  const table = core.exitTable.map((r) => `  ${String(r.exitCode).padStart(2)}  ${r.status.padEnd(16)} ${r.action}`);
  return `usage: leasehold <command> [flags]   (node dist/cli.mjs …; <command> --help for one)

Commands:
${lines.join('\n')}

Claims verbs:
${claims.join('\n')}

Exit codes (one table for every command):
${table.join('\n')}
`;
}

async function main(argv, env) {
  const core = loadCore();
  const [name, ...rest] = argv;
  if (name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(overview(core));
    return 0;
  }
  const command = COMMANDS[name];
  const docName = name === 'claims' ? CLAIMS_COMMAND.commandName(rest) : command?.verbWords && command.verbWords.includes(rest[0]) ? `${name} ${rest[0]}` : (name ?? '');
  try {
    if (!command) throw new Usage(`unknown command ${JSON.stringify(name ?? '')} (known: ${Object.keys(COMMANDS).join(', ')}; --help lists them)`);
    if (name === 'claims' && rest[0] === '--help') {
      process.stdout.write(`usage: ${command.usage}\n`);
      return 0;
    }
    if (name === 'claims' && rest.length === 0) throw new Usage('claims needs a verb (leasehold claims --help lists them)');
    if (command.verbWords) {
      // A verb first (`receipt check …`), then its flags.
      const [verb, ...flags] = rest;
      if (verb === '--help' || verb === '-h') {
        process.stdout.write(`usage: ${command.usage}\n`);
        return 0;
      }
      if (!command.verbWords.includes(verb)) throw new Usage(`${name} needs a verb: ${command.verbWords.join(' | ')} (${name} --help)`);
      const { values } = parseFlags(flags, command.flags);
      if (values.help) {
        process.stdout.write(`usage: ${command.usage}\n`);
        return 0;
      }
      return await command.run({ core, values, env, verb });
    }
    if (command.flags) {
      const { values, child, positionals } = parseFlags(rest, command.flags);
      if (values.help) {
        process.stdout.write(`usage: ${command.usage}\n`);
        return 0;
      }
      return await command.run({ core, values, child, positionals, env });
    }
    return await command.run({ core, argv: rest, env });
  } catch (error) {
    if (!error.usage && !error.code) logger.warning(error.stack ?? String(error));
    const doc = refusal(core, docName, error);
    print(doc);
    return doc.exitCode;
  }
}

main(process.argv.slice(2), process.env).then((code) => {
  process.exitCode = code;
});
