// Entry of an IsolatedProcessSandbox child for tool modules Node can import directly
// (JavaScript). No in-process guard: the kernel confines this process. Inherited descriptors are
// closed first, before the tool module is imported (see descriptor-hygiene.ts).
import './close-inherited-descriptors.js';
import { runChild } from './child-runner.js';

await runChild((request) => import(request.module!));
