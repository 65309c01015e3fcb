export * from './client';
export * from './cluster';
export * from './registry';
export * from './image-archive';
