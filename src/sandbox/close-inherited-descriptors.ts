// Imported first by an IsolatedProcessSandbox child's bundle, for its side effects, before any
// code of the tool module runs (README "Sandboxes"):
// 1. inherited descriptors are closed (see descriptor-hygiene.ts);
// 2. the child waits for its call to start (see call-start.ts): a child started ahead of time
//    (`prewarm`) runs no tool code — top-level or snapshot callback — until a call drives it.
// A child started from a startup snapshot runs no top-level code again: it runs the snapshot's
// deserialize callbacks, in the order they were added, then its main function. The tool module
// can add such a callback of its own while the snapshot is built, so this one is added here,
// before the tool module is imported: it runs first, before any callback of the tool's.
import v8 from 'node:v8';
import { awaitCallStart } from './call-start.js';
import { closeInheritedDescriptors } from './descriptor-hygiene.js';

closeInheritedDescriptors();
if (v8.startupSnapshot.isBuildingSnapshot()) {
  v8.startupSnapshot.addDeserializeCallback(() => {
    closeInheritedDescriptors();
    awaitCallStart();
  });
} else {
  awaitCallStart();
}
