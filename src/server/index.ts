/** The daemon's entry points for src/cli (the bench client is src/client/grpc-client.ts). */
export { runDaemon, type Daemon, type DaemonOptions } from './daemon.js';
export { startGrpcServer } from './grpc.js';
export { startHttpServer } from './http.js';
