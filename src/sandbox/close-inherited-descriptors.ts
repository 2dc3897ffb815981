// Imported first by an IsolatedProcessSandbox child's bundle, for its side effect: inherited
// descriptors are closed before the tool module's top-level code runs (see descriptor-hygiene.ts).
// A child started from a startup snapshot runs no top-level code again: it runs the snapshot's
// deserialize callbacks, in the order they were added, then its main function. The tool module
// can add such a callback of its own while the snapshot is built, so this one is added here,
// before the tool module is imported: it runs first, before any callback of the tool's.
import v8 from 'node:v8';
import { closeInheritedDescriptors } from './descriptor-hygiene.js';

closeInheritedDescriptors();
if (v8.startupSnapshot.isBuildingSnapshot()) {
  v8.startupSnapshot.addDeserializeCallback(() => {
    closeInheritedDescriptors();
  });
}
