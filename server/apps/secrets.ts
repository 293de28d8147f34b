/**
 * Facts of a stored app that the registry and the registration both need, apart from either (the
 * registry is part of the server's dependencies; storing a registration takes them all).
 */
import type { PublicAuth } from '../../shared/schemas/apps.ts';
import type { ServiceParameter } from '../catalog/types.ts';

/** The envelope context of an app's secret: a blob copied to another app does not open. */
export function appSecretContext(appId: string): string {
  return `app:${appId}`;
}

/** The parameter an api_key app's service credential fills in: never part of a tool. */
export function serviceParameter(auth: PublicAuth): ServiceParameter | undefined {
  return auth.type === 'api_key' ? { in: auth.in, name: auth.name } : undefined;
}
