/** The daemon and bench client entry points for src/cli (see the engine report / README). */
export { runDaemon, type Daemon, type DaemonOptions } from './daemon.js';
export {
  benchSingle,
  benchBatch,
  benchStatus,
  benchPreload,
  benchEvict,
  benchCancel,
  benchMetrics,
  benchTrace,
  buildRequest,
  connectEngine,
  formatTimings,
  type BatchOptions,
  type BenchType,
  type SubmitOptions,
} from './bench-client.js';
export { startGrpcServer } from './grpc.js';
export { startHttpServer } from './http.js';
