import { ApiKey, Brand } from '../../domain/brands/entities.ts';

/** Every entity the ORM knows; each domain area adds its own here. */
export const entities = [Brand, ApiKey];
