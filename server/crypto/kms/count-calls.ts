import type { Kms } from './kms.ts';

/** The KMS with each wrap and unwrap reported (`toolgate_kms_calls_total`): the bench counts them. */
export function countKmsCalls(kms: Kms, metrics: { recordKmsCall(operation: 'wrap' | 'unwrap'): void }): Kms {
  return {
    kind: kms.kind,
    wrapKey(dataKey) {
      metrics.recordKmsCall('wrap');
      return kms.wrapKey(dataKey);
    },
    unwrapKey(keyId, wrapped) {
      metrics.recordKmsCall('unwrap');
      return kms.unwrapKey(keyId, wrapped);
    },
  };
}
