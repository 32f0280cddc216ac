import { defineConfig } from 'vitest/config';

// test/ mirrors the source tree (test/core/plan.test.ts tests core/plan.ts);
// the suite a file belongs to is in its name, by what it needs:
//   *.test.ts        unit: no root, no network, no external tools
//   *.int.test.ts    integration: real tools and the local driver end to end on loopback
//   *.synth.test.ts  infra: cdk synth of the stacks
//   *.lab.test.ts    lab: network namespaces (root)
//   *.emu.test.ts    emulator: the AWS adapters with the real SDK against dynalite / s3rver on loopback
//   *.fault.test.ts  faults: the real ASL through the local driver with adapters failing on cue
//   *.accept.test.ts accept: README and docs/ commands as typed, through bash and npx, on a clean tree
const SLOW = [
  '**/*.int.test.ts',
  '**/*.synth.test.ts',
  '**/*.lab.test.ts',
  '**/*.emu.test.ts',
  '**/*.fault.test.ts',
  '**/*.accept.test.ts',
];

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['**/node_modules/**', ...SLOW],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/**/*.int.test.ts'],
          testTimeout: 300_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      { test: { name: 'emulator', include: ['test/**/*.emu.test.ts'], testTimeout: 60_000, hookTimeout: 60_000 } },
      {
        test: {
          name: 'faults',
          include: ['test/faults/**/*.fault.test.ts'],
          globalSetup: ['test/faults/table.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // One file at a time; within a file the cases run side by side (describe.concurrent).
          fileParallelism: false,
        },
      },
      { test: { name: 'infra', include: ['test/**/*.synth.test.ts'], testTimeout: 600_000 } },
      {
        test: {
          name: 'lab',
          include: ['test/**/*.lab.test.ts'],
          testTimeout: 300_000,
          hookTimeout: 300_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          name: 'accept',
          include: ['test/accept/**/*.accept.test.ts'],
          testTimeout: 600_000,
          hookTimeout: 120_000,
          // The lab file and the loopback file side by side (namespaces vs 127.0.0.1, each its
          // own clean tree and data directory): the suite takes the longer of the two.
          maxWorkers: 2,
        },
      },
    ],
  },
});
