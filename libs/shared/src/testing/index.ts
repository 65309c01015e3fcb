export * from './infra';
export * from './helpers';
export * from './kafka';
export * from './env';
export * from './processes';
export * from './gateway-client';
export * from './git-fixture';
export * from './app-request';
