import { defineConfig } from 'vitest/config';

// Suites split by speed and by what they need (STYLE.md 9):
// unit: no network; integration: local driver end to end on loopback; infra: cdk synth;
// lab: network namespaces (root).
export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 30_000 } },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          testTimeout: 300_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      { test: { name: 'infra', include: ['test/infra/**/*.test.ts'], testTimeout: 600_000 } },
      {
        test: {
          name: 'lab',
          include: ['test/lab/**/*.test.ts'],
          testTimeout: 300_000,
          hookTimeout: 300_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
