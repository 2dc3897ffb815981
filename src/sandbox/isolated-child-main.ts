// Entry of an IsolatedProcessSandbox child for tool modules Node can import directly
// (JavaScript). No in-process guard: the kernel confines this process.
import { runChild } from './child-runner.js';

await runChild((request) => import(request.module!));
