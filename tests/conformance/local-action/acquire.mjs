// Entry point for @github/local-action, which imports an action's entry and calls its exported
// run(). The committed bundle (dist/acquire.mjs, runs.main of actions/acquire/action.yml) runs
// the action when it is imported and exports nothing, so run() imports it: the bundle is
// exactly what the runner would run.
export async function run() {
  await import('../../../dist/acquire.mjs');
}
