// The `veridex` executable's entry point: runs the command line and sets the exit code.
import { runCli } from './run-cli.js';

process.exitCode = await runCli(process.argv.slice(2));
