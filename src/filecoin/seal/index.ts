/** Sealing small sectors for real (`sealSector`) and synthetic C1s of any size (`synthC1`). */
export * from './options.js';
export * from './parents.js';
export * from './poseidon-fast.js';
export * from './poseidon-pool.js';
export * from './trees.js';
export * from './commit1.js';
export * from './sealer.js';
export * from './synthetic.js';
export * from './progress.js';
export * from './sector-store.js';
