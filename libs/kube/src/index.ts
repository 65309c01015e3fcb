export * from './client';
export * from './cluster';
export * from './registry';
