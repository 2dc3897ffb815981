export { type CliIo, EXIT, processIo } from './io.js';
export { runCli } from './run-cli.js';
