/**
 * The SDK writes the server's router type out from the contract's schemas (sdk/src/router.ts) so
 * that its published declarations need nothing of the server. These compile-time checks (run by
 * `tsc --noEmit`, i.e. `npm run check`) hold it equal to the server's real `AppRouter`: the same
 * procedures, each of the same kind with the same input and output, and the same error shape.
 */
import { expect, it } from 'vitest';
import type { AppRouter as SdkRouter } from '../../sdk/src/router.ts';
import type { AppRouter as ServerRouter } from '../../server/routers/_app.ts';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Expect<T extends true> = T;

/** A router record reduced to what a client sees: per procedure its kind, input and output. */
type Surface<R> = {
  [K in keyof R]: R[K] extends { _def: { type: infer T; $types: { input: infer I; output: infer O } } }
    ? { type: T; input: I; output: O }
    : Surface<R[K]>;
};
type Of<R extends { _def: { record: unknown } }> = Surface<R['_def']['record']>;
type ErrorShapeOf<R extends { _def: { _config: { $types: { errorShape: unknown } } } }> =
  R['_def']['_config']['$types']['errorShape'];
type TransformerOf<R extends { _def: { _config: { $types: { transformer: unknown } } } }> =
  R['_def']['_config']['$types']['transformer'];

type Checks = [
  Expect<Equal<keyof Of<SdkRouter>, keyof Of<ServerRouter>>>,
  Expect<Equal<Of<SdkRouter>, Of<ServerRouter>>>,
  Expect<Equal<ErrorShapeOf<SdkRouter>, ErrorShapeOf<ServerRouter>>>,
  Expect<Equal<TransformerOf<SdkRouter>, TransformerOf<ServerRouter>>>,
];

it('the SDK router type equals the server AppRouter (checked by tsc)', () => {
  const checked: Checks = [true, true, true, true];
  expect(checked).toHaveLength(4);
});
