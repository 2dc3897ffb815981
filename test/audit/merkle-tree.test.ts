import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  EMPTY_ROOT,
  leafHash,
  MerkleTree,
  nodeHash,
  rootFromInclusion,
  verifyConsistency,
  verifyInclusion,
} from '../../src/audit/index.js';

const bytes = (hex: string) => new Uint8Array(Buffer.from(hex, 'hex'));

// The Certificate Transparency reference tree (transparency-dev/merkle testonly/constants.go
// and proof/verify_test.go; RFC 6962 hashing, which RFC 9162 keeps for SHA-256), used as data.
const CT_LEAVES = [
  '',
  '00',
  '10',
  '2021',
  '3031',
  '40414243',
  '5051525354555657',
  '606162636465666768696a6b6c6d6e6f',
].map((hex) => leafHash(bytes(hex)));
const CT_ROOTS = [
  EMPTY_ROOT,
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];
const CT_NODES = [
  [
    '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
    '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
    '0298d122906dcfc10892cb53a73992fc5b9f493ea4c9badb27b791b4127a7fe7',
    '07506a85fd9dd2f120eb694f86011e5bb4662e5c415a62917033d4a9624487e7',
    'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    '4271a26be0d8a84f0bd54c8c302e7cb3a3b5d1fa6780a40bcce2873477dab658',
    'b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f',
    '46f6ffadd3d06a09ff3c5860d2755c8b9819db7df44251788c7d8e3180de8eb1',
  ],
  [
    'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
    '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
    '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
    'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
  ],
  [
    'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
  ],
];
// [leaf index (0-based), tree size, proof]
const CT_INCLUSION: Array<[number, number, string[]]> = [
  [0, 1, []],
  [0, 8, [CT_NODES[0]![1]!, CT_NODES[1]![1]!, CT_NODES[2]![1]!]],
  [5, 8, [CT_NODES[0]![4]!, CT_NODES[1]![3]!, CT_NODES[2]![0]!]],
  [2, 3, [CT_NODES[1]![0]!]],
  [1, 5, [CT_NODES[0]![0]!, CT_NODES[1]![1]!, CT_NODES[0]![4]!]],
];
// [first size, second size, proof]
const CT_CONSISTENCY: Array<[number, number, string[]]> = [
  [1, 1, []],
  [1, 8, [CT_NODES[0]![1]!, CT_NODES[1]![1]!, CT_NODES[2]![1]!]],
  [6, 8, [CT_NODES[1]![2]!, CT_NODES[1]![3]!, CT_NODES[2]![0]!]],
  [2, 5, [CT_NODES[1]![1]!, CT_NODES[0]![4]!]],
  [6, 7, [CT_NODES[1]![2]!, CT_NODES[0]![6]!, CT_NODES[2]![0]!]],
];

/** RFC 9162's MTH written as literally as possible, as a second implementation to compare with. */
function referenceRoot(leaves: readonly string[]): string {
  if (leaves.length === 0) return EMPTY_ROOT;
  if (leaves.length === 1) return leaves[0]!;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  const inner = Buffer.concat([
    Buffer.from([1]),
    Buffer.from(referenceRoot(leaves.slice(0, k)), 'hex'),
    Buffer.from(referenceRoot(leaves.slice(k)), 'hex'),
  ]);
  return createHash('sha256').update(inner).digest('hex');
}

const distinctLeaves = (count: number, salt = 0) =>
  Array.from({ length: count }, (_, index) =>
    leafHash(new TextEncoder().encode(`${salt}:${index}`)),
  );

const flip = (hash: string) => `${hash[0] === '0' ? '1' : '0'}${hash.slice(1)}`;

describe('MerkleTree (RFC 9162 §2.1)', () => {
  it('hashes leaves and nodes with the 0x00 / 0x01 prefixes', () => {
    expect(leafHash(new Uint8Array())).toBe(
      createHash('sha256')
        .update(Buffer.from([0]))
        .digest('hex'),
    );
    const [a, b] = CT_LEAVES;
    expect(nodeHash(a!, b!)).toBe(
      createHash('sha256')
        .update(Buffer.concat([Buffer.from([1]), Buffer.from(a!, 'hex'), Buffer.from(b!, 'hex')]))
        .digest('hex'),
    );
    expect(nodeHash(a!, b!)).not.toBe(nodeHash(b!, a!));
  });

  it('gives the Certificate Transparency reference roots for sizes 0 to 8', () => {
    const tree = new MerkleTree(CT_LEAVES);
    for (let size = 0; size <= 8; size++) {
      expect(tree.root(size), `size ${size}`).toBe(CT_ROOTS[size]);
      expect(new MerkleTree(CT_LEAVES.slice(0, size)).root()).toBe(CT_ROOTS[size]);
    }
    expect(CT_LEAVES).toEqual(CT_NODES[0]);
  });

  it('produces and verifies the reference inclusion proofs', () => {
    const tree = new MerkleTree(CT_LEAVES);
    for (const [index, size, proof] of CT_INCLUSION) {
      expect(tree.inclusionProof(index, size), `${index} of ${size}`).toEqual(proof);
      expect(verifyInclusion(index, size, CT_LEAVES[index]!, proof, CT_ROOTS[size]!)).toBe(true);
    }
  });

  it('produces and verifies the reference consistency proofs', () => {
    const tree = new MerkleTree(CT_LEAVES);
    for (const [first, second, proof] of CT_CONSISTENCY) {
      expect(tree.consistencyProof(first, second), `${first} → ${second}`).toEqual(proof);
      expect(verifyConsistency(first, second, CT_ROOTS[first]!, CT_ROOTS[second]!, proof)).toBe(
        true,
      );
    }
  });

  it('rejects every corrupted reference inclusion proof (the CT probes)', () => {
    const some = 'abacaba000000000000000000000000000000000000000000060061e00123456';
    for (const [index, size, proof] of CT_INCLUSION) {
      const root = CT_ROOTS[size]!;
      const leaf = CT_LEAVES[index]!;
      const probes: Array<[number, number, string, string[], string]> = [
        [index - 1, size, leaf, proof, root],
        [index + 1, size, leaf, proof, root],
        [index ^ 2, size, leaf, proof, root],
        [index, size * 2, leaf, proof, root],
        [index, Math.floor(size / 2), leaf, proof, root],
        [index, size, some, proof, root],
        [index, size, leaf, proof, EMPTY_ROOT],
        [index, size, leaf, proof, some],
        [index, size, leaf, [...proof, root], root],
        [index, size, leaf, [root, ...proof], root],
        [index, size, leaf, [...proof, ''], root],
      ];
      for (let at = 0; at < proof.length; at++) {
        probes.push([index, size, leaf, proof.map((p, i) => (i === at ? flip(p) : p)), root]);
      }
      if (proof.length > 0) probes.push([index, size, leaf, proof.slice(0, -1), root]);
      if (proof.length > 1)
        probes.push([index, size, leaf, [proof[0]!, some, ...proof.slice(1)], root]);
      for (const [i, n, l, p, r] of probes) {
        if (i === index && n === size && l === leaf && r === root && p === proof) continue;
        expect(verifyInclusion(i, n, l, p, r), `probe ${i}/${n} of ${index}/${size}`).toBe(false);
      }
    }
  });

  it('rejects every corrupted reference consistency proof (the CT probes)', () => {
    for (const [first, second, proof] of CT_CONSISTENCY) {
      if (proof.length === 0) continue;
      const a = CT_ROOTS[first]!;
      const b = CT_ROOTS[second]!;
      const probes: Array<[number, number, string, string, string[]]> = [
        [first - 1, second, a, b, proof],
        [first + 1, second, a, b, proof],
        [first ^ 2, second, a, b, proof],
        [first, second * 2, a, b, proof],
        [first, Math.floor(second / 2), a, b, proof],
        [first, second, EMPTY_ROOT, b, proof],
        [first, second, a, EMPTY_ROOT, proof],
        [first, second, b, a, proof],
        [first, second, a, b, []],
        [first, second, a, b, [...proof, a]],
        [first, second, a, b, [...proof, b]],
        [first, second, a, b, [a, ...proof]],
        [first, second, a, b, [b, ...proof]],
        [first, second, a, b, [proof[0]!, ...proof]],
        [first, second, a, b, proof.slice(0, -1)],
      ];
      for (let at = 0; at < proof.length; at++) {
        probes.push([first, second, a, b, proof.map((p, i) => (i === at ? flip(p) : p))]);
      }
      for (const [m, n, r1, r2, p] of probes) {
        expect(verifyConsistency(m, n, r1, r2, p), `probe ${m} → ${n}`).toBe(false);
      }
    }
  });

  it('handles the degenerate consistency cases', () => {
    const [, one, two] = CT_ROOTS;
    expect(verifyConsistency(0, 0, EMPTY_ROOT, EMPTY_ROOT, [])).toBe(true);
    expect(verifyConsistency(0, 8, EMPTY_ROOT, CT_ROOTS[8]!, [])).toBe(true);
    expect(verifyConsistency(0, 8, one!, CT_ROOTS[8]!, [])).toBe(false);
    expect(verifyConsistency(0, 8, EMPTY_ROOT, CT_ROOTS[8]!, [one!])).toBe(false);
    expect(verifyConsistency(1, 1, one!, one!, [])).toBe(true);
    expect(verifyConsistency(1, 1, one!, two!, [])).toBe(false);
    expect(verifyConsistency(1, 1, one!, one!, [one!])).toBe(false);
    expect(verifyConsistency(2, 1, two!, one!, [])).toBe(false);
  });

  it('never throws on malformed proofs, sizes or hashes', () => {
    fc.assert(
      fc.property(fc.anything(), fc.anything(), fc.anything(), fc.anything(), (a, b, c, d) => {
        expect(
          verifyInclusion(a as number, b as number, c as string, d as string[], c as string),
        ).toBe(false);
        verifyConsistency(a as number, b as number, c as string, c as string, d as string[]);
        expect(rootFromInclusion(-1, 1, EMPTY_ROOT, [])).toBeUndefined();
      }),
    );
    expect(verifyInclusion(0, 1, EMPTY_ROOT.toUpperCase(), [], EMPTY_ROOT.toUpperCase())).toBe(
      false,
    );
    expect(verifyInclusion(1.5, 3, CT_LEAVES[1]!, [], CT_ROOTS[3]!)).toBe(false);
  });

  it('throws RangeError for proofs the tree cannot give, TypeError for bad leaves', () => {
    const tree = new MerkleTree(CT_LEAVES);
    expect(() => tree.inclusionProof(8)).toThrow(RangeError);
    expect(() => tree.inclusionProof(0, 9)).toThrow(RangeError);
    expect(() => tree.inclusionProof(-1)).toThrow(RangeError);
    expect(() => tree.consistencyProof(5, 3)).toThrow(RangeError);
    expect(() => tree.root(9)).toThrow(RangeError);
    expect(() => new MerkleTree(['00'])).toThrow(TypeError);
  });
});

describe('MerkleTree properties', () => {
  const sizes = fc.integer({ min: 1, max: 140 });

  it('every prefix root equals the literal RFC recursion', () => {
    const leaves = distinctLeaves(70);
    const tree = new MerkleTree(leaves);
    for (let size = 0; size <= leaves.length; size++) {
      expect(tree.root(size)).toBe(referenceRoot(leaves.slice(0, size)));
    }
  });

  it('every inclusion proof verifies, and not for another leaf, index or size', () => {
    fc.assert(
      fc.property(sizes, fc.nat(), fc.nat(), (n, rawIndex, rawSize) => {
        const tree = new MerkleTree(distinctLeaves(n));
        const size = 1 + (rawSize % n);
        const index = rawIndex % size;
        const proof = tree.inclusionProof(index, size);
        const root = tree.root(size);
        expect(verifyInclusion(index, size, tree.leaf(index), proof, root)).toBe(true);
        expect(proof.length).toBeLessThanOrEqual(Math.ceil(Math.log2(size)));
        expect(verifyInclusion(index, size, flip(tree.leaf(index)), proof, root)).toBe(false);
        if (size > 1) {
          const other = (index + 1) % size;
          expect(verifyInclusion(other, size, tree.leaf(index), proof, root)).toBe(false);
          expect(verifyInclusion(index, size, tree.leaf(other), proof, root)).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('every consistency proof between sizes m ≤ n verifies (appends never break it)', () => {
    fc.assert(
      fc.property(sizes, fc.nat(), (n, rawFirst) => {
        const tree = new MerkleTree(distinctLeaves(n));
        const first = rawFirst % (n + 1);
        const proof = tree.consistencyProof(first);
        expect(verifyConsistency(first, n, tree.root(first), tree.root(), proof)).toBe(true);
        // The older tree built on its own has the same root: a prefix is a tree of its own.
        expect(new MerkleTree(distinctLeaves(first)).root()).toBe(tree.root(first));
      }),
      { numRuns: 300 },
    );
  });

  type Edit = 'tamper' | 'drop' | 'swap' | 'insert';
  const edit = (leaves: string[], kind: Edit, at: number, other: number): string[] => {
    const copy = [...leaves];
    if (kind === 'tamper') copy[at] = flip(copy[at]!);
    else if (kind === 'drop') copy.splice(at, 1);
    else if (kind === 'insert') copy.splice(at, 0, leafHash(new Uint8Array([7, 7, 7])));
    else [copy[at], copy[other]] = [copy[other]!, copy[at]!];
    return copy;
  };

  it('a tampered, dropped, inserted or reordered leaf in the older prefix breaks consistency', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100 }),
        fc.nat(),
        fc.nat(),
        fc.nat(),
        fc.nat(),
        fc.constantFrom<Edit>('tamper', 'drop', 'swap', 'insert'),
        (oldSize, rawGrowth, rawAt, rawOther, salt, kind) => {
          const growth = rawGrowth % 60;
          const leaves = distinctLeaves(oldSize + growth, salt);
          const honest = new MerkleTree(leaves);
          const oldRoot = honest.root(oldSize);
          const at = rawAt % oldSize;
          let other = rawOther % (oldSize + growth);
          if (other === at) other = (at + 1) % (oldSize + growth);
          if (kind === 'swap' && other === at) return; // a single leaf cannot be reordered
          const forged = new MerkleTree(edit(leaves, kind, at, other));
          if (forged.size < oldSize) {
            // The newer log is shorter than the head it must extend: no proof exists at all.
            expect(() => forged.consistencyProof(oldSize)).toThrow(RangeError);
            return;
          }
          const proof = forged.consistencyProof(oldSize);
          expect(verifyConsistency(oldSize, forged.size, oldRoot, forged.root(), proof)).toBe(
            false,
          );
          // The honest proof does not carry over to the forged tree either.
          if (forged.size === honest.size) {
            expect(
              verifyConsistency(
                oldSize,
                honest.size,
                oldRoot,
                forged.root(),
                honest.consistencyProof(oldSize),
              ),
            ).toBe(false);
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it('an edit after the older prefix never breaks consistency (it is an honest extension)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 1, max: 60 }), (m, extra) => {
        const leaves = distinctLeaves(m + extra);
        const oldRoot = new MerkleTree(leaves.slice(0, m)).root();
        const later = [...leaves];
        later[m] = flip(later[m]!);
        const tree = new MerkleTree(later);
        expect(
          verifyConsistency(m, tree.size, oldRoot, tree.root(), tree.consistencyProof(m)),
        ).toBe(true);
      }),
      { numRuns: 100 },
    );
  });
});
