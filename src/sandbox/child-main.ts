// Entry of a LocalProcessSandbox child for tool modules Node can import directly (JavaScript).
// The network guard is imported first so that it is in place before any tool code runs.

import { runChild } from './child-runner.js';
import { configureNetworkGuard } from './network-guard.js';

await runChild((request) => import(request.module!), configureNetworkGuard);
