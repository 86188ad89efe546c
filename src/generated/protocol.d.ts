export * from './protocol-dispatch';
export * from './protocol-formats';
export * from './protocol-pipeline';
export * from './protocol-records';
export * from './protocol-tls';
