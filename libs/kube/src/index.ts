export * from './client';
export * from './client-shape';
export * from './cluster';
export * from './registry';
export * from './image-archive';
