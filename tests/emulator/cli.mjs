// The emulator's command line, run when emulator.mjs is executed directly:
//   node tests/emulator/emulator.mjs --port 8080 [--owner o --repo r --branch main
//        --dir DIR --token T ...]      prints the URL, serves until SIGINT/SIGTERM.

import process from 'node:process';


/** The emulator's options from the command line (see the usage above). */
export function parseArgs(argv) {
  const o = { tokens: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    switch (a) {
      case '--port': o.port = Number(val()); break;
      case '--host': o.host = val(); break;
      case '--owner': o.owner = val(); break;
      case '--repo': o.repo = val(); break;
      case '--branch': o.defaultBranch = val(); break;
      case '--dir': o.dir = val(); break;
      case '--token': o.tokens.push(val()); break;
      case '-h':
      case '--help':
        console.log('usage: emulator.mjs [--port N] [--host H] [--owner O] [--repo R] [--branch B] [--dir DIR] [--token T]...');
        process.exit(0);
        break;
      default:
        throw new Error(`unknown argument ${a}`);
    }
  }
  if (!o.tokens.length) o.tokens = null;
  return o;
}

/** Prints the emulator's URL and serves until SIGINT or SIGTERM, then closes it and exits. */
export function serve(emu) {
  console.log(emu.url);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await emu.close();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
