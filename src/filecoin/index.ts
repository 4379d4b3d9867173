/** Filecoin PoRep inputs: hashes, trees, the SDR graph, C1 parsing, verification and public inputs. */
export * from './hash/fr32.js';
export * from './hash/sha256.js';
export * from './hash/poseidon.js';
export * from './hash/chacha8.js';
export * from './tree/path.js';
export * from './tree/build.js';
export * from './registry.js';
export * from './graph.js';
export * from './c1.js';
export * from './verify.js';
export * from './public-inputs.js';
