import { defineEntity, p } from '@mikro-orm/core';
import { operatorRoles } from '../../../contract/vocabulary.ts';

/**
 * Someone who logs in to the admin console. The e-mail is the login (stored
 * lower-cased, not customer data); the password is a scrypt hash with its salt
 * and parameters (password.ts); the TOTP secret is encrypted with the PII cipher.
 * The lock-out counts failed logins in a 15-minute window on the row itself, so
 * every process sees the same count.
 */
export const Operator = defineEntity({
  name: 'Operator',
  tableName: 'operators',
  properties: {
    id: p.uuid().primary(),
    email: p.string().length(254).unique(),
    name: p.string().length(100),
    role: p.enum(operatorRoles),
    /** Brands in scope; null: every brand. */
    brandIds: p.json<number[]>().nullable(),
    passwordHash: p.string().length(255),
    /** Encrypted (PII cipher, bound to the operator): the confirmed secret, and one being enrolled. */
    totpSecret: p.text().nullable(),
    totpPendingSecret: p.text().nullable(),
    /** The last accepted TOTP time step: a code is accepted once. */
    totpLastStep: p.bigint('number').nullable(),
    disabled: p.boolean().default(false),
    failedLogins: p.integer().default(0),
    failedLoginsSince: p.datetime().nullable(),
    lockedUntil: p.datetime().nullable(),
    lastLoginAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});


/**
 * A console session. Only the SHA-256 of the cookie's random token is kept, so a
 * database dump opens no session. Idle sessions end after `lastSeenAt` plus the
 * idle timeout; every session ends at `expiresAt` (absolute).
 */
export const OperatorSession = defineEntity({
  name: 'OperatorSession',
  tableName: 'operator_sessions',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    operator: () => p.manyToOne(Operator).deleteRule('cascade'),
    tokenHash: p.string().length(64).unique(),
    createdAt: p.datetime().onCreate(() => new Date()),
    lastSeenAt: p.datetime(),
    expiresAt: p.datetime().index(),
  },
});
