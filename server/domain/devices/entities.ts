import { defineEntity, p } from '@mikro-orm/core';
import { deviceProtocols, deviceStatuses, modes, presenceChangeStatuses } from '../../../contract/vocabulary.ts';
import { Brand } from '../brands/entities.ts';
export type { DeviceStatus } from '../../../contract/vocabulary.ts';

/** A paired companion phone. */
export const Device = defineEntity({
  name: 'Device',
  tableName: 'devices',
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    uuid: p.uuid().unique('devices_uuid_key'),
    brand: () => p.manyToOne(Brand).deleteRule('cascade').foreignKeyName('devices_brand_id_fkey'),
    name: p.string().length(100),
    /** SHA-256 of the fingerprint sent at pairing; the fingerprint itself is not kept. */
    fingerprintHash: p.string().length(64),
    status: p.enum(deviceStatuses).default('active'),
    pairedAt: p.datetime().defaultRaw('now()'),
    revokedAt: p.datetime().nullable(),
    revokedReason: p.string().length(64).nullable(),
    lastSeenAt: p.datetime().nullable(),
    lastHeartbeatAt: p.datetime().nullable(),
    batteryLevel: p.smallint().nullable(),
    isCharging: p.boolean().nullable(),
    network: p.string().length(32).nullable(),
    appVersion: p.string().length(32).nullable(),
    /** What the app last reported about what breaks forwarding (devices/diagnostics.ts); null until it reports it. */
    smsPermission: p.boolean().nullable(),
    batteryOptimizationIgnored: p.boolean().nullable(),
    lastSmsSeenAt: p.datetime().nullable(),
    /** Presence as the offline detector last recorded it. */
    online: p.boolean().default(true),
    offlineSince: p.datetime().nullable(),
    /** jti of the one refresh token currently valid. */
    refreshJti: p.string().length(64).nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
    updatedAt: p.datetime().defaultRaw('now()'),
    /** The mode of the pairing code it paired with (fixed: a trigger refuses a change). */
    mode: p.enum(modes).default('live'),
    /** The phone's clock minus the server's, smoothed (devices/clock.ts); null until the app reports its time. */
    clockOffsetMs: p.integer().nullable(),
    clockOffsetAt: p.datetime().nullable(),
    /** The app it paired with: ours, or OwnPay's Android app (server/domain/devices/ownpay.ts). */
    protocol: p.enum(deviceProtocols).default('native'),
    /**
     * OwnPay devices only: the device's AES-256-GCM key of its SMS payloads (hex),
     * encrypted with the service key (context `device.aes_key`, bound to brand
     * and uuid). Cleared when the device is revoked or re-paired.
     */
    aesKeyEncrypted: p.text().nullable(),
  },
  indexes: [
    { name: 'devices_brand_id_idx', properties: ['brand'] },
    { name: 'devices_presence_idx', properties: ['online', 'lastSeenAt'], where: "status = 'active'" },
    { name: 'devices_brand_fingerprint_idx', properties: ['brand', 'fingerprintHash'], where: "status = 'active'" },
  ],
  checks: [
    { name: 'devices_battery_level_check', expression: 'battery_level >= 0 AND battery_level <= 100' },
    { name: 'devices_check', expression: "(status = 'revoked') = (revoked_at IS NOT NULL)" },
    { name: 'devices_clock_offset_ms_check', expression: 'clock_offset_ms >= -86400000 AND clock_offset_ms <= 86400000' },
    { name: 'devices_aes_key_check', expression: "aes_key_encrypted IS NULL OR protocol = 'ownpay'" },
  ],
});

/** A refresh token that was already exchanged; seeing it again revokes the device. */
export const DeviceRefreshTokenRotation = defineEntity({
  name: 'DeviceRefreshTokenRotation',
  tableName: 'device_refresh_token_rotations',
  properties: {
    jti: p.string().length(64).primary(),
    device: () => p.manyToOne(Device).deleteRule('cascade').foreignKeyName('device_refresh_token_rotations_device_id_fkey'),
    rotatedAt: p.datetime().defaultRaw('now()'),
    /** When the rotated token would have expired anyway; rows past it can be dropped. */
    expiresAt: p.datetime(),
  },
  indexes: [
    { name: 'device_refresh_token_rotations_device_idx', properties: ['device'] },
    { name: 'device_refresh_token_rotations_expires_idx', properties: ['expiresAt'] },
  ],
});

/**
 * A device's presence history: one row each time the offline detector moves it
 * online or offline (devices/presence.ts), with what the phone last reported at
 * that moment. Kept for `PRESENCE_HISTORY_DAYS` (the presence sweep prunes it).
 */
export const DevicePresenceChange = defineEntity({
  name: 'DevicePresenceChange',
  tableName: 'device_presence_changes',
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    device: () => p.manyToOne(Device).deleteRule('cascade').foreignKeyName('device_presence_changes_device_id_fkey'),
    status: p.enum(presenceChangeStatuses),
    changedAt: p.datetime().defaultRaw('now()'),
    /** The device's last authenticated call when the change was recorded. */
    lastSeenAt: p.datetime().nullable(),
    lastHeartbeatAt: p.datetime().nullable(),
    batteryLevel: p.smallint().nullable(),
    isCharging: p.boolean().nullable(),
    network: p.string().length(32).nullable(),
  },
  indexes: [
    {
      name: 'device_presence_changes_device_idx',
      expression: 'CREATE INDEX device_presence_changes_device_idx ON device_presence_changes (device_id, changed_at DESC, id DESC)',
    },
    { name: 'device_presence_changes_changed_at_idx', properties: ['changedAt'] },
  ],
  checks: [{ name: 'device_presence_changes_battery_level_check', expression: 'battery_level >= 0 AND battery_level <= 100' }],
});

/** One-time pairing code; only its hash is stored. */
export const PairingCode = defineEntity({
  name: 'PairingCode',
  tableName: 'pairing_codes',
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    brand: () => p.manyToOne(Brand).deleteRule('cascade').foreignKeyName('pairing_codes_brand_id_fkey'),
    codeHash: p.string().length(64).unique('pairing_codes_code_hash_key'),
    createdAt: p.datetime().defaultRaw('now()'),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
    usedByDevice: () => p.manyToOne(Device).nullable().deleteRule('set null').foreignKeyName('pairing_codes_used_by_device_id_fkey'),
    /** The mode the paired device takes. */
    mode: p.enum(modes).default('live'),
  },
  indexes: [{ name: 'pairing_codes_brand_id_idx', properties: ['brand'] }],
  checks: [{ name: 'pairing_codes_check', expression: 'expires_at > created_at' }],
});

