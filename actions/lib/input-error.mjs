// How a bad input is named to the person who set it. The core names an input by its own name
// (`lock`, `api-max-attempts`) or, for the run's context, by its environment variable
// (`GITHUB_RUN_ID`); the action calls the first an input, the command line a flag. One rule for
// both, and for the core's warnings (which start with the input's name in backticks).

const ENVIRONMENT_NAME = /^[A-Z][A-Z0-9_]*$/;

/** An action's input: input `lock`. */
export const actionInput = (name) => `input \`${name}\``;

/** A command line's flag: --lock. */
export const cliFlag = (name) => `--${name}`;

/** `name` as its owner reads it: an environment variable, or what `nameOf` calls it. */
function named(name, nameOf) {
  return ENVIRONMENT_NAME.test(name) ? `environment variable ${name}` : nameOf(name);
}

/**
 * An error's message with its input named by `nameOf` (actionInput, cliFlag); an error that is
 * not about an input keeps its own message.
 */
export function describeInputError(error, nameOf) {
  if (error.code !== 'invalid-input' || !error.input || !error.rule) return error.message;
  return `${named(error.input, nameOf)} ${error.rule}${error.value ? ` (got ${JSON.stringify(error.value)})` : ''}`;
}

/** A plan's warning (`name` rule…; using …) with its input named by `nameOf`. */
export function describeInputWarning(warning, nameOf) {
  const match = /^`([^`]+)`/.exec(warning);
  return match ? `${named(match[1], nameOf)}${warning.slice(match[0].length)}` : warning;
}
