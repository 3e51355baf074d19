export * from './errors.ts';
export * from './envelope.ts';
export * from './pagination.ts';
export * from './money.ts';
export * from './ids.ts';
export * from './meta.ts';
export * from './responses.ts';
export * from './mode.ts';
