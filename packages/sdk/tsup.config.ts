import { defineConfig } from 'tsup';

export default defineConfig({
  // The webhooks entry is separate so that a receiver loads no client code.
  entry: ['src/index.ts', 'src/webhooks.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  // openapi-fetch's CommonJS build sets `exports.default` without `__esModule`, so a require()d
  // copy would hand our CJS build the module object instead of the function. Bundling its ES
  // module source sidesteps that; the package stays a dependency for its types.
  noExternal: ['openapi-fetch'],
});
