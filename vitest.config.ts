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
    pool: "forks"
  }
})
