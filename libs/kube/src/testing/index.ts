export * from './pods';
