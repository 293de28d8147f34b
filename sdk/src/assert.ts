/**
 * Argument checks at the top of public functions: a misuse throws a `TypeError` naming the
 * argument, with a stable `code`, and never becomes a request. Protocol failures, by contrast,
 * are returned as typed results.
 */

export type ArgumentErrorCode = 'ERR_INVALID_ARG_TYPE' | 'ERR_INVALID_ARG_VALUE';

/**
 * A caller's mistake in the arguments of an SDK function, thrown before any request is made.
 *
 * @example
 * try {
 *   new Toolgate({ baseUrl: 'toolgate.example.com', apiKey, clientId });
 * } catch (error) {
 *   if (error instanceof ToolgateArgumentError) console.error(error.code, error.message);
 *   // ERR_INVALID_ARG_VALUE options.baseUrl must be an absolute URL
 * }
 */
export class ToolgateArgumentError extends TypeError {
  readonly code: ArgumentErrorCode;
  constructor(message: string, code: ArgumentErrorCode) {
    super(message);
    this.name = 'ToolgateArgumentError';
    this.code = code;
  }
}

export function assertString(value: unknown, label: string): asserts value is string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new ToolgateArgumentError(`${label} must be a non-empty string`, 'ERR_INVALID_ARG_TYPE');
  }
}

export function assertOptionalString(value: unknown, label: string): asserts value is string | undefined {
  if (value !== undefined) assertString(value, label);
}

/** An array of non-empty strings; `undefined` passes. */
export function assertOptionalStrings(value: unknown, label: string): asserts value is string[] | undefined {
  if (value === undefined) return;
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string' || item === '')) {
    throw new ToolgateArgumentError(`${label} must be an array of non-empty strings`, 'ERR_INVALID_ARG_TYPE');
  }
}

export function assertObject(value: unknown, label: string): asserts value is object {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ToolgateArgumentError(`${label} must be a plain object`, 'ERR_INVALID_ARG_TYPE');
  }
}

export function assertFunction(
  value: unknown,
  label: string,
): asserts value is (...args: never[]) => unknown {
  if (typeof value !== 'function') {
    throw new ToolgateArgumentError(`${label} must be a function`, 'ERR_INVALID_ARG_TYPE');
  }
}

/** {@link assertFunction}, with `undefined` passing. */
export function assertOptionalFunction(value: unknown, label: string): void {
  if (value !== undefined) assertFunction(value, label);
}

/** A whole number of milliseconds within [min, max]; `undefined` passes. */
export function assertOptionalMs(value: unknown, label: string, min = 0, max = 2 ** 31 - 1): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ToolgateArgumentError(
      `${label} must be a whole number of milliseconds from ${min} to ${max}`,
      'ERR_INVALID_ARG_VALUE',
    );
  }
}

export function assertHttpUrl(value: unknown, label: string): asserts value is string {
  assertString(value, label);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ToolgateArgumentError(`${label} must be an absolute URL`, 'ERR_INVALID_ARG_VALUE');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ToolgateArgumentError(`${label} must be an http(s) URL`, 'ERR_INVALID_ARG_VALUE');
  }
}

export function assertOptionalSignal(
  value: unknown,
  label: string,
): asserts value is AbortSignal | undefined {
  if (value === undefined) return;
  if (typeof value !== 'object' || value === null || typeof (value as AbortSignal).aborted !== 'boolean') {
    throw new ToolgateArgumentError(`${label} must be an AbortSignal`, 'ERR_INVALID_ARG_TYPE');
  }
}
