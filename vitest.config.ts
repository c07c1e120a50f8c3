import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const path = (relative: string) => fileURLToPath(new URL(relative, import.meta.url))
const src = path("./src")

export default defineConfig({
  resolve: {
    // Tests, examples and the workspace packages import the packages by name, as users do; the names
    // resolve to the sources, as tsconfig.json's paths do for tsc and tsx.
    alias: [
      { find: /^effect-informers$/, replacement: `${src}/index.ts` },
      { find: /^effect-informers\/(.*)$/, replacement: `${src}/$1.ts` },
      { find: /^@effect-informers\/testkit$/, replacement: path("./packages/testkit/src/index.ts") },
      { find: /^@effect-informers\/testkit\/(.*)$/, replacement: `${path("./packages/testkit/src")}/$1.ts` }
    ]
  },
  test: {
    include: ["test/**/*.test.ts", "examples/**/*.test.ts", "packages/*/test/**/*.test.ts"],
    sequence: { concurrent: false },
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Two test files at a time on a 2-core machine (vitest's default is cores - 1 = 1): most of the suite's
    // time is spent waiting on child processes, servers and timers, not on a core; sequential, vitest alone
    // took 12 min for this suite, two at a time 8 min, every test passing either way
    maxWorkers: 2
  }
})
