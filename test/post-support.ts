/**
 * PoSt test inputs built directly as PoStSectorProof objects: small tree_r_last trees (tree/build.ts), a random
 * comm_c, comm_r = Poseidon(comm_c, comm_r_last), inclusion proofs at the challenged leaves. No tests here.
 */
import { poseidonHash } from '../src/filecoin/hash/poseidon.js';
import type { SectorSize, TreeShape } from '../src/filecoin/registry.js';
import { buildPoseidonTree, shapeArities, treeProof, type BuiltTree } from '../src/filecoin/tree/build.js';
import type { PoStProofInfo, PoStSectorProof } from '../src/filecoin/post/types.js';
import { postExpectedChallenges } from '../src/filecoin/post/circuit.js';
import { rng } from './support.js';

export interface TestSector {
  sectorId: bigint;
  tree: BuiltTree<bigint>;
  commC: bigint;
  commR: bigint;
}

/** A sector of `leaves` random leaves in a tree of the given shape. */
export function testSector(shape: TreeShape, sectorId: bigint, seed: number): TestSector {
  const arities = shapeArities(shape);
  const leaves = arities.reduce((a, b) => a * b, 1);
  const next = rng(seed);
  const tree = buildPoseidonTree(Array.from({ length: leaves }, () => next()), arities);
  const commC = next();
  return { sectorId, tree, commC, commR: poseidonHash([commC, tree.root]) };
}

/** The vanilla proof of a sector at the given leaf challenges. */
export function sectorProof(s: TestSector, shape: TreeShape, challenges: readonly number[]): PoStSectorProof {
  return {
    sectorId: s.sectorId,
    commR: s.commR,
    commC: s.commC,
    commRLast: s.tree.root,
    inclusionProofs: challenges.map((c) => treeProof(s.tree, c, shape)),
  };
}

/** A registered-proof-like description for rust-fil-proofs' test circuits (64 leaves per base tree). */
export function testPoStInfo(tree: TreeShape, sectorCount: number, challengeCount: number, api: 'V1' | 'V1_2' = 'V1'): PoStProofInfo {
  const leaves = shapeArities(tree).reduce((a, b) => a * b, 1);
  const size = { label: 'test', sectorSize: leaves * 32, circuitLabel: 'test', paramsTreeTag: 'test', layers: 2, partitions: 1, challenges: 1, tree } as SectorSize;
  return { id: -1, type: 'window', api, size, challengeCount, sectorCount };
}

/** Vanilla proofs of `sectors` for `info` at the challenges the randomness derives. */
export function postProofsFor(info: PoStProofInfo, sectors: readonly TestSector[], randomness: Uint8Array, partitionIndex = 0): PoStSectorProof[] {
  const stub = sectors.map((s) => ({ sectorId: s.sectorId }) as PoStSectorProof);
  const ch = postExpectedChallenges(info, stub, { randomness, partitionIndex });
  return sectors.map((s, i) => sectorProof(s, info.size.tree, ch[i]!));
}

/** 32 bytes from a seed, top byte masked as Curio masks the randomness. */
export function testRandomness(seed: number): Uint8Array {
  const out = new Uint8Array(32);
  let x = seed * 2654435761;
  for (let i = 0; i < 32; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  out[31]! &= 0x3f;
  return out;
}
