// Entry of a LocalProcessSandbox child for tool modules Node can import directly (JavaScript).
// The network guard is imported first so that it is in place before any tool code runs.
import './network-guard.js';
import { runChild } from './child-runner.js';

await runChild((request) => import(request.module!));
