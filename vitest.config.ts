import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const src = fileURLToPath(new URL("./src", import.meta.url))

export default defineConfig({
  resolve: {
    // Examples import the package by name, as users do.
    alias: [
      { find: /^effect-informers$/, replacement: `${src}/index.ts` },
      { find: /^effect-informers\/(.*)$/, replacement: `${src}/$1.ts` }
    ]
  },
  test: {
    include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
    sequence: { concurrent: false },
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks"
  }
})
