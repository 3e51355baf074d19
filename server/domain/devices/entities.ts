import { defineEntity, p } from '@mikro-orm/core';
import { Brand } from '../brands/entities.ts';
import { deviceStatuses } from '../../../contract/admin/devices.ts';
export type { DeviceStatus } from '../../../contract/admin/devices.ts';

/** A paired companion phone. Hot paths (auth, refresh, presence) use SQL directly; this maps the row for everything else. */
export const Device = defineEntity({
  name: 'Device',
  tableName: 'devices',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    uuid: p.uuid().unique(),
    brand: () => p.manyToOne(Brand),
    name: p.string().length(100),
    /** SHA-256 of the fingerprint sent at pairing; the fingerprint itself is not kept. */
    fingerprintHash: p.string().length(64),
    status: p.enum(deviceStatuses).default('active'),
    pairedAt: p.datetime().onCreate(() => new Date()),
    revokedAt: p.datetime().nullable(),
    revokedReason: p.string().length(64).nullable(),
    lastSeenAt: p.datetime().nullable(),
    lastHeartbeatAt: p.datetime().nullable(),
    batteryLevel: p.smallint().nullable(),
    isCharging: p.boolean().nullable(),
    network: p.string().length(32).nullable(),
    appVersion: p.string().length(32).nullable(),
    /** Presence as the offline detector last recorded it. */
    online: p.boolean().default(true),
    offlineSince: p.datetime().nullable(),
    /** The phone's clock minus the server's, smoothed (devices/clock.ts); null until the app reports its time. */
    clockOffsetMs: p.integer().nullable(),
    clockOffsetAt: p.datetime().nullable(),
    /** jti of the one refresh token currently valid. */
    refreshJti: p.string().length(64).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

/** A refresh token that was already exchanged; seeing it again revokes the device. */
export const DeviceRefreshTokenRotation = defineEntity({
  name: 'DeviceRefreshTokenRotation',
  tableName: 'device_refresh_token_rotations',
  properties: {
    jti: p.string().length(64).primary(),
    device: () => p.manyToOne(Device),
    rotatedAt: p.datetime().onCreate(() => new Date()),
    expiresAt: p.datetime(),
  },
});

/** One-time pairing code; only its hash is stored. */
export const PairingCode = defineEntity({
  name: 'PairingCode',
  tableName: 'pairing_codes',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    brand: () => p.manyToOne(Brand),
    codeHash: p.string().length(64).unique(),
    createdAt: p.datetime().onCreate(() => new Date()),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
    usedByDevice: () => p.manyToOne(Device).nullable(),
  },
});

export type DeviceEntity = InstanceType<typeof Device.class>;
export type PairingCodeEntity = InstanceType<typeof PairingCode.class>;
