// Entry of the compile worker thread: loads the TypeScript worker through tsx, the way the
// server itself runs (`tsx server/main.ts`), and the same way under the test runner.
import { tsImport } from 'tsx/esm/api';

await tsImport('./compile-worker.ts', import.meta.url);
